package bloomkv

import (
	"github.com/bloomkv/bloomkv/internal/manifest"
)

// Obsolete files. A table or blob file is obsolete once no version a
// reader holds lists it (unrefVersionLocked), a WAL once a manifest edit retires it, a manifest
// once CURRENT names a newer one. Open deletes what a crash left obsolete
// (removeObsoleteFiles), the running DB what its own flushes, compactions
// and rotations make obsolete. Deletion is best-effort: a file that fails
// to go is found again by the next Open.

// removeFile deletes the file of type t and number num, counts it, and
// reports it to the EventListener. job is the job that made it obsolete, 0
// for none.
func (d *DB) removeFile(job int, t manifest.FileType, num uint64) {
	path := manifest.MakeFilepath(d.fs, d.dirname, t, num)
	err := d.fs.Remove(path)
	if err == nil {
		d.counters.obsoletePurged.Add(1)
	}
	switch t {
	case manifest.FileTypeTable:
		d.events.tableDeleted(TableDeleteInfo{JobID: job, Path: path, FileNum: num, Err: err})
	case manifest.FileTypeBlob:
		d.events.blobDeleted(TableDeleteInfo{JobID: job, Path: path, FileNum: num, Err: err})
	case manifest.FileTypeWAL:
		d.events.walDeleted(WALDeleteInfo{Path: path, FileNum: num, Err: err})
	}
}

// removeObsoleteFiles deletes, after a successful recovery, the files no
// longer needed: older manifests, WALs before walNum, tables and blob
// files the version does not list, and CURRENT's temporary files.
func (d *DB) removeObsoleteFiles(names []string, walNum uint64) {
	live := make(map[uint64]bool)
	for num := range d.mu.current.FileNums() {
		live[num] = true
	}
	for _, name := range names {
		t, num, ok := manifest.ParseFilename(name)
		if !ok {
			continue
		}
		obsolete := false
		switch t {
		case manifest.FileTypeManifest:
			obsolete = num != d.manifest.FileNum()
		case manifest.FileTypeWAL:
			obsolete = num < walNum
		case manifest.FileTypeTable:
			obsolete = !live[num]
		case manifest.FileTypeBlob:
			_, listed := d.mu.current.BlobFile(num)
			obsolete = !listed
		case manifest.FileTypeTemp:
			// Only CURRENT's own: a temporary file holding what CURRENT
			// was to say, or a crash's prefix of it.
			obsolete = leftoverOfCreation(d.fs, d.fs.PathJoin(d.dirname, name), t, num)
		}
		if obsolete {
			d.removeFile(0, t, num)
		}
	}
}

// removeObsoleteWALsLocked deletes the WALs older than logNum: their
// memtables are in tables the manifest records. No reader reads a WAL.
func (d *DB) removeObsoleteWALsLocked(logNum uint64) {
	names, err := d.fs.List(d.dirname)
	if err != nil {
		return // tried again after the next flush
	}
	for _, name := range names {
		if t, num, ok := manifest.ParseFilename(name); ok && t == manifest.FileTypeWAL && num < logNum {
			d.removeFile(0, t, num)
		}
	}
}

// removeOrphansLocked deletes the tables and blob files of manifest edits
// whose append failed (a blob file an edit adds is always new), once a new manifest without those edits is CURRENT: no crash can
// find them recorded any more. A table some version lists (a trivial move's
// input) is not an orphan. d.mu is held.
func (d *DB) removeOrphansLocked() {
	for _, num := range d.mu.orphans {
		if _, live := d.mu.tables[num]; !live {
			d.removeFile(0, manifest.FileTypeTable, num)
		}
	}
	for _, num := range d.mu.blobOrphans {
		d.removeFile(0, manifest.FileTypeBlob, num)
	}
	d.mu.orphans, d.mu.blobOrphans = nil, nil
}
