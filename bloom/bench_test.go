package bloom

import (
	"bytes"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// The benchmarks use the setting: 16-byte keys, 10 bits per key,
// n = 1,000,000. Keys are made before the timer starts.
const benchN, benchBitsPerKey = 1_000_000, 10

var benchKeys = sync.OnceValues(func() ([][]byte, [][]byte) {
	return keySet('P', benchN, 1), keySet('A', benchN, 2)
})

// benchFilters returns one filter of each kind holding the present keys,
// each with 10 bits (counting: 10 counters) per key.
func benchFilters(b *testing.B) map[string]Filter {
	present, _ := benchKeys()
	classic, err := NewClassicSize(benchN*benchBitsPerKey, probesFor(benchBitsPerKey))
	must(b, err)
	counting, err := NewCountingSize(benchN*benchBitsPerKey, probesFor(benchBitsPerKey))
	must(b, err)
	blocked, err := NewBlocked(benchN, benchBitsPerKey)
	must(b, err)
	filters := map[string]Filter{"classic": classic, "blocked": blocked, "counting": counting}
	for _, f := range filters {
		for _, k := range present {
			f.Add(k)
		}
	}
	return filters
}

func BenchmarkAdd(b *testing.B) {
	present, _ := benchKeys()
	for _, kind := range []string{"classic", "blocked", "counting"} {
		b.Run(kind, func(b *testing.B) {
			var f Filter
			switch kind {
			case "classic":
				f, _ = NewClassicSize(benchN*benchBitsPerKey, probesFor(benchBitsPerKey))
			case "blocked":
				f, _ = NewBlocked(benchN, benchBitsPerKey)
			default:
				f, _ = NewCountingSize(benchN*benchBitsPerKey, probesFor(benchBitsPerKey))
			}
			b.ResetTimer()
			for i := range b.N {
				f.Add(present[i%benchN])
			}
		})
	}
}

func BenchmarkMayContain(b *testing.B) {
	present, absent := benchKeys()
	filters := benchFilters(b)
	for _, kind := range []string{"classic", "blocked", "counting"} {
		f := filters[kind]
		for _, set := range []struct {
			name string
			keys [][]byte
		}{{"present", present}, {"absent", absent}} {
			b.Run(kind+"/"+set.name, func(b *testing.B) {
				hits := 0
				for i := range b.N {
					if f.MayContain(set.keys[i%benchN]) {
						hits++
					}
				}
				b.ReportMetric(float64(hits)/float64(b.N), "positive/op")
			})
		}
	}
}

// BenchmarkMembership is the classic lesson, at the sizes the README's
// table shows: a filter's membership check costs the same at any n (one
// hash, k probes), while scanning a list of the keys grows with n; a Go map
// is the exact set for perspective, at over 50 times a filter's memory
// (BenchmarkMemory).
// Every query is for an absent key — the common case of a pre-check, and
// the one where a scan compares against every key. The filters have 10 bits
// per key; the keys are 16 bytes.
func BenchmarkMembership(b *testing.B) {
	for _, n := range []int{100, 10_000, 100_000} {
		keys := keySet('P', n, 3)
		absent := keySet('A', 1024, 4)
		strs := make([]string, n)
		set := make(map[string]struct{}, n)
		for i, k := range keys {
			strs[i] = string(k)
			set[strs[i]] = struct{}{}
		}
		absentStrs := make([]string, len(absent))
		for i, k := range absent {
			absentStrs[i] = string(k)
		}
		classic, err := NewClassicSize(uint64(n)*benchBitsPerKey, probesFor(benchBitsPerKey))
		must(b, err)
		blocked, err := NewBlocked(n, benchBitsPerKey)
		must(b, err)
		for _, k := range keys {
			classic.Add(k)
			blocked.Add(k)
		}
		check := map[string]func(i int) bool{
			"classic": func(i int) bool { return classic.MayContain(absent[i]) },
			"blocked": func(i int) bool { return blocked.MayContain(absent[i]) },
			"map": func(i int) bool {
				_, ok := set[absentStrs[i]]
				return ok
			},
			"scan-strings": func(i int) bool {
				q := absentStrs[i]
				for _, s := range strs {
					if s == q {
						return true
					}
				}
				return false
			},
			"scan-bytes": func(i int) bool {
				q := absent[i]
				for _, k := range keys {
					if bytes.Equal(k, q) {
						return true
					}
				}
				return false
			},
		}
		for _, name := range []string{"classic", "blocked", "map", "scan-strings", "scan-bytes"} {
			fn := check[name]
			b.Run(fmt.Sprintf("n=%d/%s", n, name), func(b *testing.B) {
				hits := 0
				for i := range b.N {
					if fn(i % len(absent)) {
						hits++
					}
				}
				b.ReportMetric(float64(hits)/float64(b.N), "positive/op")
			})
		}
	}
}

// BenchmarkMemory reports the bytes per key of each filter and of a
// map[string]struct{} holding the same 1,000,000 16-byte keys — the memory
// the filter saves, at the price of its false positives.
func BenchmarkMemory(b *testing.B) {
	present, _ := benchKeys()
	for range b.N {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		set := make(map[string]struct{})
		for _, k := range present {
			set[string(k)] = struct{}{}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/benchN, "map-B/key")
		runtime.KeepAlive(set)
	}
	for kind, f := range benchFilters(b) {
		b.ReportMetric(float64(f.SizeBytes())/benchN, kind+"-B/key")
	}
}

// stripedCounting is the alternative design for a concurrent counting
// filter, kept here to measure against: plain counters guarded by one mutex
// per stripe of words. Remove takes every lock it needs, in order.
type stripedCounting struct {
	c     *Counting
	locks [64]sync.Mutex
}

func (s *stripedCounting) lockAll(h uint64, fn func(i uint64)) {
	var stripes uint64
	for _, i := range ClassicLocations(make([]uint64, 0, 16), h, s.c.m, s.c.k) {
		stripes |= 1 << (i / (64 / uint64(s.c.width)) % 64)
	}
	for st := range 64 {
		if stripes&(1<<st) != 0 {
			s.locks[st].Lock()
		}
	}
	h1, h2 := h, remix(h)
	for range s.c.k {
		fn(reduce(h1, s.c.m))
		h1 += h2
	}
	for st := range 64 {
		if stripes&(1<<st) != 0 {
			s.locks[st].Unlock()
		}
	}
}

func (s *stripedCounting) add(h uint64) {
	s.lockAll(h, func(i uint64) {
		w, shift := s.c.counter(i)
		if *w>>shift&s.c.max != s.c.max {
			*w += 1 << shift
		}
	})
}

func (s *stripedCounting) mayContain(h uint64) bool {
	ok := true
	s.lockAll(h, func(i uint64) {
		w, shift := s.c.counter(i)
		ok = ok && *w>>shift&s.c.max != 0
	})
	return ok
}

// BenchmarkCountingConcurrency decides the counting filter's design: the
// same mix (one add per three queries) from all CPUs, with compare-and-swap
// on words (the package's) and with striped locks.
func BenchmarkCountingConcurrency(b *testing.B) {
	present, _ := benchKeys()
	hashes := make([]uint64, benchN)
	for i, k := range present {
		hashes[i] = Hash(k)
	}
	run := func(b *testing.B, add func(uint64), query func(uint64) bool) {
		var next atomic.Uint64
		b.RunParallel(func(pb *testing.PB) {
			i := next.Add(1 << 20)
			for pb.Next() {
				h := hashes[i%benchN]
				if i%4 == 0 {
					add(h)
				} else {
					query(h)
				}
				i++
			}
		})
	}
	b.Run("cas", func(b *testing.B) {
		f, _ := NewCountingSize(benchN*benchBitsPerKey, 7)
		run(b, f.AddHash, f.MayContainHash)
	})
	b.Run("striped-locks", func(b *testing.B) {
		f, _ := NewCountingSize(benchN*benchBitsPerKey, 7)
		s := &stripedCounting{c: f}
		run(b, s.add, s.mayContain)
	})
}
