package bloomkv

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/bloomkv/bloomkv/vfs"
)

// multiGets reads an indexed batch or a transaction as a dbReader:
// MultiGet is its Gets.
type multiGets struct{ pointReader }

type pointReader interface {
	Get(key []byte) ([]byte, error)
	NewIter(opts *IterOptions) (*Iterator, error)
}

func (r multiGets) MultiGet(keys [][]byte) ([][]byte, error) {
	out := make([][]byte, len(keys))
	for i, k := range keys {
		v, err := r.Get(k)
		switch {
		case errors.Is(err, ErrNotFound):
		case err != nil:
			return nil, err
		default:
			out[i] = v
		}
	}
	return out, nil
}

// randKVOp returns a random write over ks: a Set mostly, a Delete one
// time in four, a DeleteRange one time in ten.
func randKVOp(rng *rand.Rand, ks *keySpace, tag string) kvOp {
	switch r := rng.IntN(20); {
	case r < 2:
		return randRangeDel(rng, ks)
	case r < 7:
		return kvOp{del: true, key: string(ks.pick(rng))}
	}
	return kvOp{key: string(ks.pick(rng)), value: string(randValue(rng, tag))}
}

// addOp adds op to b.
func addOp(b *Batch, op kvOp) error {
	switch {
	case op.rangeDel:
		return b.DeleteRange([]byte(op.key), []byte(op.end))
	case op.del:
		return b.Delete([]byte(op.key))
	}
	return b.Set([]byte(op.key), []byte(op.value))
}

// TestIndexedBatchModel checks an indexed batch's reads against the
// model: the DB as of the batch's snapshot with the batch's writes applied
// in order. The DB is spread over tables and memtables with range
// deletions, and written to after the batch is made, which the batch must
// not see; then Apply must leave the DB as the batch read it (the later
// writes overwritten where the batch wrote).
func TestIndexedBatchModel(t *testing.T) {
	for _, seed := range testSeeds(12, 4, testing.Short()) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 39))
			d, err := Open("/db", &Options{FS: vfs.NewMem(), MemtableSize: 64 << 10})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			ks := newKeySpace(rng, 60)
			base := kvModel{}
			for i := range 400 {
				ops := []kvOp{randKVOp(rng, ks, fmt.Sprint("db", i))}
				if err := applyOps(d, ops, NoSync); err != nil {
					t.Fatal(err)
				}
				base.apply(ops)
				if i%150 == 149 {
					if err := d.Flush(); err != nil {
						t.Fatal(err)
					}
				}
			}
			var b *Batch
			if seed%2 == 0 {
				b, err = d.NewIndexedBatch()
			} else {
				var s *Snapshot
				if s, err = d.NewSnapshot(); err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				b, err = s.NewIndexedBatch()
			}
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			// Writes after the batch's snapshot: invisible to it.
			latest := base.clone()
			for i := range 100 {
				ops := []kvOp{randKVOp(rng, ks, fmt.Sprint("late", i))}
				if err := applyOps(d, ops, NoSync); err != nil {
					t.Fatal(err)
				}
				latest.apply(ops)
			}
			m := base.clone()
			var all []kvOp
			for step := range 300 {
				op := randKVOp(rng, ks, fmt.Sprint("b", step))
				if err := addOp(b, op); err != nil {
					t.Fatal(err)
				}
				all = append(all, op)
				m.apply([]kvOp{op})
				switch rng.IntN(10) {
				case 0:
					if _, err := checkState(multiGets{b}, ks, m); err != nil {
						t.Fatalf("after %d writes: %v", step+1, err)
					}
				case 1, 2:
					if err := checkIter(rng, multiGets{b}, m, ks, 40); err != nil {
						t.Fatalf("after %d writes: %v", step+1, err)
					}
				default:
					if err := checkGet(multiGets{b}, ks.pick(rng), m); err != nil {
						t.Fatalf("after %d writes: %v", step+1, err)
					}
				}
			}
			if err := d.Apply(b, NoSync); err != nil {
				t.Fatal(err)
			}
			// The DB now: its latest state with the batch's writes on top.
			latest.apply(all)
			if _, err := checkState(d, ks, latest); err != nil {
				t.Fatalf("after Apply: %v", err)
			}
		})
	}
}
