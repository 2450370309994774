module github.com/bloomkv/bloomkv

go 1.23

require (
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/dgryski/go-rendezvous v0.0.0-20200823014737-9f7001d12a5f // indirect
	github.com/google/btree v1.1.3 // indirect
	github.com/klauspost/compress v1.18.2 // indirect
	github.com/redis/go-redis/v9 v9.17.3 // indirect
)
