package manifest

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/bloomkv/bloomkv/vfs"
)

// FileType is the kind of a file in a DB directory, as its name tells it.
type FileType int

// The file types of a DB directory. Numbered types carry a file number from
// the manifest's one counter.
const (
	// FileTypeWAL is a write-ahead log, "NNNNNN.log".
	FileTypeWAL FileType = iota + 1
	// FileTypeTable is an SSTable, "NNNNNN.sst".
	FileTypeTable
	// FileTypeManifest is a manifest, "MANIFEST-NNNNNN".
	FileTypeManifest
	// FileTypeCurrent is "CURRENT", which names the live manifest.
	FileTypeCurrent
	// FileTypeLock is "LOCK", held while the DB is open.
	FileTypeLock
	// FileTypeTemp is a temporary file, "NNNNNN.tmp". CURRENT is written
	// through one numbered after the manifest it names; one left behind by
	// a crash is garbage and may be removed.
	FileTypeTemp
	// FileTypeBlob is a blob file of separated values, "NNNNNN.blob".
	FileTypeBlob
)

func (t FileType) String() string {
	switch t {
	case FileTypeWAL:
		return "wal"
	case FileTypeTable:
		return "table"
	case FileTypeManifest:
		return "manifest"
	case FileTypeCurrent:
		return "current"
	case FileTypeLock:
		return "lock"
	case FileTypeTemp:
		return "temp"
	case FileTypeBlob:
		return "blob"
	}
	return fmt.Sprintf("FileType(%d)", int(t))
}

const (
	currentName    = "CURRENT"
	lockName       = "LOCK"
	manifestPrefix = "MANIFEST-"
)

// MakeFilename returns the name of the file of type t with number num. Numbers
// are printed with at least six digits ("%06d"); num is ignored for CURRENT
// and LOCK. It panics on an unknown type, a programming error.
func MakeFilename(t FileType, num uint64) string {
	switch t {
	case FileTypeWAL:
		return fmt.Sprintf("%06d.log", num)
	case FileTypeTable:
		return fmt.Sprintf("%06d.sst", num)
	case FileTypeManifest:
		return fmt.Sprintf("%s%06d", manifestPrefix, num)
	case FileTypeCurrent:
		return currentName
	case FileTypeLock:
		return lockName
	case FileTypeTemp:
		return fmt.Sprintf("%06d.tmp", num)
	case FileTypeBlob:
		return fmt.Sprintf("%06d.blob", num)
	}
	panic(fmt.Sprintf("manifest: MakeFilename of unknown %v", t))
}

// MakeFilepath returns the path of the file of type t with number num in dir.
func MakeFilepath(fs vfs.FS, dir string, t FileType, num uint64) string {
	return fs.PathJoin(dir, MakeFilename(t, num))
}

// ParseFilename reports the type and number of a file name (the last element
// of a path, as FS.List returns it). ok is false for any name this package
// would not make, so that the DB never mistakes a foreign file for one of its
// own and deletes it: a number must be canonical (exactly what "%06d" prints,
// so one number has one name) and at least 1.
func ParseFilename(name string) (t FileType, num uint64, ok bool) {
	switch {
	case name == currentName:
		return FileTypeCurrent, 0, true
	case name == lockName:
		return FileTypeLock, 0, true
	case strings.HasPrefix(name, manifestPrefix):
		t, name = FileTypeManifest, name[len(manifestPrefix):]
	case strings.HasSuffix(name, ".log"):
		t, name = FileTypeWAL, name[:len(name)-len(".log")]
	case strings.HasSuffix(name, ".sst"):
		t, name = FileTypeTable, name[:len(name)-len(".sst")]
	case strings.HasSuffix(name, ".blob"):
		t, name = FileTypeBlob, name[:len(name)-len(".blob")]
	case strings.HasSuffix(name, ".tmp"):
		t, name = FileTypeTemp, name[:len(name)-len(".tmp")]
	default:
		return 0, 0, false
	}
	num, ok = parseFileNum(name)
	if !ok {
		return 0, 0, false
	}
	return t, num, true
}

// parseFileNum parses a canonical file number: six digits, or more without a
// leading zero.
func parseFileNum(s string) (uint64, bool) {
	if len(s) < 6 || (len(s) > 6 && s[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil || n == 0 {
		return 0, false
	}
	return n, true
}
