package peers

import (
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
