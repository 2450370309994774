package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/bench/peers"
	"github.com/bloomkv/bloomkv/internal/race"
)

// TestEngineTags checks what each build of this command links in against
// the go command's own list of its dependencies' modules (go list -deps):
// a build with tags peers_single and peers_ENGINE that engine's module,
// bloomkv's (which the workloads import), and neither the other engines'
// nor gonum's plot (the charts); a build without tags all of them.
func TestEngineTags(t *testing.T) {
	const plot = "gonum.org/v1/plot"
	engines := []struct{ name, module string }{
		{"bloomkv", "github.com/bloomkv/bloomkv"},
		{"pebble", "github.com/cockroachdb/pebble/v2"},
		{"goleveldb", "github.com/syndtr/goleveldb"},
		{"badger", "github.com/dgraph-io/badger/v4"},
	}
	for _, e := range peers.Engines {
		if !slices.ContainsFunc(engines, func(x struct{ name, module string }) bool { return x.name == e.Name }) {
			t.Errorf("engine %s: not in this test's table", e.Name)
		}
	}
	type test struct {
		tags      string
		want, not []string // modules linked in, and not
	}
	all := test{want: []string{plot}}
	tests := []test{}
	for _, e := range engines {
		all.want = append(all.want, e.module)
		tc := test{tags: "peers_single,peers_" + e.name, want: []string{e.module, engines[0].module}, not: []string{plot}}
		for _, other := range engines[1:] {
			if other != e {
				tc.not = append(tc.not, other.module)
			}
		}
		tests = append(tests, tc)
	}
	for _, tc := range append(tests, all) {
		t.Run("tags="+tc.tags, func(t *testing.T) {
			var said bytes.Buffer
			cmd := exec.Command("go", "list", "-deps", "-tags", tc.tags, "-f", "{{with .Module}}{{.Path}}{{end}}", benchModule+"/cmd/peers")
			cmd.Stderr = &said
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("go list -deps: %v\n%s", err, said.String())
			}
			linked := strings.Fields(string(out))
			for _, m := range tc.want {
				if !slices.Contains(linked, m) {
					t.Errorf("%s not linked in", m)
				}
			}
			for _, m := range tc.not {
				if slices.Contains(linked, m) {
					t.Errorf("%s linked in", m)
				}
			}
		})
	}
}

// TestPerEngineBinary runs the command as it runs by default, on bloomkv
// alone at a tiny size: the parent builds bloomkv's child with tags
// peers_single and peers_bloomkv and runs it, and the output's note and
// peers.json give that binary and its size. That binary refuses to run an
// engine not linked into it, and to draw charts; and outside the bench
// module the parent cannot build the children and says why.
func TestPerEngineBinary(t *testing.T) {
	// The children built as this test binary was (race.GoFlags).
	t.Setenv("GOFLAGS", strings.Join(append(strings.Fields(os.Getenv("GOFLAGS")), race.GoFlags()...), " "))
	out := t.TempDir()
	var stdout, errs bytes.Buffer
	args := []string{"-n", "2000", "-reads", "500", "-engines", "bloomkv", "-workloads", "fillrandom,readrandom", "-dir", t.TempDir(), "-out", out}
	if code := run(args, &stdout, &errs); code != 0 {
		t.Fatalf("exit %d: %s", code, errs.String())
	}
	m := regexp.MustCompile(`built bloomkv's child \(go build -tags peers_single,peers_bloomkv\): ([0-9,]+) B`).FindStringSubmatch(errs.String())
	if m == nil {
		t.Fatalf("stderr does not give the built binary's size:\n%s", errs.String())
	}
	size, err := strconv.ParseInt(strings.ReplaceAll(m[1], ",", ""), 10, 64)
	if err != nil {
		t.Fatal(err)
	}
	if note := "Each child ran a binary built with its engine's adapter alone: bloomkv " + m[1] + " B.)"; !strings.Contains(stdout.String(), note) {
		t.Errorf("no note %q in the output:\n%s", note, stdout.String())
	}
	rep, err := readReport(out)
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Sizes[0].Runs[0]; r.Binary == nil || r.Binary.Shared || r.Binary.Size != size || r.MaxRSS <= 0 || len(r.Results) != 2 {
		t.Errorf("peers.json's run %s: binary %+v, peak RSS %d, %d results; want the per-engine binary of %d bytes", r.Name, r.Binary, r.MaxRSS, len(r.Results), size)
	}

	bins, err := buildChildren([]peers.Engine{{Name: "bloomkv"}}, t.TempDir(), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		err  string
	}{
		{[]string{"-engine", "pebble", "-dir", t.TempDir()}, `peers: engine "pebble" is not linked into this binary, which has bloomkv`},
		{[]string{"-chart", out}, "peers: -chart: this binary, built with tag peers_single for one engine's child, draws no charts"},
	} {
		said, err := exec.Command(bins["bloomkv"].Path, tc.args...).CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 2 || !strings.HasPrefix(string(said), tc.err) {
			t.Errorf("bloomkv's child %q: %v, %q; want exit status 2 and %q", tc.args, err, said, tc.err)
		}
	}

	t.Chdir(t.TempDir())
	if _, err := buildChildren(peers.Engines, t.TempDir(), io.Discard); err == nil ||
		!strings.Contains(err.Error(), "is not in module "+benchModule) || !strings.HasSuffix(err.Error(), "run from the bench module's directory, or pass -shared-binary") {
		t.Errorf("building outside the bench module: error %v", err)
	}
}

// TestBinariesNote checks the peak RSS note's sentence on the children's
// binaries, and that a peers.json written before they were recorded still
// reads, its note without one.
func TestBinariesNote(t *testing.T) {
	shared := &binary{Size: 42_000_000, Shared: true}
	for _, tc := range []struct {
		name string
		runs []engineRun
		want string
	}{
		{"per engine", []engineRun{{Name: "bloomkv", Binary: &binary{Size: 10_133_502}}, {Name: "pebble", Binary: &binary{Size: 29_007_440}}},
			"\n Each child ran a binary built with its engine's adapter alone: bloomkv 10,133,502 B, pebble 29,007,440 B."},
		{"shared", []engineRun{{Name: "bloomkv", Binary: shared}, {Name: "pebble", Binary: shared}},
			"\n Each child ran the runner's own binary, every engine linked in (-shared-binary): 42,000,000 B."},
		{"not recorded", []engineRun{{Name: "bloomkv"}, {Name: "pebble"}}, ""},
	} {
		if got := binariesNote(tc.runs); got != tc.want {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
		}
	}
	var old engineRun
	if err := json.Unmarshal([]byte(`{"Name":"pebble","Results":[],"MaxRSS":1048576}`), &old); err != nil || old.Binary != nil {
		t.Errorf("a run without Binary: %+v, %v", old, err)
	}
}
