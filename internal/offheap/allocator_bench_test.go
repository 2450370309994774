package offheap

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkAllocFree measures an Alloc and a Free in a steady state, as
// the block cache makes them: a population of 1024 buffers, the oldest
// freed for each new one. same-class allocates one size (a cache of
// page-sized blocks), mixed-classes sizes from 200 bytes to 20 KiB (a
// cache that also holds index partitions and larger blocks); parallel is
// same-class from every P, on one allocator.
func BenchmarkAllocFree(b *testing.B) {
	const population = 1024
	run := func(b *testing.B, a *Allocator, sizes []int) {
		ring := make([][]byte, population)
		for i := range ring {
			ring[i] = a.Alloc(sizes[i%len(sizes)])
		}
		i := 0
		for b.Loop() {
			k := i % population
			a.Free(ring[k])
			ring[k] = a.Alloc(sizes[i%len(sizes)])
			i++
		}
		for _, buf := range ring {
			a.Free(buf)
		}
	}
	b.Run("same-class", func(b *testing.B) {
		var a Allocator
		defer a.Release()
		run(b, &a, []int{4100})
	})
	b.Run("mixed-classes", func(b *testing.B) {
		var a Allocator
		defer a.Release()
		rng := rand.New(rand.NewPCG(1, 1))
		sizes := make([]int, 4099) // coprime to the population
		for i := range sizes {
			sizes[i] = 200 + rng.IntN(20<<10)
		}
		run(b, &a, sizes)
	})
	b.Run("parallel", func(b *testing.B) {
		var a Allocator
		defer a.Release()
		b.RunParallel(func(pb *testing.PB) {
			ring := make([][]byte, population/4)
			for i := range ring {
				ring[i] = a.Alloc(4100)
			}
			i := 0
			for pb.Next() {
				k := i % len(ring)
				a.Free(ring[k])
				ring[k] = a.Alloc(4100)
				i++
			}
			for _, buf := range ring {
				a.Free(buf)
			}
		})
	})
}
