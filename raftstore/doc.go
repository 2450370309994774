// Package raftstore runs bloomkv under github.com/hashicorp/raft: Store is
// raft's LogStore and StableStore on a bloomkv DB (where raft-boltdb puts
// them in a bbolt file), and FSM is a replicated key-value state machine kept
// in a bloomkv DB. It is a module of its own, so that bloomkv's other users
// never download raft.
//
//	store, _ := raftstore.Open("node1/raft", nil)      // logs and stable keys
//	fsm, _ := raftstore.OpenFSM("node1/state", nil)    // the replicated state
//	snaps, _ := raft.NewFileSnapshotStore("node1", 2, os.Stderr)
//	r, _ := raft.NewRaft(config, fsm, store, store, snaps, transport)
//	r.Apply(raftstore.AppendSet(nil, []byte("k"), []byte("v")), time.Second)
//
// cmd/bloomkv-node serves the FSM over HTTP as one node of a cluster
// (package node, its API's types in package api), package client is its Go
// client, and examples/counter a program that uses it.
//
// # Store: key layout
//
// A Store's keys live in two key spaces of its DB, which may hold other
// keys beside them:
//
//	"raft/log/"    + index (8 bytes, big-endian)  one raft.Log, encoded below
//	"raft/stable/" + key                          a StableStore value (SetUint64: 8 bytes, big-endian)
//
// Big-endian indexes sort as numbers, so the log is one contiguous key range
// in index order. The smallest and largest index are found by one seek at
// each end when the Store opens, then kept in memory by every write, so
// FirstIndex and LastIndex cost an atomic load.
//
// A log entry's value (its Index is the key's):
//
//	format      1 byte   1
//	Term        uvarint
//	Type        1 byte   raft.LogType
//	Data        uvarint length, bytes
//	Extensions  uvarint length, bytes
//	AppendedAt  1 byte   0: the zero time; 1: followed by
//	            varint   Unix seconds, uvarint nanoseconds
//
// StoreLogs writes all its entries in one bloomkv batch, synced: after a
// crash either all are there or none. DeleteRange writes one synced range
// tombstone (bloomkv's DB.DeleteRange) over the range's keys, however many
// entries it holds: a log compaction or truncation is one atomic write. Get and GetUint64 of a key never
// Set return ErrKeyNotFound, whose text "not found" is what raft looks for.
//
// # FSM: commands
//
// A command, the Data of a raft.Log applied by the FSM, is a sequence of
// ops, applied in order in one atomic batch (AppendSet, AppendDelete and
// AppendCompare build them):
//
//	's'  uvarint key length, key, uvarint value length, value   set key to value
//	'd'  uvarint key length, key                                delete key
//	'c'  uvarint key length, key, 0                             condition: key is absent
//	'c'  uvarint key length, key, 1, uvarint length, value      condition: key holds value
//
// A command with conditions applies its sets and deletes only if all its
// conditions hold in the state left by the entries before it (wherever they
// stand in the command); otherwise it changes nothing and its response is
// ErrCompareFailed. The FSM decides them in log order, so every node decides
// alike: a compare-and-set is one command, a condition and a set. Commands
// without a 'c' op are the format of every earlier version, applied as
// before; a node of a version without 'c' responds ErrBadCommand to one
// with it, and changes nothing, so a cluster uses conditions once all its
// nodes have this version.
//
// # FSM: directory and state DB
//
//	DIR/STATE              "state-NNNNNN\n": the current state directory
//	DIR/state-NNNNNN/      a bloomkv DB:  "a"        the applied index (8 bytes, big-endian)
//	                                      "k" + key  the user's key and its value
//	DIR/snapshot-NNNNNN/   a checkpoint of the state DB, from Snapshot to Release
//
// Each batch of applied entries carries the index of the last one, so the
// applied index always describes the state beside it. Restore builds the
// next state-NNNNNN from the snapshot stream, syncs it, renames a new STATE
// over the old and removes the old directory: a crash leaves either whole
// state, never a mix (see OpenFSM). A snapshot-NNNNNN directory a crash
// left between Snapshot and Release is removed by the next OpenFSM, once it
// is proven a checkpoint: a directory of regular files named as a bloomkv
// DB's. One named so that holds anything else makes OpenFSM refuse the
// FSM directory untouched.
//
// # FSM: snapshot stream
//
// FSM.Snapshot takes a bloomkv checkpoint of the state DB (DB.Checkpoint:
// a consistent copy in a directory of its own, its tables hard-linked) at
// the applied index; Persist opens it read-only and streams its live pairs
// while entries go on being applied, and Release removes it. The stream,
// not the checkpoint's files, is what raft ships, so a follower running
// another bloomkv version restores it:
//
//	magic     8 bytes  "bkvfsm\x00\x01" (the last byte the version)
//	applied   uvarint  the applied index of the state
//	pairs     per key in key order: uvarint key length + 1, key,
//	          uvarint value length, value
//	end       1 byte   0 (a key length + 1 of zero)
//	count     uvarint  the number of pairs
//	checksum  4 bytes  CRC-32C (Castagnoli), big-endian, of every byte before it
//
// Restore refuses, with an error wrapping bloomkv.ErrCorruption and the
// offset, a stream that is cut short, too long, miscounted or does not
// match its checksum, and keeps the old state; a stream whose reader fails
// keeps it too, with the reader's error (a failed transfer is no proof of a
// corrupt snapshot).
package raftstore
