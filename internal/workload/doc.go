// Package workload is bloomkv's benchmark engine: the keys, values and
// workloads of `bloomkv bench` and of the peers comparison in the bench
// module, in the style of LevelDB's db_bench, so that every engine measured
// sees the same operations in the same order.
//
// It is internal to the project's own tools, not part of the store's API:
// cmd/bloomkv and the bench module (a separate Go module that brings in
// the peer stores) import it — Go's internal rule goes by import path, and
// both live under github.com/bloomkv/bloomkv — so that the workloads, key
// generator, seeds and latency histogram are written once and shared, and
// only the adapters differ. It does not depend on the root package: the
// bloomkv adapter is package cmd/bloomkv/benchstore.
//
// # Keys and values
//
// A Keys describes N present keys and N missing ones, each KeySize bytes
// (default 16) of zero-padded decimal digits: present key i is the number
// 2i, missing key i the number 2i+1. Every missing key therefore falls
// between two present keys, inside the key range of every table that covers
// its neighbours, so that no key-range check can reject it: only a filter
// can. Values are ValueSize bytes (default 100) cut from a buffer of
// pseudo-random printable bytes made from the seed, half of each 100-byte
// stretch repeating the other half, so that they compress to about half,
// as db_bench's values do.
//
// # Workloads
//
//	fillseq        put the N present keys in key order
//	fillrandom     put the N present keys in a random order (a permutation:
//	               every key is written once, so reads know what is present;
//	               computed key by key, not held in memory)
//	filloverwrite  put each of the N present keys WritesPerKey times
//	               (default 3): N·WritesPerKey puts in one random order (a
//	               shuffled sequence, each key's writes spread over the
//	               whole fill); each write's value differs from the key's
//	               others, and the last is the value fillrandom writes, so
//	               the reads that follow check that the last write won
//	readrandom     Get a uniformly random present key, Reads times
//	readmissing    Get a uniformly random missing key, Reads times
//	readmixed      Get a missing key with probability MissRatio, else a
//	               present one, Reads times
//	scan           seek to a random present key and read ScanLength
//	               entries, Reads/ScanLength times (at least once)
//	scankeys       scan, reading each entry's key and not its value (a
//	               store that keeps values apart reads none); it needs
//	               a KeyScanner
//	multiget       read MultiGetBatch (64) random present keys in one
//	               call, Reads/64 times (at least once): as many keys as
//	               readrandom's Gets; it needs a MultiGetter
//
// The prefix workloads write and read the same N keys and values in
// another layout (see prefix.go): groups of PrefixKeys keys (default 16)
// that share a prefix, "0000000000000/00" … "0000000000000/15",
// "0000000000002/00" …, the present prefixes even numbers and the missing
// ones odd, each between two present groups. They need a store with prefix
// seeks (PrefixSeeker; for bloomkv, Options.Prefix =
// benchstore.PrefixExtractor()):
//
//	fillprefix         put the N keys in prefix form in a random order
//	seekprefix         prefix-seek a random present prefix and read its
//	                   keys (all PrefixKeys of them), Reads times
//	seekprefixmissing  prefix-seek a random missing prefix (it finds
//	                   nothing), Reads times: every table whose key range
//	                   holds the prefix is read, unless a prefix filter
//	                   rules the prefix out
//
// The range workloads write the same N keys and values in a third layout
// (see RangeRun): present key i is the number i + 128·⌊i/128⌋, so that
// runs of 128 consecutive numbers alternate with gaps of 128 no key has.
// They need a store with bounded scans (RangeScanner; for bloomkv, an
// iterator with both bounds, which range filters let skip tables):
//
//	fillrange     put the N keys in range form in a random order
//	rangescanW    scan W consecutive numbers inside a random run, W keys
//	              (W = 2, 8, 32, 128), Reads/W times
//	rangeemptyW   scan W consecutive numbers inside a random gap, which
//	              holds no key but lies inside the key range of every
//	              table holding the runs around it, Reads times: every
//	              such table is read unless its range filter rules the
//	              range out
//
// # YCSB
//
// The YCSB workloads are YCSB's CoreWorkload with its property names and
// defaults (see YCSB and the comment at the top of ycsb.go): ycsb-load
// inserts recordcount records ("user" and the record's number hashed by
// FNV-1a, fieldcount fields of fieldlength bytes in one value), and
// ycsb-a … ycsb-f run operationcount operations of YCSB's core workloads
// A–F on them:
//
//	ycsb-a  50% read, 50% update, zipfian          (update heavy)
//	ycsb-b  95% read, 5% update, zipfian           (read mostly)
//	ycsb-c  100% read, zipfian                     (read only)
//	ycsb-d  95% read, 5% insert, latest            (read latest)
//	ycsb-e  95% scan (1–100 records), 5% insert, zipfian (short ranges)
//	ycsb-f  50% read, 50% read-modify-write, zipfian
//
// with zipfian YCSB's ScrambledZipfianGenerator (θ = 0.99, ranks hashed
// over the records) and latest its SkewedLatestGenerator (the newest
// records the most popular, following the inserts). Config.YCSB overrides
// any property for every YCSB workload, by YCSB's name
// (requestdistribution=uniform, fieldcount=1, …); recordcount defaults to
// Keys.N and operationcount to Reads. The workloads after the load share
// its records and the inserts made since, so run ycsb-load first. Reads
// check that the record exists and has fieldcount·fieldlength bytes.
//
// # Threads
//
// Config.Threads runs each workload on that many goroutines at once, each
// doing an equal share: a fill a contiguous share of its keys' order,
// reads draws of a generator of their own (the first goroutine's the one
// a run on one goroutine uses), the YCSB workloads sharing their record
// counter as YCSB's client threads do. filloverwrite runs on one: its
// check that the last write won needs one order of the writes.
//
// Each workload draws from its own generator, seeded from Seed and its name,
// so a workload's sequence of keys does not depend on which ran before it.
// Reads check their answers: a present key not found, a missing key found,
// a present key whose value is not the one every fill leaves it with
// (Keys.Value: filloverwrite's last write of each key), or a prefix seek
// that finds another number of keys than its prefix holds is an error, not
// a number. (Scans count their entries and check no value.)
package workload
