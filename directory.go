package bloomkv

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"slices"
	"strings"

	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/record"
	"github.com/bloomkv/bloomkv/vfs"
)

// The directory is the user's: Open deletes or changes only files it can
// prove are its own. Proof is CURRENT naming a manifest that recovers (the
// directory is then a bloomkv DB, and its obsolete files are found from the
// manifest), or, in a directory without CURRENT, the contents of what an
// interrupted creation of a new DB leaves behind. Anything else in a
// directory without CURRENT — a table, a WAL, a manifest that records data,
// any file bloomkv does not name — makes Open refuse the directory before it
// writes a byte, the LOCK file included.

// IsDBFileName reports whether name, a base name, is one bloomkv gives a
// file of a DB directory: CURRENT, LOCK, MANIFEST-NNNNNN, NNNNNN.log,
// NNNNNN.sst, NNNNNN.blob or NNNNNN.tmp, with NNNNNN a file number as
// bloomkv writes it (six digits, or more without a leading zero; never
// 0). Programs that
// copy, back up or clean up DB directories use it to tell a DB's files
// from anything else, as Open does.
func IsDBFileName(name string) bool {
	_, _, ok := manifest.ParseFilename(name)
	return ok
}

// dirState is what Open found in a DB directory before locking it.
type dirState struct {
	exists     bool     // the directory exists
	hasCurrent bool     // it holds CURRENT: a DB, or damage Recover reports
	names      []string // its entries
}

// probeDir looks at dir without changing anything.
func probeDir(fs vfs.FS, dir string) (dirState, error) {
	info, err := fs.Stat(dir)
	if errors.Is(err, iofs.ErrNotExist) {
		return dirState{}, nil
	}
	if err != nil {
		return dirState{}, err
	}
	if !info.IsDir() {
		return dirState{}, fmt.Errorf("%s is not a directory", dir)
	}
	names, err := fs.List(dir)
	if err != nil {
		return dirState{}, err
	}
	current := manifest.MakeFilename(manifest.FileTypeCurrent, 0)
	return dirState{exists: true, hasCurrent: slices.Contains(names, current), names: names}, nil
}

// checkNewDBDir returns nil if a new DB may be created in dir, which holds
// names and no CURRENT: it holds nothing but a LOCK, lost+found (the root
// of a file system), and what an interrupted creation of a DB leaves (see
// leftoverOfCreation). Otherwise it returns an error wrapping ErrCorruption
// if dir holds files named as a DB's — a DB whose CURRENT is missing — or
// fs.ErrExist if it holds other files; either error names what it found.
func checkNewDBDir(fs vfs.FS, dir string, names []string) error {
	var dbFiles, others []string
	for _, name := range names {
		t, num, ok := manifest.ParseFilename(name)
		switch {
		case name == "lost+found" || ok && t == manifest.FileTypeLock:
		case ok && leftoverOfCreation(fs, fs.PathJoin(dir, name), t, num):
		case ok:
			dbFiles = append(dbFiles, name)
		default:
			others = append(others, name)
		}
	}
	if len(dbFiles) > 0 {
		return &markedError{
			msg: fmt.Sprintf("no CURRENT file, but a DB's files (%s): a DB whose CURRENT is lost? nothing in the directory was changed",
				listNames(dbFiles)),
			errs: []error{ErrCorruption},
		}
	}
	if len(others) > 0 {
		return &markedError{
			msg:  fmt.Sprintf("no DB (no CURRENT file), and not empty (%s): a new DB needs an empty or missing directory", listNames(others)),
			errs: []error{iofs.ErrExist},
		}
	}
	return nil
}

// markedError is an error with its own message that errors.Is matches
// against sentinels its message need not repeat.
type markedError struct {
	msg  string
	errs []error
}

func (e *markedError) Error() string   { return e.msg }
func (e *markedError) Unwrap() []error { return e.errs }

// listNames lists up to five names, and how many more there are.
func listNames(names []string) string {
	const most = 5
	if len(names) <= most {
		return strings.Join(names, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(names[:most], ", "), len(names)-most)
}

// leftoverOfCreation reports whether the file at path, of type t and number
// num in a directory without CURRENT, is provably what a crash in the
// middle of creating a new DB left: a manifest whose readable edits record
// no table (possibly cut short, or empty), or the temporary file CURRENT is
// written through, holding a prefix of "MANIFEST-<num>\n". Such a file
// holds no data, and the new DB's Open may delete it.
func leftoverOfCreation(fs vfs.FS, path string, t manifest.FileType, num uint64) bool {
	switch t {
	case manifest.FileTypeTemp:
		want := manifest.MakeFilename(manifest.FileTypeManifest, num) + "\n"
		got, ok := readSmallFile(fs, path, len(want))
		return ok && strings.HasPrefix(want, string(got))
	case manifest.FileTypeManifest:
		return manifestRecordsNoTable(fs, path)
	}
	return false
}

// readSmallFile returns the contents of the file at path, if it has at most
// limit bytes.
func readSmallFile(fs vfs.FS, path string, limit int) ([]byte, bool) {
	f, err := fs.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, int64(limit)+1))
	return b, err == nil && len(b) <= limit
}

// manifestRecordsNoTable reports whether the manifest at path reads as a
// bloomkv manifest, possibly cut short by a crash, whose edits add no table.
func manifestRecordsNoTable(fs vfs.FS, path string) bool {
	f, err := fs.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	r := record.NewReader(f, path)
	for {
		record, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return false
		}
		e, err := manifest.Decode(record)
		if err != nil || len(e.NewFiles) > 0 {
			return false
		}
	}
	// A torn tail is what a crash leaves; anything else is not ours. A
	// tail of zeros after the last record is a torn tail too.
	if off, torn := r.TornTail(); torn {
		return tailIsZeros(fs, path, off)
	}
	return true
}

// tailIsZeros reports whether the file at path holds only zero bytes from
// off on: what a crash leaves of a record whose bytes never reached the disk
// (a file extended, but not written), as opposed to foreign bytes.
func tailIsZeros(fs vfs.FS, path string, off int64) bool {
	f, err := fs.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return false
	}
	// A crash cuts a manifest's first record short at most: its tail is
	// one record, at most a few blocks.
	const most = 1 << 20
	n := info.Size() - off
	if n < 0 || n > most {
		return false
	}
	b := make([]byte, n)
	if _, err := f.ReadAt(b, off); err != nil && err != io.EOF {
		return false
	}
	return bytes.Count(b, []byte{0}) == len(b)
}
