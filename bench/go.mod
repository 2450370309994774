module github.com/bloomkv/bloomkv/bench

go 1.23

require (
	github.com/bits-and-blooms/bloom/v3 v3.7.1
	github.com/bloomkv/bloomkv v0.0.0
)

require (
	github.com/bits-and-blooms/bitset v1.24.2 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
)

replace github.com/bloomkv/bloomkv => ../
