package offheap

import (
	"testing"

	"github.com/bloomkv/bloomkv/internal/procstat"
)

// rssAnon returns the process's anonymous resident memory, from
// /proc/self/status.
func rssAnon(t *testing.T) int64 {
	t.Helper()
	r, err := procstat.ReadResident()
	if err != nil {
		t.Fatal(err)
	}
	return r.Anon
}

// pageSet is the oracle of the pages buffers overlap, from their
// addresses: the set of their 4 KiB pages.
type pageSet map[uintptr]bool

func (ps pageSet) add(bufs ...[]byte) pageSet {
	for _, b := range bufs {
		first, last := pagesOf(b)
		for q := first; q <= last; q++ {
			ps[q] = true
		}
	}
	return ps
}

func (ps pageSet) bytes() int64 { return int64(len(ps)) * pageSize }

// allocTouched allocates count buffers of n bytes from a and writes every
// page of each, as the block cache's copy does.
func allocTouched(a *Allocator, n, count int) [][]byte {
	bufs := make([][]byte, count)
	for i := range bufs {
		bufs[i] = a.Alloc(n)
		b := bufs[i][:cap(bufs[i])]
		for j := 0; j < len(b); j += 512 {
			b[j] = 1
		}
		b[len(b)-1] = 1
	}
	return bufs
}

// nearly reports whether the kernel's count moved by want bytes, within
// what the test's own allocations may move it (1 MiB).
func nearly(got, want int64) bool { return got-want <= 1<<20 && got-want >= -(1<<20) }

// TestReleaseFrom frees one buffer in 16 of many (few enough that the kept
// pages stay within their bound, an eighth of what is in use) and checks
// what Free
// keeps: below ReleaseFrom the pages it leaves unused stay resident, from
// ReleaseFrom up they go back — Resident against the pages the buffers
// overlap (from their addresses), and the kernel's count of resident
// memory, which must drop by about what was released; then frees the rest
// and checks that every page went back, the slabs emptied.
func TestReleaseFrom(t *testing.T) {
	for _, tc := range []struct {
		name        string
		releaseFrom int
		n           int // bytes per buffer
		released    bool
	}{
		{"default, small buffers kept", 0, 6000, false},
		{"default, large buffers released", 0, 40 << 10, true},
		{"a page, small buffers released", 4096, 6000, true},
		{"a page, sub-page buffers kept", 4096, 3000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := Allocator{ReleaseFrom: tc.releaseFrom}
			defer a.Release()
			bufs := allocTouched(&a, tc.n, 2000)
			all := pageSet{}.add(bufs...)
			if got := a.Resident(); got != all.bytes() {
				t.Fatalf("Resident %d after the Allocs, want the %d bytes of the pages the buffers overlap", got, all.bytes())
			}
			// The oracle computed before the kernel's count is read: the
			// test's own allocations stay out of its change.
			var kept, freed [][]byte
			for i, b := range bufs {
				if i%16 != 0 {
					kept = append(kept, b)
				} else {
					freed = append(freed, b)
				}
			}
			want := all.bytes() // kept
			if tc.released {
				want = pageSet{}.add(kept...).bytes()
			}
			before := rssAnon(t)
			for _, b := range freed {
				a.Free(b)
			}
			if got := a.Resident(); got != want {
				t.Errorf("Resident %d after freeing one buffer in 16, want %d", got, want)
			}
			if drop := before - rssAnon(t); !nearly(drop, all.bytes()-want) {
				t.Errorf("RssAnon dropped by %d bytes, want about %d (the pages released)", drop, all.bytes()-want)
			}
			// Reused, a buffer takes pages kept, or counts those released
			// again.
			b := a.Alloc(tc.n)
			kept = append(kept, b)
			if tc.released {
				want = pageSet{}.add(kept...).bytes()
			}
			if got := a.Resident(); got != want {
				t.Errorf("Resident %d after one Alloc, want %d", got, want)
			}
			before = rssAnon(t)
			for _, b := range kept {
				a.Free(b)
			}
			if got := a.Resident(); got != 0 {
				t.Errorf("Resident %d after freeing everything, want 0", got)
			}
			if drop := before - rssAnon(t); !nearly(drop, want) {
				t.Errorf("RssAnon dropped by %d bytes after freeing everything, want about %d", drop, want)
			}
		})
	}
}

// TestTrim frees one buffer in 16 of many that Free keeps (below
// ReleaseFrom; few enough to stay within the bound of what it keeps) and
// checks that Trim gives back every page that no buffer
// in use overlaps: its count and Resident against the pages computed from
// the buffers' addresses, and the kernel's count of resident memory; a
// second Trim finds nothing more.
func TestTrim(t *testing.T) {
	for _, n := range []int{300, 4096, 6000} {
		a := Allocator{}
		bufs := allocTouched(&a, n, 2000)
		all, inUse := pageSet{}.add(bufs...), pageSet{}
		for i, b := range bufs {
			if i%16 != 0 {
				inUse.add(b)
			} else {
				a.Free(b)
			}
		}
		kept := all.bytes() - inUse.bytes()
		if n == 4096 && kept != 125*4096 {
			t.Errorf("125 freed buffers of 4 KiB leave %d bytes of pages unused, want all of theirs", kept)
		}
		if got := a.Kept(); got != kept {
			t.Errorf("n %d: Kept %d, want the %d bytes of pages the freed buffers leave unused", n, got, kept)
		}
		before := rssAnon(t)
		if got := a.Trim(); got != kept {
			t.Errorf("n %d: Trim released %d bytes, want %d", n, got, kept)
		}
		if got := a.Resident(); got != inUse.bytes() {
			t.Errorf("n %d: Resident %d after Trim, want %d (the pages of the buffers in use)", n, got, inUse.bytes())
		}
		if drop := before - rssAnon(t); !nearly(drop, kept) {
			t.Errorf("n %d: RssAnon dropped by %d bytes, want about %d", n, drop, kept)
		}
		if got := a.Trim(); got != 0 {
			t.Errorf("n %d: a second Trim released %d bytes, want 0", n, got)
		}
		a.Release()
	}
}
