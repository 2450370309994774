// Package murmur is two 64-bit finalizers of the MurmurHash3 family:
// fmix64 itself (Mix64), which the fuse and Ribbon filters mix their keys'
// hashes with — murmur64 in their docs; fuse's is the FastFilter/xorfilter
// library's mixsplit — and Stafford's variant 13 (Mix13), SplitMix64's
// finalizer, from which the blocked Bloom filter takes its second hash and
// the range filter its blocks' offsets. Serialized filters depend on both:
// they must never change.
package murmur

// Mix64 is fmix64: a bijection of 64-bit values that mixes every input
// bit into every output bit.
func Mix64(h uint64) uint64 {
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}

// Mix13 is Stafford's variant 13 of fmix64, the finalizer of SplitMix64:
// another bijection of 64-bit values that mixes every input bit into
// every output bit, with other shifts and multipliers.
func Mix13(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	h ^= h >> 31
	return h
}
