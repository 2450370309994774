package peers

import (
	"fmt"
	"time"
)

// Shaper is a store that can show its LSM tree. Run samples a Shaper's L0
// while each fill runs, to see how close writes came to stopping, and reads
// its whole tree after the fill's settle, to see where the data went and
// what it cost to put it there.
type Shaper interface {
	// L0 returns L0's size now. Run calls it every
	// Measure.SampleInterval while a fill writes, from another goroutine:
	// it must be cheap and safe alongside writes.
	L0() (L0, error)
	// L0Stop returns the L0 size at which the engine stops writes, as it
	// was opened.
	L0Stop() L0Stop
	// Tree returns the tree's tables per level and the bytes written to
	// the WAL and to tables so far.
	Tree() (Tree, error)
}

// FullCompacter is a store that can compact its whole key range down the
// tree into one sorted run, dropping every overwritten version: what is
// left is the live data alone, the denominator of space amplification.
type FullCompacter interface {
	CompactAll() error
}

// ValueLogCollector is a store whose overwritten and deleted values stay
// in a value log until the application asks for the log to be rewritten
// (badger's RunValueLogGC). With Measure.SpaceAmp, Run asks it after the
// last workload and measures the directory again (Outcome.DiskBytesCollected).
type ValueLogCollector interface {
	// CollectValueLog rewrites value-log files until none has enough dead
	// values to be worth rewriting, and returns how many it rewrote.
	CollectValueLog() (int, error)
}

// L0 is L0's size at one moment.
type L0 struct {
	Tables int
	// Sublevels is L0's read amplification where the engine counts it and
	// stops writes by it (pebble); 0 where it does not.
	Sublevels int
}

// L0Stop is the L0 size at which an engine stops writes.
type L0Stop struct {
	N int `json:"n"`
	// Sublevels tells what N counts: L0 sublevels (pebble's
	// L0StopWritesThreshold) if true, L0 tables (bloomkv's L0StopTrigger,
	// goleveldb's WriteL0PauseTrigger, badger's NumLevelZeroTablesStall)
	// if false.
	Sublevels bool `json:"sublevels,omitempty"`
}

// String returns "36 tables" or "12 sublevels".
func (s L0Stop) String() string {
	if s.Sublevels {
		return fmt.Sprintf("%d sublevels", s.N)
	}
	return fmt.Sprintf("%d tables", s.N)
}

// L0Samples is what sampling L0 during a fill saw: the largest L0 and the
// engine's stop, so that a tail of write latencies can be told apart from
// L0 stalls.
type L0Samples struct {
	// Interval is the sampling interval (Measure.SampleInterval); 0 or
	// less: the one sample at the fill's end.
	Interval     time.Duration `json:"interval_ns"`
	Samples      int           `json:"samples"` // L0 calls made, the one at the fill's end included
	MaxTables    int           `json:"max_tables"`
	MaxSublevels int           `json:"max_sublevels,omitempty"` // where the engine counts sublevels (L0.Sublevels)
	Stop         L0Stop        `json:"stop"`
}

// add records one sample.
func (s *L0Samples) add(l L0) {
	s.Samples++
	s.MaxTables = max(s.MaxTables, l.Tables)
	s.MaxSublevels = max(s.MaxSublevels, l.Sublevels)
}

// Level is one level's tables.
type Level struct {
	Tables int   `json:"tables"`
	Bytes  int64 `json:"bytes"`
}

// Tree is an engine's LSM tree at one moment.
type Tree struct {
	Levels []Level `json:"levels"` // L0 first
	// WALBytes and TableBytes are the bytes the engine has written since
	// it opened to its WAL and to tables (by flushes and compactions),
	// where it counts both (bloomkv, pebble); 0 where it does not
	// (goleveldb, badger).
	WALBytes   uint64 `json:"wal_bytes,omitempty"`
	TableBytes uint64 `json:"table_bytes,omitempty"`
	// Settled is false for the engines that cannot settle after a fill
	// (they are no workload.Settler): their tree was read with memtables
	// unflushed and compactions maybe running.
	Settled bool `json:"settled"`
}

// WriteAmp returns the write amplification from since (nil: the engine's
// open) to t: the bytes written to tables per byte written to the WAL in
// between, bloomkv's Metrics.WriteAmplification. ok is false where the
// engine does not count them or nothing was written.
func (t *Tree) WriteAmp(since *Tree) (amp float64, ok bool) {
	var wal, table uint64
	if since != nil {
		wal, table = since.WALBytes, since.TableBytes
	}
	if t.WALBytes <= wal || t.TableBytes < table {
		return 0, false
	}
	return float64(t.TableBytes-table) / float64(t.WALBytes-wal), true
}

// Bytes returns the total table bytes.
func (t *Tree) Bytes() int64 {
	var n int64
	for _, l := range t.Levels {
		n += l.Bytes
	}
	return n
}

// Share returns level's share of the total table bytes, in [0, 1]; 0 for
// an empty tree.
func (t *Tree) Share(level int) float64 {
	total := t.Bytes()
	if total == 0 || level < 0 || level >= len(t.Levels) {
		return 0
	}
	return float64(t.Levels[level].Bytes) / float64(total)
}

// Last returns the deepest level that holds table bytes, -1 if none does.
func (t *Tree) Last() int {
	for l := len(t.Levels) - 1; l >= 0; l-- {
		if t.Levels[l].Bytes > 0 {
			return l
		}
	}
	return -1
}

// l0Sampler samples a Shaper's L0 on a goroutine of its own until
// finished. Only that goroutine touches res and err until it ends, and
// finish only after: no lock is needed.
type l0Sampler struct {
	s    Shaper
	stop chan struct{}
	done chan struct{}
	res  L0Samples
	err  error // the first L0 error
}

// sampleL0 starts sampling s's L0 every interval (never, if interval is 0
// or less: then only finish samples it).
func sampleL0(s Shaper, interval time.Duration) *l0Sampler {
	p := &l0Sampler{s: s, stop: make(chan struct{}), done: make(chan struct{}), res: L0Samples{Interval: interval, Stop: s.L0Stop()}}
	go every(interval, p.stop, p.done, p.sample)
	return p
}

// every calls f every interval (never, if interval is 0 or less) until
// stop is closed, then closes done: a sampler's loop.
func every(interval time.Duration, stop <-chan struct{}, done chan<- struct{}, f func()) {
	defer close(done)
	if interval <= 0 {
		return
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			f()
		case <-stop:
			return
		}
	}
}

func (p *l0Sampler) sample() {
	l, err := p.s.L0()
	if err != nil {
		if p.err == nil {
			p.err = err
		}
		return
	}
	p.res.add(l)
}

// finish stops the sampling and takes one last sample, the L0 the fill
// left (so that a fill shorter than the interval has one too), and returns
// what the samples saw.
func (p *l0Sampler) finish() (L0Samples, error) {
	close(p.stop)
	<-p.done
	p.sample()
	return p.res, p.err
}
