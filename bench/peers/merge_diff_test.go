//go:build !peers_single || peers_pebble

package peers

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bloomkv/bloomkv"
	bvfs "github.com/bloomkv/bloomkv/vfs"
	"github.com/cockroachdb/pebble/v2"
	pvfs "github.com/cockroachdb/pebble/v2/vfs"
)

// TestMergeDifferential writes one random history of sets, deletes,
// range deletions and merges to bloomkv (AppendMerger) and to Pebble
// (its DefaultMerger, which concatenates too), flushing and compacting
// both alike, and compares every key's Get and full scans, forward and
// backward, every few hundred writes and at the end: two
// implementations of the same merge semantics must agree.
func TestMergeDifferential(t *testing.T) {
	b, err := bloomkv.Open("db", &bloomkv.Options{FS: bvfs.NewMem(), Merger: bloomkv.AppendMerger(), MemtableSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	p, err := pebble.Open("db", &pebble.Options{FS: pvfs.NewMem(), Merger: pebble.DefaultMerger, MemTableSize: 256 << 10, Logger: quietLogger{}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	rng := rand.New(rand.NewPCG(39, 7))
	keys := make([][]byte, 150)
	for i := range keys {
		keys[i] = fmt.Appendf(nil, "k%03d", i)
	}
	both := func(what string, fb func() error, fp func() error) {
		t.Helper()
		if err := fb(); err != nil {
			t.Fatalf("bloomkv %s: %v", what, err)
		}
		if err := fp(); err != nil {
			t.Fatalf("pebble %s: %v", what, err)
		}
	}
	for i := range 4000 {
		ki := rng.IntN(len(keys))
		k := keys[ki]
		switch r := rng.IntN(20); {
		case r < 3:
			both("Delete", func() error { return b.Delete(k, bloomkv.NoSync) }, func() error { return p.Delete(k, pebble.NoSync) })
		case r < 4:
			end := keys[min(len(keys)-1, ki+1+rng.IntN(10))]
			if bytes.Compare(k, end) < 0 {
				both("DeleteRange", func() error { return b.DeleteRange(k, end, bloomkv.NoSync) }, func() error { return p.DeleteRange(k, end, pebble.NoSync) })
			}
		case r < 8:
			v := fmt.Appendf(nil, "s%d;", i)
			both("Set", func() error { return b.Put(k, v, bloomkv.NoSync) }, func() error { return p.Set(k, v, pebble.NoSync) })
		default:
			v := fmt.Appendf(nil, "+%d;", i)
			both("Merge", func() error { return b.Merge(k, v, bloomkv.NoSync) }, func() error { return p.Merge(k, v, pebble.NoSync) })
		}
		switch {
		case i%1000 == 999:
			both("Compact", func() error { return b.Compact(nil, []byte{0xff}) }, func() error { return p.Compact(context.Background(), []byte{0}, []byte{0xff}, false) })
		case i%170 == 0:
			both("Flush", b.Flush, p.Flush)
		}
		if i%250 == 0 || i == 3999 {
			compareMerge(t, b, p, keys, i)
		}
	}
}

// compareMerge compares every key's Get, and full scans both ways, of b
// and p.
func compareMerge(t *testing.T, b *bloomkv.DB, p *pebble.DB, keys [][]byte, i int) {
	t.Helper()
	for _, k := range keys {
		bv, berr := b.Get(k)
		pv, closer, perr := p.Get(k)
		if perr == nil {
			pv = slices.Clone(pv)
			closer.Close()
		}
		if errors.Is(berr, bloomkv.ErrNotFound) != errors.Is(perr, pebble.ErrNotFound) || !bytes.Equal(bv, pv) {
			t.Fatalf("after %d writes, Get(%s): bloomkv %q %v, pebble %q %v", i, k, bv, berr, pv, perr)
		}
	}
	bit, err := b.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer bit.Close()
	pit, err := p.NewIter(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer pit.Close()
	for _, fwd := range []bool{true, false} {
		var bs, ps []string
		if fwd {
			for ok := bit.First(); ok; ok = bit.Next() {
				bs = append(bs, string(bit.Key())+"="+string(bit.Value()))
			}
			for ok := pit.First(); ok; ok = pit.Next() {
				ps = append(ps, string(pit.Key())+"="+string(pit.Value()))
			}
		} else {
			for ok := bit.Last(); ok; ok = bit.Prev() {
				bs = append(bs, string(bit.Key())+"="+string(bit.Value()))
			}
			for ok := pit.Last(); ok; ok = pit.Prev() {
				ps = append(ps, string(pit.Key())+"="+string(pit.Value()))
			}
		}
		if bit.Error() != nil || pit.Error() != nil || !slices.Equal(bs, ps) {
			t.Fatalf("after %d writes, scan (forward %v): bloomkv %d keys (%v), pebble %d keys (%v)\nbloomkv %q\npebble  %q", i, fwd, len(bs), bit.Error(), len(ps), pit.Error(), bs, ps)
		}
	}
}
