package manifest

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bloomkv/bloomkv/vfs"
)

func TestFilenames(t *testing.T) {
	for _, tc := range []struct {
		t    FileType
		num  uint64
		name string
	}{
		{FileTypeWAL, 1, "000001.log"},
		{FileTypeTable, 42, "000042.sst"},
		{FileTypeManifest, 7, "MANIFEST-000007"},
		{FileTypeTemp, 7, "000007.tmp"},
		{FileTypeBlob, 12, "000012.blob"},
		{FileTypeTable, 1234567, "1234567.sst"},
		{FileTypeWAL, math.MaxUint64, "18446744073709551615.log"},
		{FileTypeCurrent, 0, "CURRENT"},
		{FileTypeLock, 0, "LOCK"},
	} {
		if got := MakeFilename(tc.t, tc.num); got != tc.name {
			t.Errorf("MakeFilename(%v, %d) = %q, want %q", tc.t, tc.num, got, tc.name)
		}
		ft, num, ok := ParseFilename(tc.name)
		if !ok || ft != tc.t || num != tc.num {
			t.Errorf("ParseFilename(%q) = %v, %d, %v", tc.name, ft, num, ok)
		}
		if ft.String() != vfsKind(ft) && tc.t <= FileTypeManifest {
			t.Errorf("%v.String() disagrees with vfs.DefaultClassify", ft)
		}
	}
	for _, name := range []string{
		"", "CURRENT.tmp", "current", "LOCK2", "MANIFEST-", "MANIFEST-1", "MANIFEST-0000001",
		"000000.log", "00001.sst", "0000001.sst", "00000a.log", "+00001.log", "000001.LOG", "000001.log.tmp2",
		"18446744073709551616.log", "MANIFEST-000001.tmp", "LOG", "000001", ".log", "x000001.sst",
	} {
		if ft, num, ok := ParseFilename(name); ok {
			t.Errorf("ParseFilename(%q) = %v, %d, true; want not ok", name, ft, num)
		}
	}
	// Every number round-trips, and every name that parses is the name.
	rng := rand.New(rand.NewPCG(13, 13))
	for range 1000 {
		num := max(1, rng.Uint64()>>rng.UintN(64))
		for _, ft := range []FileType{FileTypeWAL, FileTypeTable, FileTypeManifest, FileTypeTemp, FileTypeBlob} {
			name := MakeFilename(ft, num)
			if gt, gn, ok := ParseFilename(name); !ok || gt != ft || gn != num {
				t.Fatalf("ParseFilename(%q) = %v, %d, %v", name, gt, gn, ok)
			}
		}
	}
	if p := MakeFilepath(vfs.NewMem(), "/db", FileTypeTable, 3); p != "/db/000003.sst" {
		t.Errorf("MakeFilepath = %q", p)
	}
	if s := FileType(99).String(); s != "FileType(99)" {
		t.Errorf("String of an unknown type = %q", s)
	}
}

// vfsKind is the I/O class vfs.DefaultClassify gives a file of type t, which
// must agree with this package's names.
func vfsKind(t FileType) string {
	return map[string]string{vfs.KindWAL: "wal", vfs.KindTable: "table", vfs.KindManifest: "manifest"}[vfs.DefaultClassify(MakeFilename(t, 1))]
}

func TestMakeFilenamePanics(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("MakeFilename of an unknown type did not panic")
		}
	}()
	MakeFilename(FileType(0), 1)
}
