package offheap

import (
	"runtime"
	"testing"
)

func TestAllocFree(t *testing.T) {
	for _, n := range []int{1, 4095, 4096, 128 << 10, 1<<20 + 3} {
		b := Alloc(n)
		if len(b.Bytes) != n || cap(b.Bytes) != n {
			t.Fatalf("Alloc(%d): len %d cap %d", n, len(b.Bytes), cap(b.Bytes))
		}
		for i, c := range b.Bytes {
			if c != 0 {
				t.Fatalf("Alloc(%d): byte %d is %d, want zero", n, i, c)
			}
		}
		for i := range b.Bytes {
			b.Bytes[i] = byte(i)
		}
		for i, c := range b.Bytes {
			if c != byte(i) {
				t.Fatalf("Alloc(%d): byte %d reads %d after writing %d", n, i, c, byte(i))
			}
		}
		if want := runtime.GOOS != "windows" && runtime.GOOS != "plan9" && runtime.GOOS != "js" && runtime.GOOS != "wasip1"; b.mapped != want {
			t.Errorf("Alloc(%d) mapped = %v on %s", n, b.mapped, runtime.GOOS)
		}
		Free(b)
	}
	Free(Buffer{})
}

// TestNotOnHeap checks the point of the package: memory from Alloc does not
// count in the Go heap.
func TestNotOnHeap(t *testing.T) {
	if !Alloc(1).mapped {
		t.Skip("no mmap on " + runtime.GOOS)
	}
	const n = 64 << 20
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	b := Alloc(n)
	for i := 0; i < n; i += 4096 {
		b.Bytes[i] = 1
	}
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > n/4 {
		t.Errorf("the heap grew by %d bytes after Alloc(%d)", grew, n)
	}
	Free(b)
}

func TestAllocRejectsNonPositive(t *testing.T) {
	for _, n := range []int{0, -1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Alloc(%d) did not panic", n)
				}
			}()
			Alloc(n)
		}()
	}
}

func TestClassOf(t *testing.T) {
	prev := 0
	for n := 1; n <= MaxClassSize; n++ {
		index, size := classOf(n)
		if size < n || size-n >= max(n/16, 256) && n > 256 || index < 0 || index >= numClasses {
			t.Fatalf("classOf(%d) = %d, %d", n, index, size)
		}
		if classSize(index) != size {
			t.Fatalf("classOf(%d) = %d, %d but classSize(%d) = %d", n, index, size, index, classSize(index))
		}
		if got, gotSize := classOf(size); got != index || gotSize != size {
			t.Fatalf("classOf(%d) = %d, %d but classOf(%d) = %d, %d", n, index, size, size, got, gotSize)
		}
		if size != prev {
			if size < prev {
				t.Fatalf("class sizes decrease at %d", n)
			}
			prev = size
		}
	}
	if index, _ := classOf(MaxClassSize); index != numClasses-1 {
		t.Fatalf("the largest class is %d, want %d", index, numClasses-1)
	}
}

// TestAllocator checks the allocator against a model: live buffers never
// overlap and keep what was written to them, whatever the order of frees.
func TestAllocator(t *testing.T) {
	var a Allocator
	type live struct {
		b    []byte
		fill byte
	}
	var bufs []live
	check := func(l live) {
		for i, c := range l.b {
			if c != l.fill {
				t.Fatalf("buffer of %d bytes: byte %d is %d, want %d (overwritten)", len(l.b), i, c, l.fill)
			}
		}
	}
	sizes := []int{1, 100, 256, 257, 4096, 4100, 4352, 4353, 65536, MaxClassSize, MaxClassSize + 1, 1 << 20}
	for round := range 3000 {
		n := sizes[round%len(sizes)] + round%7
		b := a.Alloc(n)
		if len(b) != n || cap(b) < n {
			t.Fatalf("Alloc(%d): len %d cap %d", n, len(b), cap(b))
		}
		l := live{b, byte(round)}
		for i := range b {
			b[i] = l.fill
		}
		bufs = append(bufs, l)
		if round%3 == 0 { // free one in the middle, after checking it
			i := (round * 7919) % len(bufs)
			check(bufs[i])
			a.Free(bufs[i].b)
			bufs = append(bufs[:i], bufs[i+1:]...)
		}
	}
	for _, l := range bufs {
		check(l)
		a.Free(l.b)
	}
	a.Release()
	// Usable again after Release.
	b := a.Alloc(10)
	a.Free(b)
	a.Release()
}

func TestAllocatorReusesFreed(t *testing.T) {
	var a Allocator
	defer a.Release()
	b := a.Alloc(4100)
	p := &b[0]
	a.Free(b)
	if c := a.Alloc(4200); &c[0] != p {
		t.Error("an Alloc of the same class did not reuse the freed buffer")
	}
}

func TestAllocatorFreeMisuse(t *testing.T) {
	var a Allocator
	defer a.Release()
	for name, b := range map[string][]byte{
		"not a class size": make([]byte, 300),
		"large, not ours":  make([]byte, MaxClassSize+1),
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Free of a buffer %s did not panic", name)
				}
			}()
			a.Free(b)
		}()
	}
}
