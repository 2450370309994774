package offheap

import (
	"math/rand/v2"
	"testing"
	"unsafe"
)

// pageModel is the oracle of the allocator's memory: the pages (by
// address/pageSize) the buffers in use overlap, computed from the
// buffers' addresses and capacities alone.
type pageModel struct {
	users map[uintptr]int // buffers in use over each page
	inUse int64           // their capacities
	large int64           // those above MaxClassSize
}

func newPageModel() *pageModel { return &pageModel{users: map[uintptr]int{}} }

// pagesOf returns the first and last page b[:cap(b)] overlaps.
func pagesOf(b []byte) (first, last uintptr) {
	p := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	return p / pageSize, (p + uintptr(cap(b)) - 1) / pageSize
}

func (m *pageModel) add(b []byte, delta int) {
	m.inUse += int64(delta * cap(b))
	if cap(b) > MaxClassSize { // a mapping of its own, counted whole
		m.large += int64(delta * cap(b))
		return
	}
	first, last := pagesOf(b)
	for q := first; q <= last; q++ {
		m.users[q] += delta
		if m.users[q] == 0 {
			delete(m.users, q)
		}
	}
}

// usedBytes is the bytes of the pages buffers in use overlap.
func (m *pageModel) usedBytes() int64 { return int64(len(m.users)) * pageSize }

// check compares a with the model: InUse exactly; Resident exactly the
// pages in use, the pages kept and the large buffers; the kept pages
// within their bound, an eighth of the bytes in use and a slab, where the
// system gives pages back.
func (m *pageModel) check(t *testing.T, a *Allocator, op int) {
	t.Helper()
	if got := a.InUse(); got != m.inUse {
		t.Fatalf("op %d: InUse %d, model %d", op, got, m.inUse)
	}
	if got, want := a.Resident(), m.usedBytes()+a.Kept()+m.large; got != want {
		t.Fatalf("op %d: Resident %d, want the %d bytes of pages in use + %d kept + %d large = %d",
			op, got, m.usedBytes(), a.Kept(), m.large, want)
	}
	if bound := m.inUse/keptFraction + slabSize; a.Kept() < 0 || canRelease && a.Kept() > bound {
		t.Fatalf("op %d: %d bytes kept, outside [0, %d]", op, a.Kept(), bound)
	}
}

// TestAllocatorModel drives allocators with random Allocs and Frees over
// every class and some large sizes, and checks them against a pageModel
// after every operation; every so often it frees every buffer of one class
// and checks that the class's pages went back (Kept does not grow: the
// pages it left are released with its emptied slabs). Variants: the
// default ReleaseFrom, one of a page, and a limit below any resident
// memory, under which nothing may be kept.
func TestAllocatorModel(t *testing.T) {
	for _, tc := range []struct {
		name        string
		releaseFrom int
		limit       int64
		maxSize     int
	}{
		{"default", 0, 0, 40 << 10},
		{"release from a page", pageSize, 0, 40 << 10},
		{"small sizes", 0, 0, 4 << 10},
		{"all sizes", 0, 0, MaxClassSize + 64<<10},
		{"limit", 0, 1, 40 << 10},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &Allocator{ReleaseFrom: tc.releaseFrom}
			a.SetLimit(tc.limit)
			defer a.Release()
			m := newPageModel()
			rng := rand.New(rand.NewPCG(56, uint64(tc.maxSize)))
			var live [][]byte
			freeAt := func(i int) {
				m.add(live[i], -1)
				a.Free(live[i])
				live[i] = live[len(live)-1]
				live = live[:len(live)-1]
			}
			for op := range 20_000 {
				switch r := rng.IntN(100); {
				case r < 55 || len(live) == 0:
					// Sizes spread over the powers of two, so that
					// every class below maxSize appears.
					n := 1 + rng.IntN(1+rng.IntN(tc.maxSize))
					b := a.Alloc(n)
					if len(b) != n || cap(b) != SizeOf(n) {
						t.Fatalf("op %d: Alloc(%d): len %d cap %d, want cap %d", op, n, len(b), cap(b), SizeOf(n))
					}
					m.add(b, +1)
					live = append(live, b)
				case r < 99:
					freeAt(rng.IntN(len(live)))
				default:
					// Free every buffer of one class.
					_, size := classOf(min(cap(live[0]), MaxClassSize))
					kept := a.Kept()
					for i := len(live) - 1; i >= 0; i-- {
						if cap(live[i]) == size {
							freeAt(i)
						}
					}
					if a.Kept() > kept {
						t.Fatalf("op %d: kept %d bytes after freeing every buffer of the %d-byte class, %d before", op, a.Kept(), size, kept)
					}
				}
				m.check(t, a, op)
				if tc.limit > 0 && a.Kept() != 0 {
					t.Fatalf("op %d: %d bytes kept above the limit", op, a.Kept())
				}
			}
			for len(live) > 0 {
				freeAt(len(live) - 1)
			}
			m.check(t, a, -1)
			if got := a.Resident(); canRelease && got != 0 {
				t.Fatalf("Resident %d after freeing everything, want 0 (every slab emptied, its pages given back)", got)
			}
		})
	}
}
