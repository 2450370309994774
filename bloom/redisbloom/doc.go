// Package redisbloom keeps a classic Bloom filter's bits in Redis, so that
// every replica of an application, on any machine, shares one filter that
// outlives their restarts. The filter is the one of package bloom: the same
// sizing (bloom.ClassicParams), the same hash and the same bit positions
// (bloom.ClassicLocations), so a filter moves between memory and Redis bit
// for bit (ToRedis, FromRedis).
//
// It works on any go-redis v9 UniversalClient — a Client, a ClusterClient or
// a Ring — and needs Redis 6.2 or later (BITFIELD_RO).
//
// # Redis layout
//
// A filter named NAME is two keys with the same hash tag, so that Redis
// Cluster and Ring keep them on one node and one script may touch both:
//
//	bloom:{NAME}:meta  hash    format  "1", the layout version
//	                           m       bits, 1 … 2^32
//	                           k       probes per item, 1 … 64
//	                           n       items it was sized for (0: sized by bits)
//	                           p       target false-positive rate (0: unknown)
//	bloom:{NAME}:bits  string  the bitmap: bit i at byte i/8, mask 0x80>>(i mod 8),
//	                           the order of SETBIT and BITFIELD u1 offsets
//
// The bitmap string is only as long as its highest set bit needs (at most
// ⌈m/8⌉ bytes); Redis reads missing bytes as zeros. An import (ToRedis) also
// uses bloom:{NAME}:tmp for the length of one script. A name may not be empty
// or contain '}', either of which would split the hash tag.
//
// # Round trips and atomicity
//
// Every operation is one Lua script run by EVALSHA (EVAL when the server lacks
// it), passing its keys in KEYS so that Cluster routes it. Inside, Add runs
// BITFIELD SET, MayContain BITFIELD_RO GET and TestAndAdd BITFIELD SET (which
// returns the old bits) over all the k·len(items) positions of the batch,
// 1024 positions per BITFIELD because Lua's unpack is limited; the script
// folds the bits into one answer per item; LoadFactor runs one BITCOUNT over
// the bits key. A script runs atomically, so each
// item's test-and-add is atomic: of many
// concurrent TestAndAdd calls of one new item, exactly one reports it absent
// (unless it is a false positive). To keep any one script short, a batch of
// more than 8192/k items is split into scripts of that many items, sent
// together in one pipeline: still one round trip, atomic per script.
//
// Each script first checks that the meta key still holds the m and k the
// handle opened and that the bits key exists, and only then touches the bits.
// A filter deleted, lost (a restart without persistence, an eviction) or
// recreated with other parameters is therefore reported as an error by every
// handle still open on it, and never written into or read with the wrong bit
// positions. The check costs an HMGET and an EXISTS inside the script, no
// extra round trip. Give the keys no TTL, and run Redis with the noeviction
// policy (or a volatile-* one): an evicted key is detected, but its items are
// lost.
//
// # Errors
//
// INVARIANT: no error is ever reported as "absent". MayContain and
// TestAndAdd return a nil slice with every error — connection refused, a
// timeout, a missing filter (ErrNotFound), a recreated one (ErrConflict),
// damaged keys (ErrCorrupt), WRONGTYPE at a key — so a failure never becomes
// a false negative. A failed Add may have added some of its items (adding is
// idempotent, so retry it).
//
// A context ending first makes a call return at once with an error wrapping
// ctx.Err(), and a context already done sends nothing. Unless the client was
// built with ContextTimeoutEnabled, go-redis does not abort the socket I/O,
// so the command may still run on the server afterwards; for a Bloom filter
// that is harmless, and why a caller treats an error as "unknown".
//
// Invalid arguments return a *bloom.ArgumentError naming the argument; in
// particular m above MaxBits, the 2^32 bits of the largest Redis string.
//
// INVARIANT: the meta and bits keys of a filter exist together. Creating sets
// both in one script (the bits key as an empty string), Delete removes both in
// one command, and every script refuses to work on one without the other.
//
// INVARIANT: for the same m, k and items, the bits key holds exactly the bytes
// (*bloom.Classic).AppendBitmap returns, up to trailing zero bytes.
package redisbloom
