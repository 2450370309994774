package workload

import (
	"bytes"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv"
)

// PrefixKey appends present key i (0 ≤ i < N) of the prefix workloads, at
// perPrefix keys per prefix (0: DefaultPrefixKeys), to dst[:0], as the
// prefix workloads lay their keys out.
func (k *Keys) PrefixKey(dst []byte, i, perPrefix int) ([]byte, error) {
	l, err := k.prefixLayout(perPrefix)
	if err != nil {
		return dst, err
	}
	return l.key(dst, i), nil
}

// Prefix appends the prefix of present group g (missing = false) or of
// the missing prefix after it (missing = true), separator included, to
// dst[:0], as the prefix workloads draw their prefixes.
func (k *Keys) Prefix(dst []byte, g, perPrefix int, missing bool) ([]byte, error) {
	l, err := k.prefixLayout(perPrefix)
	if err != nil {
		return dst, err
	}
	return l.appendPrefix(dst, 2*uint64(g)+uint64(btoi(missing))), nil
}

// SeekPrefix makes mapStore a PrefixSeeker.
func (m *mapStore) SeekPrefix(prefix []byte, n int) (int, error) {
	m.log = append(m.log, string(prefix))
	read := 0
	for k := range m.data {
		if strings.HasPrefix(k, string(prefix)) {
			read++
		}
	}
	return min(read, n), nil
}

// TestPrefixKeys checks the prefix layout: a group's keys share their
// prefix, the groups are contiguous in key order, every missing prefix
// sorts between two present groups and is no key's prefix, and PrefixLen
// splits at the separator.
func TestPrefixKeys(t *testing.T) {
	const n, per = 1000, 16
	k, err := NewKeys(n, 16, 10, 1)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	prefixes := map[string]int{}
	for i := range n {
		key, err := k.PrefixKey(nil, i, per)
		if err != nil {
			t.Fatal(err)
		}
		if len(key) != 16 {
			t.Fatalf("key %d %q: %d bytes, want 16", i, key, len(key))
		}
		p := key[:PrefixLen(key)]
		want, _ := k.Prefix(nil, i/per, per, false)
		if !bytes.Equal(p, want) || p[len(p)-1] != PrefixSeparator {
			t.Fatalf("key %d %q: prefix %q, want %q", i, key, p, want)
		}
		prefixes[string(p)]++
		keys = append(keys, string(key))
	}
	if !sort.StringsAreSorted(keys) {
		t.Error("prefix keys are not in key order of their numbers")
	}
	if got, want := len(prefixes), (n+per-1)/per; got != want {
		t.Errorf("%d prefixes, want %d", got, want)
	}
	if got := prefixes[keys[n-1][:PrefixLen([]byte(keys[n-1]))]]; got != n%per {
		t.Errorf("last prefix holds %d keys, want %d", got, n%per)
	}
	for g := range (n + per - 1) / per {
		m, _ := k.Prefix(nil, g, per, true)
		if prefixes[string(m)] > 0 {
			t.Fatalf("missing prefix %q holds keys", m)
		}
		i := sort.SearchStrings(keys, string(m))
		if i == 0 || (i < n && !strings.HasPrefix(keys[i-1], keys[(g)*per][:PrefixLen([]byte(keys[g*per]))])) {
			t.Fatalf("missing prefix %q does not follow group %d", m, g)
		}
	}
	if got := PrefixLen([]byte("abc")); got != 3 {
		t.Errorf("PrefixLen without a separator = %d, want 3", got)
	}
	if _, err := k.PrefixKey(nil, 0, 0); err != nil {
		t.Errorf("default keys per prefix: %v", err)
	}
	short, _ := NewKeys(1_000_000, 7, 10, 1)
	if _, err := short.PrefixKey(nil, 0, 100); err == nil {
		t.Error("prefix keys longer than KeySize: no error")
	}
}

func TestPrefixWorkloads(t *testing.T) {
	k, _ := NewKeys(2000, 16, 10, 1)
	cfg := &Config{Keys: k, Reads: 300, PrefixKeys: 10}
	s := newMapStore()
	for _, w := range []Workload{FillPrefix, SeekPrefix, SeekPrefixMissing} {
		r, err := cfg.Run(s, w, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.Ops != cfg.Ops(w) {
			t.Errorf("%s: %d ops, want %d", w, r.Ops, cfg.Ops(w))
		}
		if w == SeekPrefixMissing && r.Missing != r.Ops {
			t.Errorf("%s: %d of %d missing", w, r.Missing, r.Ops)
		}
	}
	if len(s.data) != 2000 {
		t.Errorf("fillprefix wrote %d keys, want 2000", len(s.data))
	}
	if !FillPrefix.IsFill() || !SeekPrefix.IsPrefixSeek() || SeekPrefix.IsGet() {
		t.Error("workload predicates")
	}
	// A seek of a present prefix after fillrandom (another layout) finds
	// nothing: an error, not a number.
	other := newMapStore()
	if _, err := cfg.Run(other, FillRandom, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := cfg.Run(other, SeekPrefix, nil); err == nil {
		t.Error("seekprefix on a store filled by fillrandom: no error")
	}
	// A store without prefix seeks is refused by name.
	if _, err := cfg.Run(noPrefixStore{s}, SeekPrefixMissing, nil); err == nil || !strings.Contains(err.Error(), "prefix seeks") {
		t.Errorf("seekprefixmissing on a store without prefix seeks: %v", err)
	}
	if ws, err := Parse("fillprefix,seekprefix,seekprefixmissing"); err != nil || len(ws) != 3 {
		t.Errorf("Parse = %v, %v", ws, err)
	}
}

// noPrefixStore hides mapStore's SeekPrefix.
type noPrefixStore struct{ Store }

// TestBloomkvPrefixSeeks runs the prefix workloads on bloomkv with prefix
// filters: a seek of a missing prefix skips nearly every table in its key
// range, where without prefix filters it seeks every one.
func TestBloomkvPrefixSeeks(t *testing.T) {
	k, _ := NewKeys(4000, 16, 20, 1)
	cfg := &Config{Keys: k, Reads: 400}
	for _, withPrefix := range []bool{true, false} {
		dir := filepath.Join(t.TempDir(), "db")
		opts := &bloomkv.Options{MemtableSize: 64 << 10, BaseLevelSize: 32 << 10, TargetFileSize: 16 << 10, L0CompactionTrigger: 1}
		if withPrefix {
			opts.Prefix = PrefixExtractor()
		}
		s, err := OpenBloomkv(dir, opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cfg.Run(s, FillPrefix, nil); err != nil {
			t.Fatal(err)
		}
		if err := s.Settle(); err != nil {
			t.Fatal(err)
		}
		if !withPrefix {
			// The tables hold no prefixes; seeks need an extractor.
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			opts.Prefix = PrefixExtractor()
			if s, err = OpenBloomkv(dir, opts); err != nil {
				t.Fatal(err)
			}
		}
		// Per workload: the prefix seeks, and the tables they considered
		// and sought.
		var seeks, probes, sought [2]uint64
		for j, w := range []Workload{SeekPrefix, SeekPrefixMissing} {
			before := s.DB.Metrics()
			if _, err := cfg.Run(s, w, nil); err != nil {
				t.Fatalf("prefix filters %v: %v", withPrefix, err)
			}
			after := s.DB.Metrics()
			seeks[j] = after.PrefixSeeks - before.PrefixSeeks
			for i := range after.Levels {
				probes[j] += after.Levels[i].PrefixProbes - before.Levels[i].PrefixProbes
				sought[j] += after.Levels[i].PrefixSought - before.Levels[i].PrefixSought
			}
		}
		t.Logf("prefix filters %v: seeks %v, tables considered %v, sought %v", withPrefix, seeks, probes, sought)
		if seeks != [2]uint64{400, 400} {
			t.Errorf("prefix filters %v: %v prefix seeks, want 400 of each", withPrefix, seeks)
		}
		// A present prefix's seek seeks the tables that hold it, at least
		// one. A missing one's: none but the filters' false positives
		// with prefix filters (at 10 bits per key about 1%), every table
		// in range without.
		switch {
		case sought[0] < 400 || probes[1] < 400:
			t.Errorf("prefix filters %v: %d tables sought for 400 present prefixes, %d considered for 400 missing ones; want at least one each",
				withPrefix, sought[0], probes[1])
		case withPrefix && sought[1] > probes[1]/20:
			t.Errorf("with prefix filters: %d of %d tables sought for missing prefixes", sought[1], probes[1])
		case !withPrefix && sought[1] != probes[1]:
			t.Errorf("without prefix filters: %d of %d tables sought for missing prefixes, want all", sought[1], probes[1])
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
