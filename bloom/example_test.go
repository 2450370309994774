package bloom_test

import (
	"bytes"
	"fmt"

	"github.com/bloomkv/bloomkv/bloom"
)

// A payment service keeps its blocklist of stolen card numbers in a slow
// authoritative store. A Bloom filter of the list answers most checks in
// memory: a negative is certain and skips the store; a positive may be
// false, so it is confirmed against the store before a payment is refused.
func Example_blocklistPreCheck() {
	blocklist := map[string]bool{ // stands in for the authoritative store
		"4111-0000-0000-0001": true,
		"4111-0000-0000-0002": true,
	}
	storeLookups := 0
	isBlocked := func(card string) bool {
		storeLookups++
		return blocklist[card]
	}

	filter, err := bloom.NewClassic(1_000_000, 0.001)
	if err != nil {
		panic(err)
	}
	for card := range blocklist {
		filter.Add([]byte(card))
	}

	check := func(card string) string {
		if !filter.MayContain([]byte(card)) {
			return "allowed (filter negative, store not consulted)"
		}
		if isBlocked(card) {
			return "refused (confirmed by the store)"
		}
		return "allowed (false positive, cleared by the store)"
	}
	fmt.Println(check("4111-0000-0000-0001"))
	fmt.Println(check("5500-0000-0000-0004"))
	fmt.Println("store lookups:", storeLookups)
	// Output:
	// refused (confirmed by the store)
	// allowed (filter negative, store not consulted)
	// store lookups: 1
}

// A counting filter tracks the sessions that are open now: sessions are
// added when they start and removed when they end.
func ExampleCounting() {
	open, err := bloom.NewCounting(10_000, 0.01)
	if err != nil {
		panic(err)
	}
	open.Add([]byte("session-1"))
	open.Add([]byte("session-2"))
	if err := open.Remove([]byte("session-1")); err != nil {
		panic(err)
	}
	fmt.Println("session-1 open:", open.MayContain([]byte("session-1")))
	fmt.Println("session-2 open:", open.MayContain([]byte("session-2")))
	fmt.Println("open sessions:", open.EstimatedCount())

	// Removing what was never added is refused: it would erase others.
	err = open.Remove([]byte("session-3"))
	fmt.Println(err)
	// Output:
	// session-1 open: false
	// session-2 open: true
	// open sessions: 1
	// bloom: item not in filter: "session-3"
}

// An SSTable writer collects its keys' hashes and builds one blocked filter;
// the reader decodes it from the file and checks it before any read.
func ExampleBuildBlocked() {
	var hashes []uint64
	for _, key := range []string{"apple", "banana", "cherry"} {
		hashes = append(hashes, bloom.HashString(key))
	}
	filter, err := bloom.BuildBlocked(hashes, 10)
	if err != nil {
		panic(err)
	}
	var file bytes.Buffer
	filter.WriteTo(&file)

	var loaded bloom.Blocked
	if _, err := loaded.ReadFrom(&file); err != nil {
		panic(err)
	}
	fmt.Println("banana:", loaded.MayContain([]byte("banana")))
	fmt.Println("probes:", loaded.Probes(), "bits:", loaded.Bits())
	// Output:
	// banana: true
	// probes: 7 bits: 512
}

func ExampleClassicParams() {
	m, k, _ := bloom.ClassicParams(1_000_000, 0.01)
	fmt.Printf("%d bits (%.2f MiB), %d probes\n", m, float64(m)/8/(1<<20), k)
	fmt.Printf("%.2f bits/key; the lower bound is %.2f\n", float64(m)/1e6, bloom.MinBitsPerKey(0.01))
	// Output:
	// 9585059 bits (1.14 MiB), 7 probes
	// 9.59 bits/key; the lower bound is 6.64
}

// A service that loads many filters keeps their bits in one arena of its
// own, outside the Go heap or freed all at once, instead of one heap
// allocation per filter: UnmarshalBinaryInto asks for the words it needs.
func ExampleBlocked_UnmarshalBinaryInto() {
	filter, err := bloom.BuildBlocked([]uint64{bloom.HashString("apple"), bloom.HashString("cherry")}, 10)
	if err != nil {
		panic(err)
	}
	data, _ := filter.MarshalBinary()

	arena := make([]uint64, 0, 1<<10) // stands for memory the program manages
	var loaded bloom.Blocked
	err = loaded.UnmarshalBinaryInto(data, func(words int) []uint64 {
		n := len(arena)
		arena = arena[:n+words]
		return arena[n : n+words : n+words]
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("cherry:", loaded.MayContain([]byte("cherry")), "words from the arena:", len(arena))
	// Output:
	// cherry: true words from the arena: 8
}

// An item inserted 1,000 times and removed as often: 16-bit counters count
// it back to zero, while the default 4-bit counters saturate at 15 and
// stick, so the item can never be removed (but no other item is lost).
func ExampleCounterBits() {
	for _, width := range []int{4, 16} {
		f, err := bloom.NewCounting(1000, 0.01, bloom.CounterBits(width))
		if err != nil {
			panic(err)
		}
		for range 1000 {
			f.Add([]byte("retry-job-7"))
		}
		for range 1000 {
			if err := f.Remove([]byte("retry-job-7")); err != nil {
				panic(err)
			}
		}
		fmt.Printf("%2d-bit counters: present %v, saturated %d, %d bytes\n",
			width, f.MayContain([]byte("retry-job-7")), f.Saturated(), f.SizeBytes())
	}
	// Output:
	//  4-bit counters: present true, saturated 7, 4800 bytes
	// 16-bit counters: present false, saturated 0, 19176 bytes
}

// A filter sized for n items is about half full when it holds them (a
// little more here, as k = 7 is rounded up from 6.6); a load factor well
// above one half says more items went in than it was sized for, and its
// false-positive rate has grown past the target.
func ExampleClassic_LoadFactor() {
	f, err := bloom.NewClassic(1000, 0.01)
	if err != nil {
		panic(err)
	}
	for i := range 3000 {
		f.Add(fmt.Appendf(nil, "user-%d", i))
		if i+1 == 1000 || i+1 == 3000 {
			fmt.Printf("%d items: load factor %.2f, estimated FPR %.3f\n",
				i+1, f.LoadFactor(), f.EstimatedFalsePositiveRate())
		}
	}
	// Output:
	// 1000 items: load factor 0.52, estimated FPR 0.010
	// 3000 items: load factor 0.89, estimated FPR 0.451
}

// A filter too large to keep in memory is stored as its blocks, and a
// query reads the one 64-byte block that answers for its item — here
// from a byte slice standing in for a file.
func ExampleBlockMayContainHash() {
	keys := []string{"apple", "banana", "cherry"}
	hashes := make([]uint64, len(keys))
	for i, k := range keys {
		hashes[i] = bloom.Hash([]byte(k))
	}
	f, err := bloom.BuildBlocked(hashes, 10)
	if err != nil {
		panic(err)
	}
	stored := f.AppendBlocks(nil, 0, f.NumBlocks())

	mayContain := func(item string) bool {
		h := bloom.Hash([]byte(item))
		b := bloom.BlockOf(h, f.NumBlocks())
		return bloom.BlockMayContainHash((*[64]byte)(stored[64*b:]), h, f.Probes())
	}
	fmt.Println(mayContain("banana"), mayContain("banana") == f.MayContain([]byte("banana")))
	fmt.Println(mayContain("durian") == f.MayContain([]byte("durian")))
	// Output:
	// true true
	// true
}
