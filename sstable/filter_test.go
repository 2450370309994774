package sstable

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/fuse"
	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/ribbon"
)

// testFilters are the filters the table tests run with: each family, fuse
// at the widths Pebble's policies use, and ribbon at some of them and its
// widest.
var testFilters = []FilterSpec{Bloom(10), Fuse(8), Fuse(16), Fuse(4), Fuse(12), Ribbon(8), Ribbon(4), Ribbon(16), Ribbon(32)}

// distinctEntries returns n entries with distinct user keys "key%09d" of
// the even numbers below 2n, one version each; the odd numbers are absent.
func distinctEntries(n int) []entry {
	out := make([]entry, n)
	for i := range out {
		out[i] = entry{base.MakeInternalKey(fmt.Appendf(nil, "key%09d", 2*i), base.SeqNum(i+1), base.KindSet), []byte("v")}
	}
	return out
}

// absentKeyHashes returns the hashes of 200,000 keys no distinctEntries
// holds ("key%09d" of the odd numbers), made once for every subtest of
// TestFilterFamilies.
var absentKeyHashes = sync.OnceValue(func() []uint64 {
	hashes := make([]uint64, 200_000)
	for i := range hashes {
		hashes[i] = bloom.Hash(fmt.Appendf(nil, "key%09d", 2*i+1))
	}
	return hashes
})

// binomialBound returns mean + 5σ (plus one) of Binomial(trials, p): the
// count a correct filter exceeds with probability below 3·10⁻⁷.
func binomialBound(trials int, p float64) float64 {
	mean := float64(trials) * p
	return mean + 5*math.Sqrt(mean*(1-p)) + 1
}

// TestFilterFamilies builds a table of each filter at sizes from one key
// to ten thousand and checks what the reader sees: the family recorded
// (fuse and ribbon fall back to the Bloom filter of the same
// false-positive rate where that is smaller), no false negative, a false-positive rate within
// the binomial bound of the spec's formula, and exactly the size the
// spec's BitsPerKey predicts.
func TestFilterFamilies(t *testing.T) {
	for _, spec := range testFilters {
		for _, n := range []int{1, 10, 100, 1000, 10_000} {
			t.Run(fmt.Sprintf("%v/%d", spec, n), func(t *testing.T) {
				entries := distinctEntries(n)
				r := openTable(t, buildTable(t, entries, WriterOptions{Filter: spec}), nil)
				p := r.Properties()

				// The oracle for the family: a fuse or Ribbon filter is
				// built unless its serialized size exceeds its Bloom
				// stand-in's.
				wantFamily, wantSpec := spec.Family, spec
				if spec.Family == FuseFamily || spec.Family == RibbonFamily {
					size := fuse.SizeBytes(n, int(spec.Bits))
					if spec.Family == RibbonFamily {
						size = ribbon.SizeBytes(n, int(spec.Bits))
					}
					stand := Bloom(bloomBitsForRate(math.Exp2(-spec.Bits)))
					if spec.StandIn() != stand {
						t.Fatalf("StandIn() = %v, want %v", spec.StandIn(), stand)
					}
					if float64(size)*8/float64(n) > stand.BitsPerKey(n) {
						wantFamily, wantSpec = BloomFamily, stand
					}
				}
				if p.FilterFamily != wantFamily {
					t.Fatalf("family %v, want %v", p.FilterFamily, wantFamily)
				}
				switch f := r.Filter().(type) {
				case *bloom.Blocked:
					if wantFamily != BloomFamily || p.FilterProbes != uint64(f.Probes()) {
						t.Fatalf("Filter() is a Bloom filter, properties say %v, %d probes", p.FilterFamily, p.FilterProbes)
					}
				case *fuse.Filter:
					if wantFamily != FuseFamily || f.Bits() != int(spec.Bits) || p.FilterFPBits != uint64(f.Bits()) {
						t.Fatalf("Filter() is a %d-bit fuse filter, properties say %v, %d bits", f.Bits(), p.FilterFamily, p.FilterFPBits)
					}
				case *ribbon.Filter:
					if wantFamily != RibbonFamily || f.Bits() != int(spec.Bits) || p.FilterFPBits != uint64(f.Bits()) {
						t.Fatalf("Filter() is a %d-bit Ribbon filter, properties say %v, %d bits", f.Bits(), p.FilterFamily, p.FilterFPBits)
					}
				default:
					t.Fatalf("Filter() is %T", f)
				}
				if p.FilterKeys != uint64(n) {
					t.Errorf("FilterKeys %d, want %d", p.FilterKeys, n)
				}
				// The stored block is the serialized filter, whose size the
				// spec predicts exactly.
				if got, want := float64(p.FilterBytes)*8/float64(n), spec.BitsPerKey(n); math.Abs(got-want) > 1e-9 {
					t.Errorf("filter block %d bytes = %.4f bits/key, spec.BitsPerKey(%d) = %.4f", p.FilterBytes, got, n, want)
				}

				for _, e := range entries {
					if !r.Filter().MayContainHash(bloom.Hash(e.key.UserKey)) {
						t.Fatalf("false negative for %q", e.key.UserKey)
					}
				}
				probes := absentKeyHashes()
				fp := 0
				for _, h := range probes {
					if r.Filter().MayContainHash(h) {
						fp++
					}
				}
				rate := wantSpec.ExpectedFalsePositiveRate()
				if bound := binomialBound(len(probes), rate); float64(fp) > bound {
					t.Errorf("%d false positives in %d probes, above the bound %.0f of rate %.5f", fp, len(probes), bound, rate)
				}
			})
		}
	}
}

// TestFilterFamiliesCoexist reads tables of every family through one
// code path, as a DB's levels do, and checks Get against the model.
func TestFilterFamiliesCoexist(t *testing.T) {
	entries := randomEntries(rand.New(rand.NewPCG(5, 5)), 3000, 12, 20)
	for _, spec := range append(testFilters, FilterSpec{}) {
		r := openTable(t, buildTable(t, entries, WriterOptions{BlockSize: 256, Filter: spec}), nil)
		for i, e := range entries {
			v, kind, found, err := r.Get(MakeLookupKey(e.key.UserKey, e.key.SeqNum()), nil)
			if err != nil || !found || kind != e.key.Kind() || !bytes.Equal(v, e.value) {
				t.Fatalf("%v: entry %d %v: %v %v %v", spec, i, e.key, kind, found, err)
			}
		}
		var stats LookupStats
		if _, _, found, err := r.Get(MakeLookupKey([]byte("zzzz-absent"), base.SeqNumMax), &stats); found || err != nil {
			t.Fatalf("%v: absent key: found %v, %v", spec, found, err)
		}
		if stats.FilterChecked != (spec.Family != NoFilter) {
			t.Errorf("%v: FilterChecked %v", spec, stats.FilterChecked)
		}
	}
}

// TestFilterSpecCheck lists specs no table can have, and checks that the
// writer refuses each with an error naming the filter.
func TestFilterSpecCheck(t *testing.T) {
	for _, bad := range []FilterSpec{
		Bloom(0.5), Bloom(65), Bloom(math.NaN()),
		Fuse(0), Fuse(17), {Family: FuseFamily, Bits: 8.5},
		Ribbon(0), Ribbon(33), {Family: RibbonFamily, Bits: 8.5},
		{Family: 9, Bits: 8}, {Family: NoFilter, Bits: 3},
	} {
		if err := bad.Check(); err == nil {
			t.Errorf("%v: Check passed", bad)
		}
		if _, err := NewWriter(&bytes.Buffer{}, WriterOptions{Filter: bad}); err == nil {
			t.Errorf("%v: NewWriter accepted it", bad)
		}
	}
	for _, good := range append(testFilters, FilterSpec{}, Bloom(1), Bloom(64), Fuse(1), Ribbon(1), Ribbon(32)) {
		if err := good.Check(); err != nil {
			t.Errorf("%v: %v", good, err)
		}
	}
}

// TestParseFilterSpec parses the specs tools take.
func TestParseFilterSpec(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want FilterSpec
		ok   bool
	}{
		{"none", FilterSpec{}, true},
		{"bloom:10", Bloom(10), true},
		{"bloom:7.5", Bloom(7.5), true},
		{"fuse:8", Fuse(8), true},
		{"fuse:16", Fuse(16), true},
		{"fuse:8.5", FilterSpec{}, false},
		{"fuse:17", FilterSpec{}, false},
		{"bloom:0.5", FilterSpec{}, false},
		{"bloom", FilterSpec{}, false},
		{"ribbon:10", Ribbon(10), true},
		{"ribbon:32", Ribbon(32), true},
		{"ribbon:33", FilterSpec{}, false},
		{"ribbon:7.5", FilterSpec{}, false},
		{"xor:8", FilterSpec{}, false},
		{"bloom:ten", FilterSpec{}, false},
	} {
		got, err := ParseFilterSpec(tc.in)
		if (err == nil) != tc.ok || got != tc.want {
			t.Errorf("ParseFilterSpec(%q) = %v, %v; want %v, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}

// TestParseFilterFamily round-trips every family's name.
func TestParseFilterFamily(t *testing.T) {
	for _, f := range []FilterFamily{NoFilter, BloomFamily, FuseFamily, RibbonFamily} {
		if got, err := ParseFilterFamily(f.String()); err != nil || got != f {
			t.Errorf("ParseFilterFamily(%q) = %v, %v", f.String(), got, err)
		}
	}
	if _, err := ParseFilterFamily("xor"); err == nil {
		t.Error("ParseFilterFamily(xor) passed")
	}
	if got := FilterFamily(4).String(); got != "family(4)" {
		t.Errorf("FilterFamily(4).String() = %q", got)
	}
}

// slashPrefix is the prefix extractor of keys "prefix/suffix".
var slashPrefix = &PrefixExtractor{Name: "slash", Split: func(k []byte) int {
	if i := bytes.IndexByte(k, '/'); i >= 0 {
		return i + 1
	}
	return len(k)
}}

// TestPrefixFilter writes keys "u%05d/item%d" of the even users and asks
// for every prefix: never a false negative, and absent users pass at the
// filter's rate; a table written without the extractor, or under another
// name, may hold anything.
func TestPrefixFilter(t *testing.T) {
	var entries []entry
	seq := base.SeqNum(1)
	const users = 2000
	for u := 0; u < 2*users; u += 2 {
		for item := range 3 {
			entries = append(entries, entry{base.MakeInternalKey(fmt.Appendf(nil, "u%05d/item%d", u, item), seq, base.KindSet), nil})
			seq++
		}
	}
	for _, spec := range []FilterSpec{Bloom(10), Fuse(8), Ribbon(8)} {
		t.Run(spec.String(), func(t *testing.T) {
			r := openTable(t, buildTable(t, entries, WriterOptions{Filter: spec, Prefix: slashPrefix}), nil)
			p := r.Properties()
			if p.FilterPrefix != "slash" || p.FilterKeys != uint64(len(entries)+users) {
				t.Fatalf("FilterPrefix %q, FilterKeys %d: want slash, %d keys and prefixes", p.FilterPrefix, p.FilterKeys, len(entries)+users)
			}
			fp := 0
			for u := range 2 * users {
				may := r.MayContainPrefix(slashPrefix, fmt.Appendf(nil, "u%05d/", u))
				if u%2 == 0 && !may {
					t.Fatalf("prefix of user %d: false negative", u)
				}
				if u%2 == 1 && may {
					fp++
				}
			}
			if bound := binomialBound(users, r.Filter().ExpectedFalsePositiveRate()); float64(fp) > bound {
				t.Errorf("%d of %d absent prefixes passed, above the bound %.0f", fp, users, bound)
			}
			other := &PrefixExtractor{Name: "other", Split: slashPrefix.Split}
			if !r.MayContainPrefix(other, []byte("u00001/")) || !r.MayContainPrefix(nil, []byte("u00001/")) {
				t.Error("a prefix under another extractor, or none, was ruled out")
			}
		})
	}
	plain := openTable(t, buildTable(t, entries, WriterOptions{Filter: Bloom(10)}), nil)
	for u := 1; u < 100; u += 2 {
		if !plain.MayContainPrefix(slashPrefix, fmt.Appendf(nil, "u%05d/", u)) {
			t.Fatal("a table without prefixes in its filter ruled a prefix out")
		}
	}
	if _, err := NewWriter(&bytes.Buffer{}, WriterOptions{Prefix: slashPrefix}); err == nil {
		t.Error("Prefix without a filter accepted")
	}
	if _, err := NewWriter(&bytes.Buffer{}, WriterOptions{Filter: Bloom(10), Prefix: &PrefixExtractor{Name: "x"}}); err == nil {
		t.Error("Prefix without Split accepted")
	}
}

// TestPropertiesWithoutFamily decodes the properties of a table written
// before filter families were recorded: a table with a filter and no
// bloomkv.filter.family property holds a Bloom filter.
func TestPropertiesWithoutFamily(t *testing.T) {
	p := Properties{FilterBytes: 100, FilterKeys: 10, FilterBitsPer: 10, FilterProbes: 6}
	w := blockWriter{restartInterval: 1}
	for _, c := range propertyCodecs {
		if c.name != "bloomkv.filter.family" {
			w.add([]byte(c.name), c.encode(&p))
		}
	}
	got, err := decodeProperties(w.finish())
	if err != nil || got.FilterFamily != BloomFamily {
		t.Fatalf("decodeProperties = family %v, %v; want bloom", got.FilterFamily, err)
	}
}

// TestWriterPoolsOnlySmallHashSlices checks recycle's rule: a Writer's
// hash slice goes back to the pool with its buffers after a table of a
// few thousand keys, and is left to the collector after one whose keys
// grew it past maxPooledHashes, so that no later Writer holds it idle.
func TestWriterPoolsOnlySmallHashSlices(t *testing.T) {
	for _, tc := range []struct {
		keys   int
		pooled bool
	}{
		{1_000, true},
		{20_000, true},
		{3 * maxPooledHashes, false},
	} {
		w, err := NewWriter(new(bytes.Buffer), WriterOptions{Filter: Bloom(10)})
		if err != nil {
			t.Fatal(err)
		}
		bufs := w.bufs
		for _, e := range distinctEntries(tc.keys) {
			if err := w.Add(e.key, e.value); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := w.Finish(); err != nil {
			t.Fatal(err)
		}
		if c := cap(bufs.hashes); (c > 0) != tc.pooled || c > maxPooledHashes {
			t.Errorf("%d keys: the pooled buffers keep a hash slice of capacity %d, want pooled %v and at most %d", tc.keys, c, tc.pooled, maxPooledHashes)
		}
	}
}
