package peers

import "time"

// Counters are an engine's own counts of what its reads touched and how
// long its writes stalled, cumulative since the open; a count the engine
// does not keep is −1. Run reports their change over each workload.
type Counters struct {
	// Tables counts the tables point lookups looked into: bloomkv's
	// TableProbes (tables whose key range held the key, filter checked or
	// not). −1 for the others, which do not count them.
	Tables int64 `json:"tables"`
	// Blocks counts the blocks lookups and iterators read: bloomkv's data
	// blocks from file and from its cache; pebble's block cache hits and
	// misses, which include index and filter blocks. −1 for goleveldb and
	// badger.
	Blocks int64 `json:"blocks"`
	// Stall is the time writes were held back by the engine: bloomkv's
	// WriteStallDuration, pebble's write stalls (its WriteStallBegin to
	// WriteStallEnd events), goleveldb's write delays (Stats'
	// WriteDelayDuration). −1 for badger, which does not time them.
	Stall time.Duration `json:"stall_ns"`
	// FalsePositives counts the filter checks of point lookups that said
	// "maybe" for a table without the key: bloomkv's FilterPositives less
	// TruePositives. −1 for the others.
	FalsePositives int64 `json:"false_positives"`
}

// minus returns c − o, −1 where either is −1.
func (c Counters) minus(o Counters) Counters {
	sub := func(a, b int64) int64 {
		if a < 0 || b < 0 {
			return -1
		}
		return a - b
	}
	return Counters{Tables: sub(c.Tables, o.Tables), Blocks: sub(c.Blocks, o.Blocks),
		Stall: time.Duration(sub(int64(c.Stall), int64(o.Stall))), FalsePositives: sub(c.FalsePositives, o.FalsePositives)}
}

// Counter is a store that keeps Counters.
type Counter interface {
	Counters() (Counters, error)
}
