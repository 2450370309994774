package offheap

import (
	"testing"
	"unsafe"

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

// wholePages returns the bytes of the whole 4 KiB pages inside b: the
// oracle of what Free can give back.
func wholePages(b []byte) int {
	const page = 4096
	p := int(uintptr(unsafe.Pointer(unsafe.SliceData(b))))
	start := (p + page - 1) / page * page
	end := (p + len(b)) / page * page
	return max(end-start, 0)
}

// TestReleaseFrom checks that Free keeps a freed buffer below ReleaseFrom
// resident whole and gives back the whole pages of one at or above it:
// Resident against the sum of the buffers' sizes less their whole pages
// (computed from their addresses), and the kernel's count of resident
// memory, which must drop by about what was released.
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
			const count = 2000
			bufs := make([][]byte, count)
			for i := range bufs {
				bufs[i] = a.Alloc(tc.n)
				b := bufs[i][:cap(bufs[i])]
				for j := 0; j < len(b); j += 512 { // every page resident
					b[j] = 1
				}
				b[len(b)-1] = 1
			}
			before := rssAnon(t)
			var wantKept, pages int64
			for _, b := range bufs {
				full := b[:cap(b)]
				kept := len(full)
				if tc.released {
					kept -= wholePages(full)
					pages += int64(wholePages(full))
				}
				wantKept += int64(kept)
				a.Free(b)
			}
			if a.InUse() != 0 {
				t.Errorf("InUse %d after freeing everything, want 0", a.InUse())
			}
			if got := a.Resident(); got != wantKept {
				t.Errorf("Resident %d after the frees, want %d (each buffer's size, less its whole pages if released)", got, wantKept)
			}
			// The kernel's count moves by the pages given back, within
			// what the test's own allocations may move it (1 MiB).
			drop := before - rssAnon(t)
			if d := drop - pages; d > 1<<20 || d < -(1<<20) {
				t.Errorf("RssAnon dropped by %d bytes, want about %d (the pages released)", drop, pages)
			}
			// Reused, a buffer counts in use again and no longer kept.
			b := a.Alloc(tc.n)
			if got, want := a.Resident(), wantKept-int64(keptOf(tc.released, b))+int64(cap(b)); got != want {
				t.Errorf("Resident %d after one Alloc, want %d", got, want)
			}
			a.Free(b)
		})
	}
}

// keptOf is what stays resident of a buffer when freed.
func keptOf(released bool, b []byte) int {
	b = b[:cap(b)]
	if released {
		return len(b) - wholePages(b)
	}
	return len(b)
}

// TestTrim frees buffers that Free keeps whole (below ReleaseFrom) and
// checks that Trim gives back their whole pages: its count and Resident
// against the pages computed from the buffers' addresses — all of each
// buffer of the 4 KiB class, page-aligned in its slab — and the kernel's
// count of resident memory; a second Trim finds nothing more.
func TestTrim(t *testing.T) {
	for _, n := range []int{4096, 6000} {
		a := Allocator{}
		const count = 2000
		bufs := make([][]byte, count)
		for i := range bufs {
			bufs[i] = a.Alloc(n)
			b := bufs[i][:cap(bufs[i])]
			for j := 0; j < len(b); j += 512 {
				b[j] = 1
			}
			b[len(b)-1] = 1
		}
		var pages int64
		for _, b := range bufs {
			pages += int64(wholePages(b[:cap(b)]))
			a.Free(b)
		}
		if n == 4096 && pages != count*4096 {
			t.Errorf("%d buffers of 4 KiB hold %d bytes of whole pages, want all of them", count, pages)
		}
		kept, before := a.Resident(), rssAnon(t)
		if got := a.Trim(); got != pages {
			t.Errorf("n %d: Trim released %d bytes, want %d (the freed buffers' whole pages)", n, got, pages)
		}
		if got := a.Resident(); got != kept-pages {
			t.Errorf("n %d: Resident %d after Trim, want %d", n, got, kept-pages)
		}
		if drop := before - rssAnon(t); drop-pages > 1<<20 || drop-pages < -(1<<20) {
			t.Errorf("n %d: RssAnon dropped by %d bytes, want about %d", n, drop, pages)
		}
		if got := a.Trim(); got != 0 {
			t.Errorf("n %d: a second Trim released %d bytes, want 0", n, got)
		}
		a.Release()
	}
}
