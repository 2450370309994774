package peers

import (
	"slices"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/internal/workload"
)

// TestEnginesSmoke runs every workload on every engine on a tiny data set:
// the workloads check each answer (present keys found with their values,
// missing keys not found, scans reading entries).
func TestEnginesSmoke(t *testing.T) {
	keys, err := workload.NewKeys(2000, workload.DefaultKeySize, workload.DefaultValueSize, workload.DefaultSeed)
	if err != nil {
		t.Fatal(err)
	}
	cfg := &workload.Config{Keys: keys, Reads: 500, MissRatio: 0.5, ScanLength: 20}
	s := DefaultSettings
	s.CacheSize, s.MemtableSize = 1<<20, 1<<20
	ws := []workload.Workload{workload.FillRandom, workload.ReadRandom, workload.ReadMissing,
		workload.ReadMixed, workload.Scan, workload.FillSeq, workload.ReadRandom}
	dir := t.TempDir()
	for _, e := range Engines {
		t.Run(e.Name, func(t *testing.T) {
			rs, err := Run(e, dir, s, cfg, ws, nil)
			if err != nil {
				t.Fatal(err)
			}
			for i, r := range rs {
				if r.Ops != cfg.Ops(ws[i]) || r.OpsPerSec() <= 0 {
					t.Errorf("%s: %d ops at %.0f/s", ws[i], r.Ops, r.OpsPerSec())
				}
			}
		})
	}
	if _, err := Lookup("nope"); err == nil {
		t.Error("Lookup of an unknown engine: no error")
	}
}

// TestRegister checks Engines' order and Lookup's answers: this build's
// Engines in engineNames' order, and, registered out of order as a build
// with tags peers_single, peers_badger and peers_pebble would register
// them, pebble before badger, each found, and the other names refused as
// not linked in or unknown.
func TestRegister(t *testing.T) {
	names := func() []string {
		var ns []string
		for _, e := range Engines {
			ns = append(ns, e.Name)
		}
		return ns
	}
	linked := names()
	if !slices.IsSortedFunc(linked, func(a, b string) int { return slices.Index(engineNames, a) - slices.Index(engineNames, b) }) {
		t.Errorf("Engines %q: not in the order of %q", linked, engineNames)
	}
	all := Engines
	defer func() { Engines = all }()
	Engines = nil
	if _, err := Lookup("bloomkv"); err == nil || !strings.Contains(err.Error(), "which has none") {
		t.Errorf("Lookup without engines: error %v, want one saying the binary has none", err)
	}
	register(Engine{Name: "badger"})
	register(Engine{Name: "pebble"})
	if got := names(); !slices.Equal(got, []string{"pebble", "badger"}) {
		t.Errorf("Engines %q after registering badger, then pebble; want pebble, badger", got)
	}
	for _, tc := range []struct {
		name string
		err  string // "": found
	}{
		{"pebble", ""},
		{"badger", ""},
		{"bloomkv", `engine "bloomkv" is not linked into this binary, which has pebble, badger: it was built with tag peers_single, and without peers_bloomkv`},
		{"goleveldb", `engine "goleveldb" is not linked into this binary`},
		{"nope", `unknown engine "nope" (have bloomkv, pebble, goleveldb, badger)`},
	} {
		e, err := Lookup(tc.name)
		switch {
		case tc.err == "" && (err != nil || e.Name != tc.name):
			t.Errorf("Lookup(%q) = %q, %v; want it found", tc.name, e.Name, err)
		case tc.err != "" && (err == nil || !strings.HasPrefix(err.Error(), tc.err)):
			t.Errorf("Lookup(%q): error %v, want %q", tc.name, err, tc.err)
		}
	}
}
