package vfs

import (
	"path/filepath"
	"strings"
)

// The file kinds DefaultClassify tells apart, named after what the store keeps
// in each file.
const (
	KindTable    = "table"    // NNNNNN.sst
	KindWAL      = "wal"      // NNNNNN.log
	KindManifest = "manifest" // MANIFEST-NNNNNN
	KindOther    = "other"    // CURRENT, LOCK, temporary files, directories
)

// DefaultClassify returns the kind of the file name by the naming scheme of a
// bloomkv directory: "*.sst" is KindTable, "*.log" KindWAL, "MANIFEST-*"
// KindManifest, anything else KindOther. Only the last element of name
// counts.
func DefaultClassify(name string) string {
	base := filepath.Base(name)
	switch {
	case strings.HasSuffix(base, ".sst"):
		return KindTable
	case strings.HasSuffix(base, ".log"):
		return KindWAL
	case strings.HasPrefix(base, "MANIFEST-"):
		return KindManifest
	}
	return KindOther
}
