package memtable_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/memtable"
)

// history is a write sequence fixed before the test starts, so readers can
// consult it without synchronization: op i has seqnum i+1, and once the
// writer publishes S, ops[:S] are all in the memtable.
type history struct {
	ops   []version
	byKey map[string][]int // indexes into ops, ascending
	keys  []string         // distinct keys, sorted
}

func newHistory(rng *rand.Rand, n, nkeys int) *history {
	h := &history{byKey: map[string][]int{}}
	pool := []string{""} // the empty key is a key like any other
	for len(pool) < nkeys {
		pool = append(pool, fmt.Sprintf("k%04d", rng.IntN(10*nkeys)))
	}
	for i := range n {
		k := pool[rng.IntN(len(pool))]
		v := version{key: k, seq: base.SeqNum(i + 1), kind: base.KindSet}
		if rng.IntN(5) == 0 {
			v.kind = base.KindDelete
		}
		v.value = fmt.Sprintf("%s/%d/%s", k, i+1, make([]byte, rng.IntN(40)))
		if _, ok := h.byKey[k]; !ok {
			h.keys = append(h.keys, k)
		}
		h.byKey[k] = append(h.byKey[k], i)
		h.ops = append(h.ops, v)
	}
	slices.Sort(h.keys)
	return h
}

// newest is the newest op on key with seqnum ≤ s.
func (h *history) newest(key string, s base.SeqNum) (version, bool) {
	idx := h.byKey[key]
	j, _ := slices.BinarySearch(idx, int(s)) // first index ≥ s, i.e. seqnum > s
	if j == 0 {
		return version{}, false
	}
	return h.ops[idx[j-1]], true
}

// authentic checks that an entry read from the memtable is exactly the op
// its seqnum names: no torn or invented entries.
func (h *history) authentic(k base.InternalKey, value []byte) error {
	s := k.SeqNum()
	if s == 0 || int(s) > len(h.ops) {
		return fmt.Errorf("entry %v has a seqnum never written", k)
	}
	op := h.ops[s-1]
	if string(k.UserKey) != op.key || k.Kind() != op.kind || string(value) != op.value {
		return fmt.Errorf("entry %v (value %q) is not op %+v", k, value, op)
	}
	return nil
}

// TestConcurrentReaders runs one writer against readers doing Gets, scans,
// seeks and random walks, and checks everything they see against the
// history of what had been published before each read began.
func TestConcurrentReaders(t *testing.T) {
	n, readers := 20000, 3
	if testing.Short() {
		n = 4000
	}
	h := newHistory(rand.New(rand.NewPCG(3, 4)), n, 300)
	mt := memtable.New(0)
	var published atomic.Uint64
	done := make(chan struct{})

	var wg, started sync.WaitGroup
	var overlapped atomic.Int64 // rounds that began while the writer was still adding
	errs := make(chan error, readers)
	for r := range readers {
		wg.Add(1)
		started.Add(1)
		go func() {
			defer wg.Done()
			started.Done()
			rng := rand.New(rand.NewPCG(uint64(r), 5))
			for round := 0; ; round++ {
				if published.Load() < uint64(n) {
					overlapped.Add(1)
				}
				if err := readRound(mt, h, &published, rng, round); err != nil {
					errs <- fmt.Errorf("reader %d, round %d: %w", r, round, err)
					return
				}
				select {
				case <-done:
					return
				default:
				}
			}
		}()
	}
	started.Wait()
	for i, op := range h.ops {
		mt.Add(op.seq, op.kind, []byte(op.key), []byte(op.value))
		published.Store(uint64(i + 1))
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	t.Logf("%d reader rounds overlapped the writer", overlapped.Load())
	if mt.Len() != n {
		t.Fatalf("Len = %d after %d adds", mt.Len(), n)
	}
}

func readRound(mt *memtable.Memtable, h *history, published *atomic.Uint64, rng *rand.Rand, round int) error {
	// Point reads at the published seqnum must be exact.
	for range 50 {
		s := base.SeqNum(published.Load())
		key := h.keys[rng.IntN(len(h.keys))]
		val, kind, seq, found := mt.Get([]byte(key), s)
		want, wantFound := h.newest(key, s)
		if found != wantFound || (found && (seq != want.seq || kind != want.kind || string(val) != want.value)) {
			return fmt.Errorf("Get(%q, %d) = %v, %d, %v; want %+v, %v", key, s, kind, seq, found, want, wantFound)
		}
	}
	// A read at SeqNumMax sees at least what was published before it and at
	// most the one op the writer may be adding beyond what it published.
	for range 50 {
		key := h.keys[rng.IntN(len(h.keys))]
		s0 := base.SeqNum(published.Load())
		val, kind, seq, found := mt.Get([]byte(key), base.SeqNumMax)
		s1 := base.SeqNum(published.Load())
		want, wantFound := h.newest(key, s0)
		if wantFound && (!found || seq < want.seq) || found && seq > s1+1 {
			return fmt.Errorf("Get(%q, max) = seq %d found %v between publishes %d and %d; newest at %d is %+v",
				key, seq, found, s0, s1, s0, want)
		}
		if found {
			if err := h.authentic(base.MakeInternalKey([]byte(key), seq, kind), val); err != nil {
				return err
			}
		}
	}
	if err := checkScan(mt, h, published, round%2 == 0); err != nil {
		return err
	}
	for range 20 {
		if err := checkSeek(mt, h, published, rng); err != nil {
			return err
		}
	}
	return checkWalk(mt, h, rng)
}

// checkScan scans everything and checks order, authenticity, and that every
// entry published before the iterator was created was seen.
func checkScan(mt *memtable.Memtable, h *history, published *atomic.Uint64, forward bool) error {
	s0 := base.SeqNum(published.Load())
	it := mt.NewIter()
	defer it.Close()
	step, start := it.Next, it.First
	want := -1 // sign of CompareInternal(prev, cur)
	if !forward {
		step, start, want = it.Prev, it.Last, 1
	}
	var prev base.InternalKey
	seen := base.SeqNum(0)
	for ok, i := start(), 0; ok; ok, i = step(), i+1 {
		if i > len(h.ops) {
			return fmt.Errorf("scan (forward=%v) yielded more entries than were written", forward)
		}
		k := it.Key()
		if err := h.authentic(k, it.Value()); err != nil {
			return err
		}
		if i > 0 && base.CompareInternal(prev, k) != want {
			return fmt.Errorf("scan (forward=%v) went from %v to %v", forward, prev, k)
		}
		if k.SeqNum() <= s0 {
			seen++
		}
		prev = k
	}
	if seen != s0 {
		return fmt.Errorf("scan (forward=%v) saw %d of the %d entries published before it began", forward, seen, s0)
	}
	return nil
}

// checkSeek checks that, ignoring entries newer than what was published, a
// seek lands where a seek in the published history would.
func checkSeek(mt *memtable.Memtable, h *history, published *atomic.Uint64, rng *rand.Rand) error {
	s0 := base.SeqNum(published.Load())
	target := fmt.Sprintf("k%04d", rng.IntN(3000))
	it := mt.NewIter()
	defer it.Close()
	if rng.IntN(2) == 0 {
		// The first visible entry at or after target is the newest version
		// of the smallest published key ≥ target.
		var want *version
		for _, k := range h.keys[searchKeys(h.keys, target):] {
			if v, ok := h.newest(k, s0); ok {
				want = &v
				break
			}
		}
		ok := it.SeekGE([]byte(target))
		for i := 0; ok && it.Key().SeqNum() > s0; i++ {
			if i > len(h.ops) {
				return fmt.Errorf("SeekGE(%s) then Next does not advance", target)
			}
			ok = it.Next()
		}
		return sameVersion(ok, it, want, "SeekGE("+target+")")
	}
	// Going backwards the first visible entry is the oldest version of the
	// largest published key < target.
	var want *version
	for i := searchKeys(h.keys, target) - 1; i >= 0; i-- {
		if idx := h.byKey[h.keys[i]]; base.SeqNum(idx[0]) < s0 {
			want = &h.ops[idx[0]]
			break
		}
	}
	ok := it.SeekLT([]byte(target))
	for i := 0; ok && it.Key().SeqNum() > s0; i++ {
		if i > len(h.ops) {
			return fmt.Errorf("SeekLT(%s) then Prev does not advance", target)
		}
		ok = it.Prev()
	}
	return sameVersion(ok, it, want, "SeekLT("+target+")")
}

// searchKeys is the index of the first key ≥ target.
func searchKeys(keys []string, target string) int {
	i, _ := slices.BinarySearch(keys, target)
	return i
}

func sameVersion(ok bool, it *memtable.Iter, want *version, op string) error {
	switch {
	case !ok && want == nil:
		return nil
	case !ok:
		return fmt.Errorf("%s: exhausted, want %+v", op, *want)
	case want == nil:
		return fmt.Errorf("%s: at %v, want exhausted", op, it.Key())
	}
	if k := it.Key(); string(k.UserKey) != want.key || k.SeqNum() != want.seq {
		return fmt.Errorf("%s: at %v, want %+v", op, k, *want)
	}
	return nil
}

// checkWalk moves randomly and checks each step goes the right way.
func checkWalk(mt *memtable.Memtable, h *history, rng *rand.Rand) error {
	it := mt.NewIter()
	defer it.Close()
	if !it.SeekGE([]byte(fmt.Sprintf("k%04d", rng.IntN(3000)))) && !it.Last() {
		return nil
	}
	prev := it.Key()
	for range 200 {
		fwd := rng.IntN(2) == 0
		var ok bool
		if fwd {
			ok = it.Next()
		} else {
			ok = it.Prev()
		}
		if !ok {
			break
		}
		k := it.Key()
		if err := h.authentic(k, it.Value()); err != nil {
			return err
		}
		if c := base.CompareInternal(prev, k); (fwd && c >= 0) || (!fwd && c <= 0) {
			return fmt.Errorf("step (forward=%v) went from %v to %v", fwd, prev, k)
		}
		prev = k
	}
	return nil
}
