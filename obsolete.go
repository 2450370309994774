package bloomkv

import (
	"github.com/bloomkv/bloomkv/internal/manifest"
)

// Obsolete files. A table or blob file is obsolete once no version a reader
// holds lists it (unrefVersionLocked), a WAL once a manifest edit retires
// it, a manifest once CURRENT names a newer one. Open deletes what a crash
// left obsolete (removeObsoleteFiles), itself, before it returns; the
// running DB hands what its own flushes, compactions and rotations make
// obsolete to its deleter (deleteObsolete), which removes it with no lock
// of the DB held, and so does a failed job with its own outputs, which
// nothing lists. Deletion is best-effort: a file that fails to go is found
// again by the next Open.

// removeFile deletes the file of type t and number num, counts it, and
// reports it to the EventListener. job is the job that made it obsolete, 0
// for none. The caller, Open or the deleter, holds no lock of the DB's:
// the unlink may take milliseconds, and the listener may call the DB.
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

// deleteObsolete hands the file of type t and number num, which nothing
// can need any more (see deleter's invariant), to the deleter: a file no
// version with references lists, a retired WAL or manifest, or a failed
// job's output. job is as removeFile's. d.mu or manifestMu may be held.
func (d *DB) deleteObsolete(job int, t manifest.FileType, num uint64) {
	d.deleter.add(obsoleteFile{job: job, t: t, num: num})
}

// removeObsolete removes f for the deleter: the file, or for a WAL entry
// with below set every WAL numbered below f.num. No lock of the DB is
// held.
func (d *DB) removeObsolete(f obsoleteFile) {
	if !f.below {
		d.removeFile(f.job, f.t, f.num)
		return
	}
	names, err := d.fs.List(d.dirname)
	if err != nil {
		return // tried again after the next flush
	}
	for _, name := range names {
		if t, num, ok := manifest.ParseFilename(name); ok && t == manifest.FileTypeWAL && num < f.num {
			d.removeFile(0, t, num)
		}
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

// removeObsoleteWALsLocked has the deleter delete the WALs older than
// logNum: their memtables are in tables the manifest records, and no
// reader reads a WAL. d.mu is held.
func (d *DB) removeObsoleteWALsLocked(logNum uint64) {
	d.deleter.add(obsoleteFile{t: manifest.FileTypeWAL, num: logNum, below: true})
}

// removeOrphansLocked has the deleter delete the tables and blob files of
// manifest edits whose append failed (a blob file an edit adds is always
// new), once a new manifest without those edits is CURRENT: no crash can
// find them recorded any more. A table some version lists (a trivial move's
// input) is not an orphan. d.mu is held.
func (d *DB) removeOrphansLocked() {
	for _, num := range d.mu.orphans {
		if _, live := d.mu.tables[num]; !live {
			d.deleteObsolete(0, manifest.FileTypeTable, num)
		}
	}
	for _, num := range d.mu.blobOrphans {
		d.deleteObsolete(0, manifest.FileTypeBlob, num)
	}
	d.mu.orphans, d.mu.blobOrphans = nil, nil
}
