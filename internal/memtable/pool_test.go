package memtable

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/bloomkv/bloomkv/internal/base"
)

// chunkAddrs returns the addresses of m's arena chunks of size bytes.
func chunkAddrs(m *Memtable, size int) map[*byte]bool {
	addrs := map[*byte]bool{}
	for _, b := range m.arena.chunks {
		if len(b.Bytes) == size {
			addrs[unsafe.SliceData(b.Bytes)] = true
		}
	}
	return addrs
}

// TestPoolRecycles checks that a released memtable's chunks go to the
// pool, up to one memtable's, and that the next memtable writes into them
// and reads back what it wrote, not the bytes of the one before (a map
// model is the oracle).
func TestPoolRecycles(t *testing.T) {
	const sizeHint = 256 << 10
	p := NewPool(sizeHint)
	fill := func(m *Memtable, seed uint64) map[string][]byte {
		rng := rand.New(rand.NewPCG(seed, 7))
		model := map[string][]byte{}
		for i := 0; m.ApproximateSize() < sizeHint; i++ {
			k := fmt.Appendf(nil, "key%08d", rng.IntN(1<<20))
			v := make([]byte, rng.IntN(300))
			for j := range v {
				v[j] = byte(rng.Uint32())
			}
			m.Add(base.SeqNum(i+1), base.KindSet, k, v)
			model[string(k)] = v
		}
		return model
	}
	check := func(m *Memtable, model map[string][]byte) {
		t.Helper()
		for k, v := range model {
			got, _, _, ok := m.Get([]byte(k), base.SeqNumMax)
			if !ok || !bytes.Equal(got, v) {
				t.Fatalf("Get(%q) = %x, %v; want %x", k, got, ok, v)
			}
		}
	}

	m1 := p.New()
	fill(m1, 1)
	first := chunkAddrs(m1, p.chunkSize)
	if len(first) < 2 || len(first) > p.max {
		t.Fatalf("a full memtable used %d chunks; the pool keeps %d", len(first), p.max)
	}
	if p.Bytes() != 0 {
		t.Fatalf("pool holds %d bytes before any release", p.Bytes())
	}
	m1.Unref()
	if got, want := p.Bytes(), int64(len(first)*p.chunkSize); got != want {
		t.Fatalf("after the release the pool holds %d bytes, want %d (its %d chunks)", got, want, len(first))
	}

	m2 := p.New()
	model := fill(m2, 2)
	check(m2, model)
	reused := 0
	for a := range chunkAddrs(m2, p.chunkSize) {
		if first[a] {
			reused++
		}
	}
	if reused != len(first) {
		t.Fatalf("the next memtable reused %d of the %d chunks kept", reused, len(first))
	}
	if p.Bytes() != 0 {
		t.Fatalf("pool holds %d bytes after a memtable as big took them all", p.Bytes())
	}

	// A big entry has its own allocation, which the pool does not keep.
	m2.Add(base.SeqNum(1<<40), base.KindSet, []byte("big"), make([]byte, p.chunkSize/2))
	m2.Unref()
	if got, max := p.Bytes(), int64(p.max*p.chunkSize); got > max {
		t.Fatalf("pool holds %d bytes, more than a memtable's %d", got, max)
	}

	p.Close()
	if p.Bytes() != 0 {
		t.Fatalf("pool holds %d bytes after Close", p.Bytes())
	}
	m3 := p.New() // still valid after Close; frees its chunks itself
	check(m3, fill(m3, 3))
	m3.Unref()
	if p.Bytes() != 0 {
		t.Fatalf("a closed pool took %d bytes", p.Bytes())
	}
}

// TestPoolMemoryBound checks the pool's memory claim: the chunks of the
// live memtables and of the pool together never exceed the most the live
// memtables alone have held at once, through random rotations and
// releases in any order (readers may release a memtable late).
func TestPoolMemoryBound(t *testing.T) {
	const sizeHint = 64 << 10
	rng := rand.New(rand.NewPCG(5, 5))
	p := NewPool(sizeHint)
	defer p.Close()
	var live []*Memtable
	var peak int64
	seq := base.SeqNum(0)
	for step := range 20000 {
		switch r := rng.IntN(100); {
		case r < 2 && len(live) < 4 || len(live) == 0:
			live = append(live, p.New())
		case r < 4 && len(live) > 1:
			i := rng.IntN(len(live) - 1) // any but the newest, the mutable one
			live[i].Unref()
			live = append(live[:i], live[i+1:]...)
		default:
			m := live[len(live)-1]
			if m.ApproximateSize() < sizeHint {
				seq++
				m.Add(seq, base.KindSet, fmt.Appendf(nil, "k%d", seq), make([]byte, rng.IntN(500)))
			}
		}
		var held int64
		for _, m := range live {
			held += m.ArenaBytes()
		}
		peak = max(peak, held)
		if held+p.Bytes() > peak {
			t.Fatalf("step %d: memtables %d + pool %d bytes > the memtables' peak %d", step, held, p.Bytes(), peak)
		}
	}
	for _, m := range live {
		m.Unref()
	}
}
