package workload

import (
	"fmt"
	"testing"
)

// putLog is a mapStore that also logs every Put, key and value copied.
type putLog struct {
	*mapStore
	puts []put
}

type put struct{ key, value string }

func newPutLog() *putLog { return &putLog{mapStore: newMapStore()} }

func (p *putLog) Put(k, v []byte) error {
	p.puts = append(p.puts, put{string(k), string(v)})
	return p.mapStore.Put(k, v)
}

// firstWins is a store that loses overwrites: a key keeps its first value.
type firstWins struct{ *mapStore }

func (f firstWins) Put(k, v []byte) error {
	if _, ok := f.data[string(k)]; ok {
		return nil
	}
	return f.mapStore.Put(k, v)
}

// TestFillOverwrite checks filloverwrite against an oracle built from the
// log of its puts alone: each of the N keys (the even numbers below 2N,
// zero-padded) is written exactly W times, its W values are distinct and of
// ValueSize bytes, the last is Value(i), the writes of a key are spread
// over the fill rather than back to back, and the order is a function of
// the seed. The reads that follow then find every key's last value.
func TestFillOverwrite(t *testing.T) {
	for _, tc := range []struct {
		name           string
		n, perKey      int // perKey 0: the default
		valueSize      int
		wantWritesEach int
	}{
		{"default", 3000, 0, 100, DefaultWritesPerKey},
		{"once", 2000, 1, 100, 1},
		{"twice, one-byte values", 2000, 2, 1, 2},
		{"many", 500, 20, 16, 20},
		{"max", 50, MaxWritesPerKey, 8, MaxWritesPerKey},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k, err := NewKeys(tc.n, 16, tc.valueSize, 5)
			if err != nil {
				t.Fatal(err)
			}
			cfg := &Config{Keys: k, Reads: 2000, MissRatio: 0.5, WritesPerKey: tc.perKey}
			s := newPutLog()
			res, err := cfg.Run(s, FillOverwrite, nil)
			if err != nil {
				t.Fatal(err)
			}
			w := tc.wantWritesEach
			if res.Ops != tc.n*w || cfg.Ops(FillOverwrite) != tc.n*w || len(s.puts) != tc.n*w || res.Latency.Count() != uint64(tc.n*w) {
				t.Fatalf("%d ops, Ops %d, %d puts, %d latencies; want %d", res.Ops, cfg.Ops(FillOverwrite), len(s.puts), res.Latency.Count(), tc.n*w)
			}
			values := map[string][]string{} // key → its values in the order written
			for _, p := range s.puts {
				values[p.key] = append(values[p.key], p.value)
			}
			if len(values) != tc.n {
				t.Fatalf("%d distinct keys written, want %d", len(values), tc.n)
			}
			for i := range tc.n {
				key := fmt.Sprintf("%016d", 2*i)
				vs := values[key]
				if len(vs) != w {
					t.Fatalf("key %s written %d times, want %d", key, len(vs), w)
				}
				seen := map[string]bool{}
				for _, v := range vs {
					if len(v) != tc.valueSize || seen[v] {
						t.Fatalf("key %s: values %q: want %d distinct values of %d bytes", key, vs, w, tc.valueSize)
					}
					seen[v] = true
				}
				if last := vs[w-1]; last != string(k.Value(i)) {
					t.Fatalf("key %s: last value %q, want Value(%d) %q", key, last, i, k.Value(i))
				}
			}
			// Spread: with W writes of each of N keys shuffled, two
			// neighbouring puts write the same key with probability about
			// (W−1)/(NW−1); back to back would be (W−1)/W.
			if w > 1 {
				same := 0
				for j := 1; j < len(s.puts); j++ {
					if s.puts[j].key == s.puts[j-1].key {
						same++
					}
				}
				if limit := 10 + 5*len(s.puts)*(w-1)/(tc.n*w-1); same > limit {
					t.Errorf("%d of %d neighbouring puts write the same key, want at most %d", same, len(s.puts), limit)
				}
			}
			// The reads check the values: every key holds its last write.
			for _, r := range []Workload{ReadRandom, ReadMixed, ReadMissing} {
				if _, err := cfg.Run(s, r, nil); err != nil {
					t.Errorf("%s after filloverwrite: %v", r, err)
				}
			}
			// And catch a store where the last write did not win.
			if w > 1 {
				lost := firstWins{newMapStore()}
				if _, err := cfg.Run(lost, FillOverwrite, nil); err != nil {
					t.Fatal(err)
				}
				if _, err := (&Config{Keys: k, Reads: tc.n}).Run(lost, ReadRandom, nil); err == nil {
					t.Error("readrandom on a store that kept each key's first write: no error")
				}
			}
		})
	}
}

// TestFillOverwriteSeeded checks that filloverwrite's order is the seed's:
// the same under the same seed, another under another, and not one of
// sorted keys.
func TestFillOverwriteSeeded(t *testing.T) {
	order := func(seed uint64) []put {
		k, err := NewKeys(1000, 16, 10, seed)
		if err != nil {
			t.Fatal(err)
		}
		s := newPutLog()
		if _, err := (&Config{Keys: k}).Run(s, FillOverwrite, nil); err != nil {
			t.Fatal(err)
		}
		return s.puts
	}
	keysOf := func(ps []put) []string {
		ks := make([]string, len(ps))
		for i, p := range ps {
			ks[i] = p.key
		}
		return ks
	}
	a, b, c := keysOf(order(1)), keysOf(order(1)), keysOf(order(2))
	if !equalLogs(a, b) {
		t.Error("two runs under seed 1 wrote the keys in different orders")
	}
	if equalLogs(a, c) {
		t.Error("seeds 1 and 2 wrote the keys in the same order")
	}
	sorted := 0
	for j := 1; j < len(a); j++ {
		if a[j-1] <= a[j] {
			sorted++
		}
	}
	if sorted > len(a)*6/10 {
		t.Errorf("%d of %d neighbouring puts in key order: not shuffled", sorted, len(a))
	}
}

// TestFillOverwriteConfig checks the writes-per-key bounds.
func TestFillOverwriteConfig(t *testing.T) {
	k, _ := NewKeys(100, 16, 10, 1)
	empty, _ := NewKeys(100, 16, 0, 1)
	for _, tc := range []struct {
		keys   *Keys
		perKey int
		ok     bool
	}{
		{k, 0, true},
		{k, 1, true},
		{k, MaxWritesPerKey, true},
		{k, MaxWritesPerKey + 1, false},
		{k, -1, false},
		{empty, 1, true},  // one write per key needs no mark
		{empty, 2, false}, // two need a byte to tell them apart
	} {
		_, err := (&Config{Keys: tc.keys, WritesPerKey: tc.perKey}).Run(newMapStore(), FillOverwrite, nil)
		if (err == nil) != tc.ok {
			t.Errorf("%d writes per key, %d-byte values: error %v, want ok %v", tc.perKey, tc.keys.ValueSize, err, tc.ok)
		}
	}
	ws, err := Parse("filloverwrite,readrandom")
	if err != nil || len(ws) != 2 || ws[0] != FillOverwrite || !ws[0].IsFill() || ws[0].IsGet() {
		t.Errorf("Parse = %v, %v", ws, err)
	}
}
