package ribbon_test

import (
	"fmt"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/ribbon"
)

// A table writer hashes its keys with bloom.Hash — the hash its Bloom
// filter would use — and builds one Ribbon filter when the table is
// complete; a reader checks the filter before it reads the table.
func ExampleBuild() {
	words := []string{"apple", "banana", "cherry", "damson", "elderberry", "fig", "grape", "apple"}
	hashes := make([]uint64, len(words))
	for i, w := range words {
		hashes[i] = bloom.Hash([]byte(w))
	}
	filter, err := ribbon.Build(hashes, 8)
	if err != nil {
		panic(err) // a writer would fall back to a Bloom filter
	}
	for _, w := range []string{"banana", "grape", "kiwi"} {
		fmt.Printf("%s: %v\n", w, filter.MayContainHash(bloom.Hash([]byte(w))))
	}
	data, _ := filter.MarshalBinary()
	fmt.Printf("%d distinct keys, %d slots of %d bits, false-positive rate %.2f%%\n",
		filter.Keys(), filter.Slots(), filter.Bits(), 100*filter.ExpectedFalsePositiveRate())
	fmt.Printf("payload %d bytes, encoding %d bytes (SizeBytes says %d)\n",
		filter.SizeBytes(), len(data), ribbon.SizeBytes(7, 8))
	// Output:
	// banana: true
	// grape: true
	// kiwi: false
	// 7 distinct keys, 128 slots of 8 bits, false-positive rate 0.39%
	// payload 128 bytes, encoding 180 bytes (SizeBytes says 180)
}

// A planner chooses each table's filter from its key count without
// building anything: BitsPerKey is exact. Per bit of −log2 of the rate, a
// Ribbon filter of a million keys spends 1.05 bits (8.43 for
// 2^-8), a blocked Bloom filter 1.5 (12.10).
func ExampleBitsPerKey() {
	const r = 8
	rate := ribbon.FalsePositiveRate(r)
	fmt.Printf("rate %.3f%%: blocked Bloom filter %.2f bits/key\n", 100*rate, bloom.BlockedBitsPerKey(rate))
	for _, n := range []int{100, 10_000, 1_000_000, 100_000_000} {
		fmt.Printf("%11d keys: Ribbon filter %6.2f bits/key\n", n, ribbon.BitsPerKey(r, n))
	}
	// Output:
	// rate 0.391%: blocked Bloom filter 12.10 bits/key
	//         100 keys: Ribbon filter  14.40 bits/key
	//       10000 keys: Ribbon filter   8.49 bits/key
	//     1000000 keys: Ribbon filter   8.43 bits/key
	//   100000000 keys: Ribbon filter   8.69 bits/key
}

// A service that loads many filters keeps their solutions in memory of its
// own — pinned, outside the Go heap, or freed all at once — instead of one
// heap allocation per filter: UnmarshalBinaryInto asks for the words it
// needs once it has checked the encoding.
func ExampleFilter_UnmarshalBinaryInto() {
	filter, err := ribbon.Build([]uint64{bloom.HashString("apple"), bloom.HashString("cherry")}, 12)
	if err != nil {
		panic(err)
	}
	data, _ := filter.MarshalBinary()

	arena := make([]uint64, 0, 1<<10) // stands for memory the program manages
	var loaded ribbon.Filter
	err = loaded.UnmarshalBinaryInto(data, func(words int) []uint64 {
		n := len(arena)
		arena = arena[:n+words]
		return arena[n : n+words : n+words]
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("cherry:", loaded.MayContainHash(bloom.HashString("cherry")), "words from the arena:", len(arena))
	// Output:
	// cherry: true words from the arena: 24
}
