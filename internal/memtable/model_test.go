package memtable_test

import (
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/memtable"
)

// version is the oracle's record of one Add.
type version struct {
	key   string
	seq   base.SeqNum
	kind  base.Kind
	value string
}

// oracleCmp is the documented order written out independently of
// base.CompareInternal: user key ascending, seqnum descending, kind
// descending.
func oracleCmp(a, b version) int {
	if c := cmp.Compare(a.key, b.key); c != 0 {
		return c
	}
	if c := cmp.Compare(b.seq, a.seq); c != 0 {
		return c
	}
	return cmp.Compare(b.kind, a.kind)
}

// model is the oracle: every version added, kept sorted.
type model struct{ sorted []version }

func (m *model) add(v version) {
	i, found := slices.BinarySearchFunc(m.sorted, v, oracleCmp)
	if found {
		panic("test generated a duplicate internal key")
	}
	m.sorted = slices.Insert(m.sorted, i, v)
}

func (m *model) has(v version) bool {
	_, found := slices.BinarySearchFunc(m.sorted, v, oracleCmp)
	return found
}

// get is a linear scan: the newest version of key with seq ≤ visible.
func (m *model) get(key string, visible base.SeqNum) (version, bool) {
	var best version
	found := false
	for _, v := range m.sorted {
		if v.key != key || v.seq > visible {
			continue
		}
		if !found || v.seq > best.seq || (v.seq == best.seq && v.kind > best.kind) {
			best, found = v, true
		}
	}
	return best, found
}

// seekGE is the index of the first version with key ≥ k (len if none).
func (m *model) seekGE(k string) int {
	for i, v := range m.sorted {
		if v.key >= k {
			return i
		}
	}
	return len(m.sorted)
}

// seekLT is the index of the last version with key < k (-1 if none).
func (m *model) seekLT(k string) int {
	for i := len(m.sorted) - 1; i >= 0; i-- {
		if m.sorted[i].key < k {
			return i
		}
	}
	return -1
}

type modelParams struct {
	name     string
	ops      int
	prefix   string // common to all keys
	alphabet int    // distinct bytes in keys after prefix, from keyBytes
	maxKey   int    // longest key after prefix; 0 allows prefix only
	maxSeq   base.SeqNum
	maxValue int
}

var modelCases = []modelParams{
	{name: "empty", ops: 0, alphabet: 2, maxKey: 2, maxSeq: 10, maxValue: 4},
	{name: "one", ops: 1, alphabet: 2, maxKey: 2, maxSeq: 10, maxValue: 4},
	{name: "only-empty-key", ops: 40, alphabet: 1, maxKey: 0, maxSeq: 30, maxValue: 4},
	{name: "few-keys-many-versions", ops: 300, alphabet: 2, maxKey: 2, maxSeq: 200, maxValue: 8},
	{name: "many-keys", ops: 2000, alphabet: 6, maxKey: 6, maxSeq: 1 << 20, maxValue: 20},
	{name: "seqnum-extremes", ops: 200, alphabet: 3, maxKey: 3, maxSeq: base.SeqNumMax, maxValue: 8},
	{name: "big-values", ops: 200, alphabet: 4, maxKey: 4, maxSeq: 1000, maxValue: 40 << 10},
	// Keys around and beyond the 8 bytes the tree compares inline.
	{name: "binary-keys", ops: 1000, alphabet: 3, maxKey: 11, maxSeq: 5000, maxValue: 4},
	{name: "prefix-straddles-8", ops: 1000, prefix: "bloom", alphabet: 4, maxKey: 6, maxSeq: 5000, maxValue: 4},
	{name: "shared-8-byte-prefix", ops: 1000, prefix: "bloomkv:", alphabet: 4, maxKey: 4, maxSeq: 5000, maxValue: 4},
}

// keyBytes starts with the bytes most likely to expose ordering bugs: 0x00
// (indistinguishable from padding), 0xff, then ordinary letters.
const keyBytes = "\x00\xffabcdefgh"

func randKey(rng *rand.Rand, p modelParams) string {
	k := []byte(p.prefix)
	for range rng.IntN(p.maxKey + 1) {
		k = append(k, keyBytes[rng.IntN(p.alphabet)])
	}
	return string(k)
}

func randSeq(rng *rand.Rand, p modelParams) base.SeqNum {
	switch rng.IntN(20) {
	case 0:
		return 0
	case 1:
		return p.maxSeq
	}
	return base.SeqNum(rng.Uint64N(uint64(p.maxSeq) + 1))
}

// build fills a memtable and the oracle with the same random versions. It
// adds through a reused buffer to check that Add copies.
func build(rng *rand.Rand, p modelParams) (*memtable.Memtable, *model) {
	mt, m := memtable.New(0), &model{}
	var kbuf, vbuf []byte
	for added := 0; added < p.ops; {
		v := version{key: randKey(rng, p), seq: randSeq(rng, p), kind: base.Kind(rng.IntN(2))}
		if m.has(v) {
			continue
		}
		val := make([]byte, rng.IntN(p.maxValue+1))
		for i := range val {
			val[i] = byte(rng.Uint32())
		}
		v.value = string(val)
		kbuf = append(kbuf[:0], v.key...)
		vbuf = append(vbuf[:0], v.value...)
		mt.Add(v.seq, v.kind, kbuf, vbuf)
		clear(kbuf)
		clear(vbuf)
		m.add(v)
		added++
	}
	return mt, m
}

func checkAt(t *testing.T, it *memtable.Iter, m *model, i int, op string) {
	t.Helper()
	if i < 0 || i >= len(m.sorted) {
		if it.Valid() {
			t.Fatalf("%s: at %v, oracle is exhausted (index %d of %d)", op, it.Key(), i, len(m.sorted))
		}
		return
	}
	if !it.Valid() {
		t.Fatalf("%s: exhausted, oracle at %+v (index %d)", op, m.sorted[i], i)
	}
	want := m.sorted[i]
	k := it.Key()
	if string(k.UserKey) != want.key || k.SeqNum() != want.seq || k.Kind() != want.kind || string(it.Value()) != want.value {
		t.Fatalf("%s: at %v, oracle at %q#%d,%v (index %d)", op, k, want.key, want.seq, want.kind, i)
	}
}

func TestModel(t *testing.T) {
	for ci, p := range modelCases {
		t.Run(p.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(ci), 99))
			mt, m := build(rng, p)

			t.Run("Len/ApproximateSize", func(t *testing.T) {
				if mt.Len() != len(m.sorted) || mt.Empty() != (len(m.sorted) == 0) {
					t.Fatalf("Len %d Empty %v, oracle has %d", mt.Len(), mt.Empty(), len(m.sorted))
				}
			})

			t.Run("Get", func(t *testing.T) {
				for range 2000 {
					key := randKey(rng, p)
					if rng.IntN(8) == 0 {
						key += "\x00" // just after a present key
					}
					visible := randSeq(rng, p)
					switch rng.IntN(10) {
					case 0:
						visible = base.SeqNumMax
					case 1:
						visible = ^base.SeqNum(0) // beyond SeqNumMax: sees everything
					}
					val, kind, seq, found := mt.Get([]byte(key), visible)
					want, wantFound := m.get(key, visible)
					if found != wantFound || (found && (string(val) != want.value || kind != want.kind || seq != want.seq)) {
						t.Fatalf("Get(%q, %d) = (%d bytes, %v, %d, %v), oracle %+v, %v",
							key, visible, len(val), kind, seq, found, want, wantFound)
					}
				}
			})

			t.Run("Forward", func(t *testing.T) {
				it := mt.NewIter()
				defer it.Close()
				i := 0
				for ok := it.First(); ok; ok = it.Next() {
					checkAt(t, it, m, i, "First/Next") // fails if it runs past the oracle
					i++
				}
				if i != len(m.sorted) {
					t.Fatalf("forward scan yielded %d entries, oracle %d", i, len(m.sorted))
				}
			})

			t.Run("Reverse", func(t *testing.T) {
				it := mt.NewIter()
				defer it.Close()
				i := len(m.sorted) - 1
				for ok := it.Last(); ok; ok = it.Prev() {
					checkAt(t, it, m, i, "Last/Prev")
					i--
				}
				if i != -1 {
					t.Fatalf("reverse scan stopped at oracle index %d", i)
				}
			})

			t.Run("Seek", func(t *testing.T) {
				it := mt.NewIter()
				defer it.Close()
				for range 500 {
					key := randKey(rng, p)
					if rng.IntN(2) == 0 {
						it.SeekGE([]byte(key))
						i := m.seekGE(key)
						checkAt(t, it, m, i, fmt.Sprintf("SeekGE(%q)", key))
						walk(t, rng, it, m, i, 6)
					} else {
						it.SeekLT([]byte(key))
						i := m.seekLT(key)
						checkAt(t, it, m, i, fmt.Sprintf("SeekLT(%q)", key))
						walk(t, rng, it, m, i, 6)
					}
				}
			})

			t.Run("RandomWalk", func(t *testing.T) {
				it := mt.NewIter()
				defer it.Close()
				it.First()
				walk(t, rng, it, m, 0, 20000)
			})

			t.Run("KeysOutliveIterator", func(t *testing.T) {
				// Keys and values alias the arena, not the iterator's
				// buffer, so ones collected along a scan stay correct.
				it := mt.NewIter()
				var keys []base.InternalKey
				var vals [][]byte
				for ok := it.First(); ok && len(keys) < len(m.sorted); ok = it.Next() {
					keys, vals = append(keys, it.Key()), append(vals, it.Value())
				}
				if it.Valid() || len(keys) != len(m.sorted) {
					t.Fatalf("scan yielded %d entries and Valid=%v, oracle has %d", len(keys), it.Valid(), len(m.sorted))
				}
				it.Close()
				for i, v := range m.sorted {
					if string(keys[i].UserKey) != v.key || keys[i].SeqNum() != v.seq || string(vals[i]) != v.value {
						t.Fatalf("entry %d changed after the iterator moved on: %v", i, keys[i])
					}
				}
			})
		})
	}
}

// walk makes steps random Next/Prev moves from oracle index i, checking each
// against the oracle. Index -1 is "before first" and len is "after last":
// Next from before-first goes to the first entry, Prev from after-last to
// the last, and moving further out stays put.
func walk(t *testing.T, rng *rand.Rand, it *memtable.Iter, m *model, i, steps int) {
	t.Helper()
	n := len(m.sorted)
	for range steps {
		if rng.IntN(2) == 0 {
			ok := it.Next()
			if i < n {
				i++
			}
			if ok != (i < n) {
				t.Fatalf("Next returned %v at oracle index %d of %d", ok, i, n)
			}
			checkAt(t, it, m, i, "Next")
		} else {
			ok := it.Prev()
			if i >= 0 {
				i--
			}
			if ok != (i >= 0) {
				t.Fatalf("Prev returned %v at oracle index %d of %d", ok, i, n)
			}
			checkAt(t, it, m, i, "Prev")
		}
	}
}

func TestUnpositionedAndClosed(t *testing.T) {
	mt := memtable.New(0)
	mt.Add(1, base.KindSet, []byte("a"), []byte("1"))
	for _, tc := range []struct {
		name     string
		setup    func(*memtable.Iter)
		canSeek  bool // over a memtable: a closed Iter is over none
		seekName string
	}{
		{"new", func(*memtable.Iter) {}, true, "an unpositioned iterator"},
		{"closed", func(it *memtable.Iter) { it.First(); it.Close() }, false, "a closed iterator"},
		{"closed+InitIter", func(it *memtable.Iter) { it.First(); it.Close(); mt.InitIter(it) }, true, "a re-initialized iterator"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			it := mt.NewIter()
			tc.setup(it)
			if it.Valid() || it.Next() || it.Prev() {
				t.Fatalf("%s moved", tc.seekName)
			}
			if !tc.canSeek {
				if it.SeekGE(nil) || it.SeekLT([]byte("b")) || it.First() || it.Last() || it.Valid() {
					t.Fatalf("%s moved", tc.seekName)
				}
				return
			}
			if !it.SeekGE(nil) || string(it.Key().UserKey) != "a" {
				t.Fatalf("%s could not seek", tc.seekName)
			}
		})
	}
}

func TestApproximateSize(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	mt := memtable.New(1 << 20)
	var bytesAdded int64
	prev := mt.ApproximateSize()
	if prev != 0 {
		t.Fatalf("empty memtable has size %d", prev)
	}
	for i := range 5000 {
		k := make([]byte, rng.IntN(32))
		v := make([]byte, rng.IntN(1000))
		mt.Add(base.SeqNum(i+1), base.KindSet, k, v)
		bytesAdded += int64(len(k) + len(v))
		got := mt.ApproximateSize()
		if got <= prev {
			t.Fatalf("size went from %d to %d after adding %d bytes", prev, got, len(k)+len(v))
		}
		// Roughly the bytes added: never less, and the overhead is a small
		// constant per entry, not proportional to the data.
		if got < bytesAdded || got > bytesAdded+int64(128*(i+1)) {
			t.Fatalf("size %d after %d entries holding %d bytes", got, i+1, bytesAdded)
		}
		prev = got
	}
}

func TestAddCopiesAndIsolatesEntries(t *testing.T) {
	mt := memtable.New(0)
	buf := []byte("key1value1")
	mt.Add(1, base.KindSet, buf[:4], buf[4:])
	copy(buf, "XXXXXXXXXX")
	mt.Add(2, base.KindSet, []byte("key2"), []byte("value2"))
	v, _, _, _ := mt.Get([]byte("key1"), 10)
	if string(v) != "value1" {
		t.Fatalf("value changed with the caller's buffer: %q", v)
	}
	// A careless append to a returned value must not overwrite the entry
	// stored after it in the same arena chunk.
	_ = append(v, "!!!!!!!!!!!!"...)
	if k, _, _, _ := mt.Get([]byte("key2"), 10); string(k) != "value2" {
		t.Fatalf("append to one value clobbered the next entry: %q", k)
	}
}

func TestTombstone(t *testing.T) {
	mt := memtable.New(0)
	mt.Add(1, base.KindSet, []byte("k"), []byte("v"))
	mt.Add(2, base.KindDelete, []byte("k"), nil)
	mt.Add(3, base.KindSet, []byte("k"), []byte("w"))
	for _, tc := range []struct {
		visible base.SeqNum
		found   bool
		kind    base.Kind
		value   string
	}{
		{0, false, 0, ""},
		{1, true, base.KindSet, "v"},
		{2, true, base.KindDelete, ""},
		{3, true, base.KindSet, "w"},
		{base.SeqNumMax, true, base.KindSet, "w"},
	} {
		v, kind, seq, found := mt.Get([]byte("k"), tc.visible)
		if found != tc.found || kind != tc.kind || string(v) != tc.value || (found && seq != min(tc.visible, 3)) {
			t.Errorf("Get(k, %d) = %q, %v, %d, %v; want %q, %v, %v", tc.visible, v, kind, seq, found, tc.value, tc.kind, tc.found)
		}
	}
}

func TestAddPanics(t *testing.T) {
	for _, tc := range []struct {
		name string
		seq  base.SeqNum
		kind base.Kind
		key  string
	}{
		{"duplicate", 5, base.KindSet, "dup"},
		{"seqnum-overflow", base.SeqNumMax + 1, base.KindSet, "x"},
		{"bad-kind", 6, base.KindMax + 1, "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mt := memtable.New(0)
			mt.Add(5, base.KindSet, []byte("dup"), []byte("first"))
			defer func() {
				if recover() == nil {
					t.Fatal("Add did not panic")
				}
				// The table is unchanged and unlocked after the panic.
				if v, _, _, _ := mt.Get([]byte("dup"), 5); string(v) != "first" || mt.Len() != 1 {
					t.Fatalf("after the panic: Get = %q, Len = %d", v, mt.Len())
				}
				mt.Add(7, base.KindSet, []byte("dup"), nil)
			}()
			mt.Add(tc.seq, tc.kind, []byte(tc.key), []byte("second"))
		})
	}
}
