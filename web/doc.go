// Package web serves bloomkv's pages for a browser: a Bloom filter
// playground, a filter calculator, and a live view of a DB's LSM tree. It
// is a net/http Handler an application mounts for its own open DB, as it
// would mount net/http/pprof or expvar, and what `bloomkv web` serves:
//
//	mux.Handle("/debug/bloomkv/", http.StripPrefix("/debug/bloomkv", web.Handler(db, nil)))
//
// The pages are hand-written HTML, CSS and JavaScript embedded in the
// binary: no build step, nothing fetched from elsewhere, so they work
// offline. They link to each other and to the API by relative URLs, so
// they work under any prefix that ends in a slash.
//
// # Pages
//
//	/            an index of the pages
//	/playground  a classic Bloom filter of m bits and k probes: add and check
//	             words, see each word's bits, verdicts, and the false-positive
//	             rate measured against the formula as the set grows
//	/calc        n, p and an optional fixed k → m, k, bytes and bits per key,
//	             and the rate against bits per element for the optimal classic
//	             filter, a fixed k, the blocked filter and the lower bound
//	/tree        the DB's levels and tables, per-level filter counters and
//	             rates, flushes and compactions as they happen, and the trace
//	             of a key's lookup (DB.Explain)
//
// # API
//
// Every answer is JSON; an error is {"error": "..."} with a 4xx or 5xx
// status, never a stack trace.
//
//	POST /api/playground  {"m":64,"k":3,"words":["apple"],"checks":["kiwi"]}
//	GET  /api/calc?n=1000000&p=0.01[&k=4]
//	GET  /api/chart[?k=4]
//	GET  /api/tree[?after=SEQ]
//	GET  /api/explain?key=KEY[&hex=1]
//
// The playground's bit positions are bloom.ClassicLocations of each word's
// bloom.Hash, and its verdicts come from a bloom.Classic built for the
// request, so the page shows exactly what the library does. The calculator's
// numbers come from the bloom package's formulas (ClassicParams,
// ClassicFalsePositiveRate, BlockedBitsPerKey, BlockedProbes,
// BlockedFalsePositiveRate, MinBitsPerKey).
//
// # Read-only, bounded
//
// No endpoint writes to the DB: the tree page reads DB.Metrics and
// DB.Tables, and the explain box calls DB.Explain, which reads as Get does
// (it counts in Metrics and warms the block cache like a Get). No endpoint
// reads a file: the static files are embedded. Requests are bounded:
// playground bodies by MaxBodyBytes, words by MaxWordBytes, the filter by
// MaxPlaygroundBits and MaxPlaygroundProbes, the word lists by MaxWords
// and MaxChecks, explained keys by MaxKeyBytes; a larger request is refused
// with 413 or 400 and a message naming the limit.
//
// # Flushes and compactions
//
// A Handler is given a DB that is already open, too late to install an
// EventListener, so the tree page polls /api/tree once a second: it shows
// the tables (new ones highlighted) and the flush and compaction counters
// of Metrics. An application that wants each flush and compaction listed,
// with its inputs, outputs and duration, creates an EventLog before Open,
// puts its Listener in Options.EventListener, and passes the log in
// Options.Events; /api/tree then returns the events after the sequence
// number the page last saw.
package web
