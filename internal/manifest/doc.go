// Package manifest is the metadata of bloomkv's LSM tree and its durable
// log: which tables make up each level (a Version), the changes that move
// the tree from one version to the next (a VersionEdit), and the manifest
// file that records those changes so that Open can rebuild the tree after a
// crash. It also names the files of a DB directory (MakeFilename,
// ParseFilename).
//
// # Versions
//
// A Version is an immutable snapshot of the tree's tables, NumLevels (7)
// levels of FileMetadata. L0 holds flushed memtables, whose key ranges may
// overlap; a point read visits them newest first. L1 and deeper are each one
// sorted run: tables ordered by key, no user key in two tables, so a read
// looks at most at one table per level, found by binary search. The DB's
// read path does that search over its own open tables (package bloomkv);
// Version.Overlapping is the range form, over a Version's metadata, that
// compaction uses.
//
// INVARIANT: L0 is ordered by LargestSeqNum descending, ties by FileNum
// descending.
//
// INVARIANT: two L0 tables whose key ranges overlap have disjoint seqnum
// ranges, the earlier one in L0 order holding the newer ones; so the first
// version of a key found in L0 order is the newest.
//
// INVARIANT: in L1 and deeper, tables are sorted by smallest key and each
// table's largest user key is below the next table's smallest user key.
//
// INVARIANT: a file number is in at most one level of a version; and every
// FileMetadata passes Validate (bounds in order, seqnums covering the
// bounds').
//
// A Builder applies edits to a version and checks them: a deleted table must
// be in the version at the stated level, an added one must not be in it
// yet, and the result must keep the level invariants. An edit costs what
// it changes, not the tree: each version keeps its tables by file number
// in a B-tree that the next version's Builder clones copy-on-write, a
// level an edit leaves alone is shared with the version before, and a
// level it changes is that level's slice spliced, checked only beside the
// tables added; replaying a manifest goes through one Builder, so its cost
// is linear in the edits, with one sort of the tables left. State adds the
// manifest's counters — LogNumber, NextFileNumber, LastSeqNum — and their
// checks.
//
// INVARIANT: the counters never go back; every file number in use (tables,
// the log number, the manifest's own) is below NextFileNumber; and every
// table's seqnums are at most LastSeqNum. So a reopened DB, which also moves
// its counter past every numbered file it finds (WALs are created without
// an edit), never hands out a file number or a seqnum twice.
//
// # Version edits
//
// An edit is encoded as a sequence of fields, each a tag (uvarint) followed
// by its body. The counters are optional and appear at most once; a
// counter that is zero is "unchanged" and is not written.
//
//	tag  field            body
//	 1   LogNumber        uvarint, nonzero
//	 2   NextFileNumber   uvarint, nonzero
//	 3   LastSeqNum       uvarint, nonzero
//	 4   DeletedFile      level uvarint | file number uvarint, nonzero
//	 5   NewFile          see below: a table with a Bloom filter, or none
//	 6   NewFileFilter    a NewFile body | filter family (1 byte; 0, none,
//	                      only with bits/key 0) | its parameter (float64,
//	                      8 bytes LE) | entries (uvarint)
//	 7   NewFileBlocks    a NewFileFilter body | the data blocks'
//	                      compression (1 byte, nonzero: 1 none, 2 snappy,
//	                      3 zstd, as package sstable numbers them)
//	 8   NewFileBlobs     a NewFileBlocks body | references (uvarint,
//	                      nonzero) | per reference, in file-number order:
//	                      blob file number uvarint | bytes uvarint
//	 9   NewBlobFile      blob file number uvarint, nonzero | size |
//	                      values | value bytes (uvarints)
//	10   MergerName       length uvarint, in [1, 1024] | the merge
//	                      operator's name (bloomkv.Merger.Name), at most
//	                      once per edit; recorded once per DB, never changed
//	11   NewFileIngest    a NewFileBlocks body | global seqnum (uvarint,
//	                      nonzero): a table the DB ingested, whose every
//	                      entry reads at that seqnum, the file's own
//	                      seqnums ignored; its minseq and maxseq equal it,
//	                      and it has no blob references
//	 0, 12…  reserved or unknown: rejected as corruption
//
// A NewFile body, with the keys as internal keys (user key ‖ 8-byte
// trailer, see package base), each preceded by its length:
//
//	+-------+---------+------+------+----------+------+----------+--------+--------+-----------+
//	| level | filenum | size | slen | smallest | llen | largest  | minseq | maxseq | bits/key  |
//	+-------+---------+------+------+----------+------+----------+--------+--------+-----------+
//	  uvarint fields, except smallest and largest (slen and llen bytes,
//	  each ≥ 8) and bits/key (a float64, IEEE 754 bits, 8 bytes little-endian)
//
// An ingested table (FileMetadata.GlobalSeqNum) is a file written outside
// the DB by package sstable's Writer, linked or copied into the
// directory and never rewritten: its keys carry whatever seqnums it was
// written with (0, typically), so the seqnum the DB assigned it lives in
// the manifest, not in the file, and the reader applies it
// (sstable.ReaderOptions.GlobalSeqNum). Rewriting the file's properties
// instead, as RocksDB once did, would change the user's file through a
// hard link. Its field:
//
//	+---------+----------------------------------------------+---------+
//	| tag 11  | NewFileBlocks body: a NewFile body | family  | global  |
//	|         | (1) | param (8, LE) | entries | compression (1) | seqnum  |
//	+---------+----------------------------------------------+---------+
//	  uvarint                                                  uvarint, nonzero
//
// with minseq and maxseq both the global seqnum G and the bounds'
// trailers carrying G (the file's keys may say otherwise).
//
// A table's blob references (FileMetadata.BlobRefs) are the bytes of each
// blob file its handles point into. A version holds the blob files its
// tables reference, and no others: a blob file comes in with the edit
// that adds it (NewBlobFile, before the tables of the same edit that
// reference it) and leaves by itself once the last table referencing it
// is deleted, so no tag deletes one. Its live bytes are the sum of its
// tables' references, its dead bytes the rest of its value bytes.
//
// INVARIANT: every reference of a version's tables names a blob file of
// the version, and a blob file's live bytes never exceed its value bytes.
//
// Encode writes the counters in tag order, then the merger name, then the
// deleted files, then
// the new blob files, then the new files. Decode accepts fields in any order but rejects, as corruption
// (base.ErrCorruption): a truncated field, a uvarint over 64 bits, tag 0 or
// an unknown tag (it might change the edit's meaning), a repeated counter,
// an explicit zero, a level ≥ NumLevels, and a new file that fails
// Validate. Decode never panics and never reads outside its input. It does
// not know where the edit came from; the manifest reader adds the file and
// the record's offset. Bit flips are the record format's job: each edit is
// one record of the log format of package record, under a CRC.
//
// The tags are this package's own: the framing is LevelDB's log format,
// but an edit is not LevelDB's encoding.
//
// # The manifest and CURRENT
//
// A manifest, MANIFEST-NNNNNN, is a log (package record) of edits. Its first
// record is a snapshot edit, which builds the whole state from nothing; each
// later record is one change. CURRENT holds the name of the live manifest
// and a newline.
//
// Create writes a new manifest: the snapshot record, sync, sync the
// directory (so the manifest's name is durable); then it writes
// "MANIFEST-NNNNNN\n" to NNNNNN.tmp, syncs it, renames it over CURRENT and
// syncs the directory. Log.Append writes one edit and syncs before
// returning. Log.Rotate is Create of a manifest holding a Log's state, which
// then retires the Log. Recover reads CURRENT and replays its manifest.
//
// The DB uses these as follows:
//
//   - Open of an empty directory: Recover fails with ErrNoManifest; Create
//     with the first state.
//   - Open of an existing DB: Recover; then Create of a new manifest with
//     the SnapshotEdit of the recovered state plus the L0 tables the WALs
//     were replayed into (after moving NextFileNumber past every numbered
//     file found, WALs included). The old manifest may end in a torn tail,
//     and an edit appended after it would be intact data after damage, so
//     it is never appended to again; once Create returns, it is obsolete
//     and deleted.
//   - Flush: Log.Append of an edit that adds the L0 table and sets
//     LogNumber (retiring the flushed WAL), NextFileNumber and LastSeqNum;
//     compaction: an edit that deletes the inputs and adds the outputs and
//     sets the same counters.
//   - Rotation, while the DB is open: after an edit that leaves the Log
//     RotationDue(Options.MaxManifestFileSize) — at least that long, with
//     its edits since the snapshot at least as long as the snapshot, and
//     not within the growth a failed rotation put the next attempt off by
//     — Log.Rotate to a manifest numbered from the DB's file counter, under
//     the lock that serializes appends; on success the DB deletes the old
//     manifest. A failure before the rename over CURRENT leaves the old
//     Log live, and the DB goes on with it; one after it breaks the old Log
//     and becomes the DB's sticky error (see Log.Rotate).
//
// INVARIANT: CURRENT names a manifest only after that manifest's first
// record and directory entry are durable, and CURRENT is only ever replaced
// by a rename; so after a crash at any point CURRENT names a manifest whose
// snapshot is complete — the old one or the new one.
//
// INVARIANT: an edit is part of Log.State only once its Append returned nil,
// and then it is durable. Recover returns the state of a prefix of the
// appended edits that includes every acknowledged one: an edit cut short by
// a crash is a torn tail, dropped, never acknowledged.
//
// INVARIANT: once a write or sync of a Log fails, it writes nothing more
// (as in package record), so the manifest never holds intact edits after a
// damaged one that a crash would reveal as mid-log corruption.
//
// INVARIANT: at most one Log takes appends, and its manifest is the one
// CURRENT durably names: after a Rotate the new Log on success, the old one
// after a failure before the rename, neither after a failure after it. So
// no acknowledged edit is in a manifest that a crash could leave CURRENT
// not naming.
//
// # Errors
//
// Damage — a malformed CURRENT, a CURRENT naming a missing manifest, a
// manifest damaged before its end, an edit that does not decode or apply —
// is an error wrapping base.ErrCorruption that names the file and offset
// (base.CorruptionError). A missing CURRENT is ErrNoManifest, so that the
// DB can tell "no database here" from "a database it cannot read". Edits
// the DB builds that do not apply are rejected with a plain error before
// anything is written.
package manifest
