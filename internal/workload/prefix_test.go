package workload

import (
	"bytes"
	"sort"
	"strings"
	"testing"
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
