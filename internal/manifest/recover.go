package manifest

import (
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"strings"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/record"
	"github.com/bloomkv/bloomkv/vfs"
)

// ErrNoManifest is wrapped by Recover's error when dir has no CURRENT file:
// there is no database there (yet). The error also wraps fs.ErrNotExist. It
// is never returned for a CURRENT that names a missing manifest: that is
// corruption, and creating a new database over it would lose the old one.
var ErrNoManifest = errors.New("manifest: no CURRENT file")

// maxCurrentLen bounds what Recover reads of CURRENT; a longer file cannot
// hold a manifest name.
const maxCurrentLen = 64

// Recovered is what Recover found: the state the manifest records, and
// where.
type Recovered struct {
	State
	// ManifestFileNum is the number of the manifest CURRENT names. Every
	// other manifest in the directory is obsolete.
	ManifestFileNum uint64
	// Edits is the number of edits replayed, the snapshot included.
	Edits int
	// TornTail reports that the manifest ended in a torn tail, an edit a
	// crash cut short, which was ignored: its Append never returned nil.
	TornTail bool
}

// Recover reads CURRENT in dir and replays the manifest it names. It returns
// an error wrapping ErrNoManifest if there is no CURRENT, and one wrapping
// base.ErrCorruption, naming the file and offset, if CURRENT is malformed or
// names a missing manifest, or the manifest is damaged before its end, lacks
// its first record, or holds an edit that does not apply. A torn tail is
// not an error (see Recovered.TornTail).
//
// The manifest is not reopened for appending: a DB continues with Create of
// a new manifest holding the recovered state. It must also move
// NextFileNumber past the number of any WAL it finds, since WALs are
// created without a manifest edit.
func Recover(fs vfs.FS, dir string) (Recovered, error) {
	num, err := readCurrent(fs, dir)
	if err != nil {
		return Recovered{}, err
	}
	path := MakeFilepath(fs, dir, FileTypeManifest, num)
	f, err := fs.Open(path)
	if errors.Is(err, iofs.ErrNotExist) {
		return Recovered{}, base.Corruptf(MakeFilepath(fs, dir, FileTypeCurrent, 0), 0,
			"names %s, which does not exist", MakeFilename(FileTypeManifest, num))
	}
	if err != nil {
		return Recovered{}, fmt.Errorf("manifest: %w", err)
	}
	defer f.Close()

	rec := Recovered{ManifestFileNum: num}
	r := record.NewReader(f, path)
	rp := newReplay(State{})
	for {
		record, err := r.Next()
		if err == io.EOF {
			break
		}
		var ce *base.CorruptionError
		if errors.As(err, &ce) {
			return Recovered{}, err
		}
		if err != nil {
			return Recovered{}, fmt.Errorf("manifest: reading %s: %w", path, err)
		}
		e, err := Decode(record)
		if err != nil {
			return Recovered{}, base.Corruptf(path, r.Offset(), "edit %d: %s", rec.Edits, reason(err))
		}
		if err := rp.apply(&e); err != nil {
			return Recovered{}, base.Corruptf(path, r.Offset(), "edit %d does not apply: %s", rec.Edits, reason(err))
		}
		rec.Edits++
	}
	_, rec.TornTail = r.TornTail()
	if rec.Edits == 0 {
		// CURRENT names a manifest only once its first record is durable.
		return Recovered{}, base.Corruptf(path, 0, "no intact edit, though CURRENT names it")
	}
	if rec.State, err = rp.finish(); err != nil {
		return Recovered{}, base.Corruptf(path, r.Offset(), "the version after edit %d: %s", rec.Edits-1, reason(err))
	}
	if rec.NextFileNumber <= num {
		return Recovered{}, base.Corruptf(path, 0, "next file number %d is not above the manifest's own number", rec.NextFileNumber)
	}
	return rec, nil
}

// readCurrent returns the number of the manifest CURRENT names. CURRENT
// holds "MANIFEST-NNNNNN\n"; anything else is corruption, including a
// missing newline, which would mean CURRENT was written other than whole.
func readCurrent(fs vfs.FS, dir string) (uint64, error) {
	path := MakeFilepath(fs, dir, FileTypeCurrent, 0)
	f, err := fs.Open(path)
	if errors.Is(err, iofs.ErrNotExist) {
		return 0, fmt.Errorf("%w: %w", ErrNoManifest, err)
	}
	if err != nil {
		return 0, fmt.Errorf("manifest: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCurrentLen+1))
	if err != nil {
		return 0, fmt.Errorf("manifest: reading %s: %w", path, err)
	}
	if len(b) > maxCurrentLen {
		return 0, base.Corruptf(path, 0, "longer than %d bytes, too long for a manifest name", maxCurrentLen)
	}
	if len(b) == 0 || b[len(b)-1] != '\n' {
		return 0, base.Corruptf(path, 0, "contents %q do not end in a newline", b)
	}
	t, num, ok := ParseFilename(string(b[:len(b)-1]))
	if !ok || t != FileTypeManifest {
		return 0, base.Corruptf(path, 0, "contents %q do not name a manifest", b)
	}
	return num, nil
}

// reason is an error's message without its package prefix, to serve as the
// reason of a corruption error, which has its own.
func reason(err error) string {
	var ee *EditError
	if errors.As(err, &ee) {
		return "bad version edit: " + ee.Reason
	}
	return strings.TrimPrefix(err.Error(), "manifest: ")
}
