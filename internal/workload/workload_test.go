package workload

import (
	"bytes"
	"errors"
	"math"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestKeysDeterministic(t *testing.T) {
	a, err := NewKeys(1000, 16, 100, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := NewKeys(1000, 16, 100, 7)
	c, _ := NewKeys(1000, 16, 100, 8)
	for i := range 1000 {
		if ka, kb := a.Present(nil, i), b.Present(nil, i); !bytes.Equal(ka, kb) || len(ka) != 16 {
			t.Fatalf("key %d: %q vs %q", i, ka, kb)
		}
		if !bytes.Equal(a.Value(i), b.Value(i)) || len(a.Value(i)) != 100 {
			t.Fatalf("value %d differs between equal seeds", i)
		}
	}
	if bytes.Equal(a.values[:1000], c.values[:1000]) {
		t.Error("values equal under different seeds")
	}
	if got := string(a.Present(nil, 3)); got != "0000000000000006" {
		t.Errorf("Present(3) = %q", got)
	}
	// The workload generators are seeded by name, not by what ran before.
	cfg := &Config{Keys: a, Reads: 50}
	s1, s2 := newMapStore(), newMapStore()
	for _, s := range []*mapStore{s1, s2} {
		if _, err := cfg.Run(s, FillRandom, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := cfg.Run(s2, ReadRandom, nil); err != nil {
		t.Fatal(err)
	}
	s1.log, s2.log = nil, nil
	for _, s := range []*mapStore{s1, s2} {
		if _, err := cfg.Run(s, ReadMixed, nil); err != nil {
			t.Fatal(err)
		}
	}
	if len(s1.log) != 50 || !equalLogs(s1.log, s2.log) {
		t.Error("readmixed's keys depend on what ran before")
	}
}

func equalLogs(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestMissingKeysAbsentAndInRange(t *testing.T) {
	const n = 5000
	k, err := NewKeys(n, 16, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	present := map[string]bool{}
	for i := range n {
		present[string(k.Present(nil, i))] = true
	}
	lo, hi := k.Present(nil, 0), k.Present(nil, n-1)
	for i := range n {
		m := k.Missing(nil, i)
		if present[string(m)] {
			t.Fatalf("missing key %q is present", m)
		}
		if bytes.Compare(m, k.Present(nil, i)) <= 0 {
			t.Fatalf("missing key %d %q not after present key %d", i, m, i)
		}
		if i+1 < n && bytes.Compare(m, k.Present(nil, i+1)) >= 0 {
			t.Fatalf("missing key %d %q not before present key %d", i, m, i+1)
		}
		if i < n-1 && (bytes.Compare(m, lo) < 0 || bytes.Compare(m, hi) > 0) {
			t.Fatalf("missing key %q outside [%q, %q]", m, lo, hi)
		}
	}
	// And every workload keeps to them: readmissing never finds a key.
	s := newMapStore()
	cfg := &Config{Keys: k, Reads: 2000, MissRatio: 0.3, ScanLength: 10}
	for _, w := range []Workload{FillRandom, ReadRandom, ReadMissing, ReadMixed, Scan, ScanKeys, MultiGet} {
		before, scans, keyScans := len(s.log), s.scans, s.keyScans
		r, err := cfg.Run(s, w, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Ops != cfg.Ops(w) || r.Latency.Count() != uint64(r.Ops) {
			t.Errorf("%s: %d ops, %d latencies, want %d", w, r.Ops, r.Latency.Count(), cfg.Ops(w))
		}
		switch w {
		case Scan, ScanKeys:
			// Each scan is of the kind its workload names.
			want := [2]int{r.Ops, 0}
			if w == ScanKeys {
				want = [2]int{0, r.Ops}
			}
			if got := [2]int{s.scans - scans, s.keyScans - keyScans}; got != want {
				t.Errorf("%s: %d scans and %d scans of keys, want %v", w, got[0], got[1], want)
			}
		case MultiGet:
			if got := len(s.log) - before; got != r.Ops*MultiGetBatch {
				t.Errorf("multiget: %d keys read in %d batches, want %d", got, r.Ops, r.Ops*MultiGetBatch)
			}
		case ReadMissing:
			if r.Missing != r.Ops {
				t.Errorf("readmissing: %d of %d missing", r.Missing, r.Ops)
			}
		case ReadMixed:
			if share := float64(r.Missing) / float64(r.Ops); math.Abs(share-0.3) > 0.05 {
				t.Errorf("readmixed: miss share %.3f, want 0.3", share)
			}
		}
	}
	if len(s.data) != n {
		t.Errorf("fillrandom wrote %d keys, want %d", len(s.data), n)
	}
	// A store that cannot scan keys alone is told so.
	if _, err := cfg.Run(struct{ Store }{s}, ScanKeys, nil); err == nil || !strings.Contains(err.Error(), "scans of keys only") {
		t.Errorf("scankeys on a store without ScanKeys: %v", err)
	}
}

func TestReadsCheckAnswers(t *testing.T) {
	k, _ := NewKeys(100, 16, 10, 1)
	cfg := &Config{Keys: k, Reads: 10}
	if _, err := cfg.Run(newMapStore(), ReadRandom, nil); err == nil {
		t.Error("readrandom on an empty store: no error")
	}
	if _, err := cfg.Run(newMapStore(), MultiGet, nil); err == nil {
		t.Error("multiget on an empty store: no error")
	}
	s := newMapStore()
	for i := range 200 { // present and missing keys alike
		s.data[string(k.encode(nil, uint64(i)))] = k.Value(0)
	}
	if _, err := cfg.Run(s, ReadMissing, nil); err == nil {
		t.Error("readmissing finding keys: no error")
	}
	if _, err := NewKeys(100_000_000, 8, 10, 1); err == nil {
		t.Error("keys too short for n: no error")
	}
	if _, err := Parse("readrandom,nope"); err == nil {
		t.Error("Parse of an unknown workload: no error")
	}
	ws, err := Parse("fillseq, readmissing")
	if err != nil || len(ws) != 2 || ws[1] != ReadMissing {
		t.Errorf("Parse = %v, %v", ws, err)
	}
}

func TestHistogramPercentiles(t *testing.T) {
	var h Histogram
	// Uniform 1 µs … 100 ms in 1 µs steps, shuffled order does not matter.
	const n = 100_000
	for i := 1; i <= n; i++ {
		h.Record(time.Duration(i) * time.Microsecond)
	}
	for _, q := range []float64{0.01, 0.5, 0.9, 0.99, 0.999} {
		want := q * n * float64(time.Microsecond)
		got := float64(h.Percentile(q))
		if math.Abs(got-want)/want > 1.0/32 {
			t.Errorf("p%g = %v, want %v ± 3%%", 100*q, time.Duration(got), time.Duration(want))
		}
	}
	if h.Min() != time.Microsecond || h.Max() != n*time.Microsecond || h.Percentile(1) != h.Max() {
		t.Errorf("min %v max %v p100 %v", h.Min(), h.Max(), h.Percentile(1))
	}
	if mean := h.Mean(); mean != (n+1)*time.Microsecond/2 {
		t.Errorf("mean %v", mean)
	}

	// Small values are exact; an exponential distribution's quantiles.
	var small Histogram
	for _, v := range []time.Duration{5, 1, 3, 2, 4} {
		small.Record(v)
	}
	if small.Percentile(0.5) != 3 || small.Percentile(0.2) != 1 || small.Percentile(0.8) != 4 {
		t.Errorf("small: p20 %v p50 %v p80 %v", small.Percentile(0.2), small.Percentile(0.5), small.Percentile(0.8))
	}
	var exp, a, b Histogram
	vals := make([]float64, 0, 20000)
	r := (&Keys{Seed: 3}).rng("exp")
	for i := range 20000 {
		v := r.ExpFloat64() * 1e6
		vals = append(vals, v)
		exp.Record(time.Duration(v))
		if i%2 == 0 {
			a.Record(time.Duration(v))
		} else {
			b.Record(time.Duration(v))
		}
	}
	sort.Float64s(vals)
	a.Merge(&b)
	for _, q := range []float64{0.5, 0.99} {
		want := vals[int(math.Ceil(q*float64(len(vals))))-1]
		if got := float64(exp.Percentile(q)); math.Abs(got-want)/want > 1.0/32 {
			t.Errorf("exponential p%g = %v, want %v", 100*q, got, want)
		}
		if a.Percentile(q) != exp.Percentile(q) {
			t.Errorf("merged p%g = %v, want %v", 100*q, a.Percentile(q), exp.Percentile(q))
		}
	}
	// Every bucket's range starts where the previous one ends.
	next := uint64(0)
	for i := range histBuckets {
		lo, w := bucketRange(i)
		if lo != next || bucketOf(lo) != i || bucketOf(lo+w-1) != i {
			t.Fatalf("bucket %d: [%d, +%d), want start %d", i, lo, w, next)
		}
		next = lo + w
		if next == 0 {
			break
		}
	}
}

// mapStore is an in-memory Store that logs the keys it is asked for and
// counts its scans.
type mapStore struct {
	data            map[string][]byte
	log             []string
	scans, keyScans int
}

func newMapStore() *mapStore { return &mapStore{data: map[string][]byte{}} }

func (m *mapStore) Put(k, v []byte) error {
	m.data[string(k)] = append([]byte(nil), v...)
	return nil
}

func (m *mapStore) Get(k []byte) ([]byte, bool, error) {
	m.log = append(m.log, string(k))
	v, ok := m.data[string(k)]
	return v, ok, nil
}

func (m *mapStore) MultiGet(keys [][]byte) ([][]byte, error) {
	values := make([][]byte, len(keys))
	for i, k := range keys {
		values[i], _, _ = m.Get(k)
	}
	return values, nil
}

func (m *mapStore) Scan(start []byte, n int) (int, error) {
	m.scans++
	return m.scan(start, n)
}

func (m *mapStore) ScanKeys(start []byte, n int) (int, error) {
	m.keyScans++
	return m.scan(start, n)
}

func (m *mapStore) scan(start []byte, n int) (int, error) {
	if n < 0 {
		return 0, errors.New("negative")
	}
	keys := make([]string, 0, len(m.data))
	for k := range m.data {
		if k >= string(start) {
			keys = append(keys, k)
		}
	}
	return min(n, len(keys)), nil
}

func (m *mapStore) Close() error { return nil }
