// Package vfs is the file-system seam of bloomkv: every byte the store reads or
// writes and every directory entry it creates, renames or removes goes through
// an FS, so that tests can substitute a file system that counts I/O, fails on
// demand, or forgets what a crash would forget.
//
// # Implementations
//
//   - Default (NewOS): the operating system's file system, with real fsync.
//   - NewMem: an in-memory file system that tracks what is durable and can
//     produce the state a crash would leave behind (MemFS.CrashClone).
//   - NewCounting: wraps an FS and counts reads, writes and syncs per file kind
//     (table, wal, manifest, other); the I/O-avoided numbers come from it.
//   - NewInjecting: wraps an FS and fails chosen operations with ErrInjected.
//
// The wrappers compose: NewInjecting(NewCounting(NewMem(), nil), policy).
//
// # Durability
//
// The contract every FS follows, and the one the store is written against:
//
//   - Bytes written to a file are durable once File.Sync on that file returns
//     nil — the file's contents, not its name.
//   - A directory entry made by Create, Rename, Remove, MkdirAll or Lock is
//     durable once SyncDir of the directory holding the entry returns nil. A
//     rename between two directories needs SyncDir of both.
//   - Nothing else is promised. In particular, writing then closing a file does
//     not make it durable, and a failed Sync leaves the unsynced data in an
//     unknown state: the caller must treat the file as lost, not retry the
//     Sync and assume success.
//
// So a new file is made durable by: Create, Write, Sync, Close, SyncDir(dir);
// and a file is atomically replaced by: write a temporary file, Sync it,
// Rename it over the target, SyncDir(dir).
//
// MemFS implements exactly this contract and no more; its crash model is
// documented on MemFS.CrashClone. Real file systems often keep more than the
// contract promises, which is why CrashOptions can keep part of the unsynced
// data.
//
// # Invariants
//
// INVARIANT: a MemFS crash (CrashClone with zero CrashOptions) keeps exactly
// what the durability contract promises: everything made durable, nothing
// else. Code that survives it relies on no more than the contract.
//
// INVARIANT: a wrapper that injects nothing behaves exactly as the FS it
// wraps — same results, same errors, same effects — so that counting or
// fault injection never changes what is being measured or tested.
//
// # Errors
//
// Operations report failures the way package os does (*fs.PathError and
// *os.LinkError wrapping fs.ErrNotExist, fs.ErrExist, fs.ErrClosed or a
// syscall.Errno), so callers test them with errors.Is whichever FS is in use.
// Two sentinels are this package's own: ErrLocked and ErrInjected.
package vfs
