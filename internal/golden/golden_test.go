package golden

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recorder is a testing.TB that records a failure's message instead of
// stopping the test.
type recorder struct {
	testing.TB
	failed bool
	msg    string
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(format string, args ...any) {
	r.failed, r.msg = true, fmt.Sprintf(format, args...)
}

func (r *recorder) Fatal(args ...any) { r.failed, r.msg = true, fmt.Sprint(args...) }

// TestCheck checks Check against files it writes: equal bytes pass,
// others fail, text showing the output and bytes the first that differs;
// a missing file fails.
func TestCheck(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name      string
		file, got []byte
		msg       string // in the failure; "" to pass
	}{
		{"same text", []byte("a\nb\n"), []byte("a\nb\n"), ""},
		{"same bytes", []byte{0xff, 0, 1}, []byte{0xff, 0, 1}, ""},
		{"both empty", nil, []byte{}, ""},
		{"other text", []byte("a\nb\n"), []byte("a\nc\n"), "differs from " + filepath.Join(dir, "x.golden") + ":\na\nc\n"},
		{"other bytes", []byte{0xff, 0, 1}, []byte{0xff, 0, 2}, "3 bytes differ from " + filepath.Join(dir, "x.golden") + "'s 3 from byte 2 on"},
		{"longer", []byte{0xff, 0}, []byte{0xff, 0, 1}, "3 bytes differ from " + filepath.Join(dir, "x.golden") + "'s 2 from byte 2 on"},
		{"shorter", []byte{0xff, 0, 1}, []byte{0xff}, "1 bytes differ from " + filepath.Join(dir, "x.golden") + "'s 3 from byte 1 on"},
	} {
		path := filepath.Join(dir, "x.golden")
		if err := os.WriteFile(path, tc.file, 0o644); err != nil {
			t.Fatal(err)
		}
		r := &recorder{TB: t}
		Check(r, path, tc.got)
		if r.failed != (tc.msg != "") || !strings.Contains(r.msg, tc.msg) {
			t.Errorf("%s: failed %v with %q, want %q", tc.name, r.failed, r.msg, tc.msg)
		}
	}
	r := &recorder{TB: t}
	Check(r, filepath.Join(dir, "missing.golden"), []byte("x"))
	if !r.failed {
		t.Error("a missing file passed")
	}
}
