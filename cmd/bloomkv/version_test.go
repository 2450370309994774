package main

import (
	"bytes"
	"runtime/debug"
	"strings"
	"testing"
)

// TestBuildVersion checks the version reported for each way the tool can
// be built: from a clone (with and without a stamped commit), by go
// install at a tag, and inside another module that depends on bloomkv.
func TestBuildVersion(t *testing.T) {
	stamped := []debug.BuildSetting{{Key: "vcs.revision", Value: "0123456789abcdef0123"}, {Key: "vcs.modified", Value: "true"}}
	for _, tc := range []struct {
		name string
		info debug.BuildInfo
		want string
	}{
		{"clone", debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "(devel)"}}, "(devel)"},
		{"clone stamped", debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "(devel)"}, Settings: stamped}, "(devel), commit 0123456789ab+dirty"},
		{"go install at a tag", debug.BuildInfo{Main: debug.Module{Path: modulePath, Version: "v0.1.0"}}, "v0.1.0"},
		{"dependency", debug.BuildInfo{Main: debug.Module{Path: "example.com/app"}, Deps: []*debug.Module{{Path: "golang.org/x/sys", Version: "v0.46.0"}, {Path: modulePath, Version: "v0.2.0"}}}, "v0.2.0"},
		{"absent", debug.BuildInfo{Main: debug.Module{Path: "example.com/app"}}, "(unknown)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := buildVersion(&tc.info); got != tc.want {
				t.Errorf("buildVersion = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestVersionCommand runs `bloomkv version`: exit 0, the version line
// first, and a line for every file of a DB.
func TestVersionCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"version"}, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr.String())
	}
	out := stdout.String()
	if !strings.HasPrefix(out, "bloomkv ") {
		t.Errorf("output does not start with the version line:\n%s", out)
	}
	for _, want := range []string{"NNNNNN.sst", "table, format versions 1–4", "blob file, format versions 1–3", "NNNNNN.log", "MANIFEST-NNNNNN", "field tags 1–11", "CURRENT", "bloom format versions 1–2"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
}
