// Package murmur is the 64-bit finalizer of MurmurHash3 (fmix64), which
// the fuse and Ribbon filters mix their keys' hashes with — murmur64 in
// their docs; fuse's is the FastFilter/xorfilter library's mixsplit.
// Their serialized filters depend on it: it must never change.
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
