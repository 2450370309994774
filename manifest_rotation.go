package bloomkv

import (
	"fmt"

	"github.com/bloomkv/bloomkv/internal/manifest"
)

// Manifest rotation. Every flush and compaction appends an edit to the live
// manifest, so without rotation it would grow for as long as the DB stays
// open (Open starts a fresh one). After an edit that leaves it due
// (manifest.Log.RotationDue with Options.MaxManifestFileSize), the DB
// writes a new manifest whose one record is a snapshot of the state, makes
// CURRENT name it, and deletes the old one: manifest.Log.Rotate, under
// manifestMu, so that it takes turns with the flushes' and compactions'
// appends and the snapshot holds every acknowledged edit.
//
// Failures follow manifest.Create's contract. One before the rename over
// CURRENT changes nothing: CURRENT names the old manifest, still complete
// and live, and the DB goes on with it, logging a warning; the next attempt
// waits until the manifest has grown by another eighth, so a failing disk
// is not asked for a rotation (nor the log told of one) at every edit. One after the rename leaves CURRENT naming either
// manifest after a crash, both holding the same state; no further edit is
// safe, so the old Log refuses every append and the error becomes the DB's
// sticky background error.
//
// INVARIANT: the new manifest's number comes from d.mu.nextFileNum, the
// counter WALs and tables are numbered from, so it is no other file's; and
// the snapshot records the counter after it, so no later file takes it.
//
// INVARIANT: the old manifest is deleted only after Rotate returned nil,
// when CURRENT durably names the new one.

const (
	// defaultMaxManifestFileSize is Options.MaxManifestFileSize's default;
	// see there why.
	defaultMaxManifestFileSize = 16 << 20
	// minMaxManifestFileSize is the smallest MaxManifestFileSize: small
	// enough that a test rotates every few edits, large enough that a
	// value mistaken for a count of megabytes is refused.
	minMaxManifestFileSize = 1 << 10
)

// maybeRotateManifestLocked rotates the manifest if it is due; called after
// each edit that applyEditLocked appended and installed. d.mu is held, and
// released while the new manifest is written; manifestMu is taken after
// d.mu (the lock order) and released before d.mu is taken back.
//
// A failure before the rename is only logged, at Warn: the DB is as it
// was, and retries later. A failure after it is made the sticky d.mu.bgErr
// (fatalLocked), which Resume cannot clear; the edit that triggered the
// rotation is durable either way, in both manifests.
func (d *DB) maybeRotateManifestLocked() {
	d.manifestMu.Lock()
	old := d.manifest
	if d.mu.bgErr != nil || !old.RotationDue(d.opts.MaxManifestFileSize) {
		d.manifestMu.Unlock()
		return
	}
	num := d.mu.nextFileNum
	d.mu.nextFileNum++
	nextFileNum := d.mu.nextFileNum
	d.mu.Unlock()

	l, err := old.Rotate(num, nextFileNum)
	if err == nil {
		d.manifest = l
	}
	// Read under manifestMu: after a failure before the rename, old takes
	// appends again as soon as it is released.
	sticky := err != nil && old.Err() != nil
	d.manifestMu.Unlock()
	if err == nil {
		d.events.manifestCreated(ManifestCreateInfo{
			Path:    manifest.MakeFilepath(d.fs, d.dirname, manifest.FileTypeManifest, num),
			FileNum: num,
		})
		// Obsolete now; a failed removal leaves it for the next Open.
		d.deleteObsolete(0, manifest.FileTypeManifest, old.FileNum())
	} else if !sticky {
		// One line per attempt, and attempts are an eighth of growth apart.
		d.events.log.Warn("bloomkv: manifest rotation failed; the old manifest stays live and rotation is retried as it grows",
			"manifest", old.FileNum(), "err", err)
	}

	d.mu.Lock()
	if sticky { // a failure after the rename: see manifest.Log.Rotate
		d.fatalLocked("manifest", fmt.Errorf("bloomkv: manifest: %w", err))
	}
}
