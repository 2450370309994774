package fuse_test

import (
	"fmt"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/fuse"
)

// A table writer hashes its keys with bloom.Hash — the hash its Bloom
// filter would use — and builds one fuse filter when the table is
// complete; a reader checks the filter before it reads the table.
func ExampleBuild() {
	words := []string{"apple", "banana", "cherry", "damson", "elderberry", "fig", "grape", "apple"}
	hashes := make([]uint64, len(words))
	for i, w := range words {
		hashes[i] = bloom.Hash([]byte(w))
	}
	filter, err := fuse.Build(hashes, 8)
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
		filter.SizeBytes(), len(data), fuse.SizeBytes(7, 8))
	// Output:
	// banana: true
	// grape: true
	// kiwi: false
	// 7 distinct keys, 24 slots of 8 bits, false-positive rate 0.39%
	// payload 32 bytes, encoding 84 bytes (SizeBytes says 84)
}

// A planner chooses each table's filter from its key count without
// building anything: here an 8-bit fuse filter against a blocked Bloom
// filter of the same false-positive rate.
func ExampleSizeBytes() {
	const bits = 8
	rate := fuse.FalsePositiveRate(bits)
	bloomBits := bloom.BlockedBitsPerKey(rate)
	fmt.Printf("rate %.3f%%: blocked Bloom filter %.2f bits/key\n", 100*rate, bloomBits)
	for _, n := range []int{100, 10_000, 1_000_000, 100_000_000} {
		fuseBits := 8 * float64(fuse.SizeBytes(n, bits)) / float64(n)
		fmt.Printf("%11d keys: fuse filter %6.2f bits/key\n", n, fuseBits)
	}
	// Output:
	// rate 0.391%: blocked Bloom filter 12.10 bits/key
	//         100 keys: fuse filter  20.16 bits/key
	//       10000 keys: fuse filter  10.29 bits/key
	//     1000000 keys: fuse filter   9.04 bits/key
	//   100000000 keys: fuse filter   9.01 bits/key
}

// A service that loads many filters keeps their slots in memory of its
// own — pinned, outside the Go heap, or freed all at once — instead of one
// heap allocation per filter: UnmarshalBinaryInto asks for the words it
// needs once it has checked the encoding.
func ExampleFilter_UnmarshalBinaryInto() {
	filter, err := fuse.Build([]uint64{bloom.HashString("apple"), bloom.HashString("cherry")}, 12)
	if err != nil {
		panic(err)
	}
	data, _ := filter.MarshalBinary()

	arena := make([]uint64, 0, 1<<10) // stands for memory the program manages
	var loaded fuse.Filter
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
	// cherry: true words from the arena: 4
}
