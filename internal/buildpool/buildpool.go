// Package buildpool recycles the working memory of filter builds. A fill
// or a compaction builds filter after filter of similar sizes, so a
// build's buffers are taken from a pool rather than allocated and zeroed
// afresh — but only those of builds up to a bound, so that a pooled set
// stays small whatever tables were built, and, like all of a sync.Pool,
// sets left unused are freed by the garbage collector.
package buildpool

import "sync"

// Pool recycles sets of buffers of type T for builds of up to MaxKeys
// keys. The zero value is not usable: make one with New.
//
// INVARIANT: every set in the pool has only been used for builds of at
// most MaxKeys keys, so its slices hold no more than those need.
type Pool[T any] struct {
	maxKeys int
	pool    sync.Pool
}

// New returns a pool of buffers for builds of up to maxKeys keys.
func New[T any](maxKeys int) *Pool[T] {
	p := &Pool[T]{maxKeys: maxKeys}
	p.pool.New = func() any { return new(T) }
	return p
}

// Get returns a set of buffers for a build of n keys: a pooled one if n
// is at most the pool's bound, else a new one. Put returns it after the
// build.
func (p *Pool[T]) Get(n int) *T {
	if n > p.maxKeys {
		return new(T)
	}
	return p.pool.Get().(*T)
}

// Put returns b, used for a build of n keys, to the pool if n is at most
// the pool's bound, and drops it otherwise.
func (p *Pool[T]) Put(b *T, n int) {
	if n <= p.maxKeys {
		p.pool.Put(b)
	}
}
