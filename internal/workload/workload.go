package workload

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"time"
)

// Store is what a workload needs of an engine. Adapters implement it for
// bloomkv (Bloomkv) and, in the bench module, for the peer stores.
type Store interface {
	// Put sets key to value, through the engine's write-ahead log but
	// without an fsync per write. It must not keep key or value after it
	// returns: the workloads reuse both buffers for the next write.
	Put(key, value []byte) error
	// Get returns key's value, found = false (and no error) when absent.
	// The value may be retained by the engine; the caller only reads it.
	Get(key []byte) (value []byte, found bool, err error)
	// Scan reads up to n entries in key order from the first key ≥ start
	// and returns how many it read.
	Scan(start []byte, n int) (int, error)
	Close() error
}

// Settler is a Store that can bring itself to a steady state after a fill:
// memtables flushed and background compactions finished, so reads measure
// the tree and not the moment. The bench calls Settle after each fill.
type Settler interface {
	Settle() error
}

// Workload names a workload (see the package doc).
type Workload string

// The workloads.
const (
	FillSeq       Workload = "fillseq"
	FillRandom    Workload = "fillrandom"
	FillOverwrite Workload = "filloverwrite"
	ReadRandom    Workload = "readrandom"
	ReadMissing   Workload = "readmissing"
	ReadMixed     Workload = "readmixed"
	Scan          Workload = "scan"

	// The prefix workloads (see PrefixKey): they need a PrefixSeeker.
	FillPrefix        Workload = "fillprefix"
	SeekPrefix        Workload = "seekprefix"
	SeekPrefixMissing Workload = "seekprefixmissing"
)

// All lists the workloads in the order of the package doc.
var All = []Workload{FillSeq, FillRandom, FillOverwrite, ReadRandom, ReadMissing, ReadMixed, Scan, FillPrefix, SeekPrefix, SeekPrefixMissing}

// IsFill reports whether w writes.
func (w Workload) IsFill() bool {
	return w == FillSeq || w == FillRandom || w == FillOverwrite || w == FillPrefix
}

// IsPrefixSeek reports whether w is made of prefix seeks.
func (w Workload) IsPrefixSeek() bool { return w == SeekPrefix || w == SeekPrefixMissing }

// IsGet reports whether w is made of point lookups.
func (w Workload) IsGet() bool { return w == ReadRandom || w == ReadMissing || w == ReadMixed }

// Parse parses a comma-separated list of workload names.
func Parse(list string) ([]Workload, error) {
	var ws []Workload
	for _, name := range strings.Split(list, ",") {
		name = strings.TrimSpace(name)
		if name == "" {
			continue
		}
		ok := false
		for _, w := range All {
			if string(w) == name {
				ws, ok = append(ws, w), true
				break
			}
		}
		if !ok {
			names := make([]string, len(All))
			for i, w := range All {
				names[i] = string(w)
			}
			return nil, fmt.Errorf("unknown workload %q (have %s)", name, strings.Join(names, ", "))
		}
	}
	if len(ws) == 0 {
		return nil, fmt.Errorf("no workload in %q", list)
	}
	return ws, nil
}

// DefaultWritesPerKey is how many times filloverwrite writes each key.
const DefaultWritesPerKey = 3

// MaxWritesPerKey bounds Config.WritesPerKey: each write of a key before
// its last is told apart by one byte, 0x80 plus the write's number, which
// no value of Keys.Value holds (see overwrittenValue), and the counts of
// writes done per key fit a byte.
const MaxWritesPerKey = 128

// Config is one run's sizes: the keys, how many operations each read
// workload does, and how many writes of each key filloverwrite does.
type Config struct {
	Keys       *Keys
	Reads      int     // Gets of each read workload; scan does Reads/ScanLength scans
	MissRatio  float64 // readmixed's share of missing keys, in [0, 1]
	ScanLength int     // entries per scan
	PrefixKeys int     // keys per prefix of the prefix workloads; 0: DefaultPrefixKeys
	// WritesPerKey is how many times filloverwrite writes each key, in
	// [1, MaxWritesPerKey]; 0: DefaultWritesPerKey.
	WritesPerKey int
}

// writesPerKey returns filloverwrite's writes per key, the default for 0.
func (c *Config) writesPerKey() int {
	if c.WritesPerKey == 0 {
		return DefaultWritesPerKey
	}
	return c.WritesPerKey
}

// checkOverwrite reports why filloverwrite cannot run under c, if it
// cannot.
func (c *Config) checkOverwrite() error {
	w := c.writesPerKey()
	switch {
	case w < 1 || w > MaxWritesPerKey:
		return fmt.Errorf("workload: %d writes per key is outside [1, %d]", w, MaxWritesPerKey)
	case w > 1 && c.Keys.ValueSize < 1:
		return fmt.Errorf("workload: %s needs values of at least 1 byte to tell a key's %d writes apart", FillOverwrite, w)
	case uint64(c.Keys.N) > math.MaxUint32 || uint64(c.Keys.N)*uint64(w) > math.MaxInt: // see overwriteOrder
		return fmt.Errorf("workload: %s of %d keys %d times each is too many writes", FillOverwrite, c.Keys.N, w)
	}
	return nil
}

// Ops returns how many operations workload w does.
func (c *Config) Ops(w Workload) int {
	switch {
	case w == FillOverwrite:
		return c.Keys.N * c.writesPerKey()
	case w.IsFill():
		return c.Keys.N
	case w == Scan:
		return max(1, c.Reads/max(1, c.ScanLength))
	}
	return c.Reads
}

// Result is what one workload did.
type Result struct {
	Workload Workload
	Ops      int           // operations done
	Elapsed  time.Duration // wall-clock time of them all
	Latency  Histogram     // of each operation
	Missing  int           // Gets of missing keys (readmissing, readmixed) or seeks of missing prefixes
}

// OpsPerSec returns the throughput.
func (r *Result) OpsPerSec() float64 {
	if r.Elapsed <= 0 {
		return 0
	}
	return float64(r.Ops) / r.Elapsed.Seconds()
}

// progressEvery is how many operations pass between progress calls.
const progressEvery = 1024

// Run runs workload w against s. If progress is not nil it is called now
// and then with the operations done so far. A read that gets a wrong answer
// (a present key not found, a missing key found, a present key's value
// other than Keys.Value, the value every fill leaves it with) stops the run
// with an error.
func (c *Config) Run(s Store, w Workload, progress func(done int)) (*Result, error) {
	k := c.Keys
	ops := c.Ops(w)
	res := &Result{Workload: w, Ops: ops}
	r := k.rng(string(w))
	var order []int
	var layout prefixLayout
	var seeker PrefixSeeker
	// filloverwrite's writes, key by key, the writes of each key done so
	// far, and the buffer of the values of the writes before a key's last.
	var writes []uint32
	var written []uint8
	var overwritten []byte
	switch w {
	case FillSeq:
	case FillRandom:
		order = r.Perm(k.N)
	case FillOverwrite:
		if err := c.checkOverwrite(); err != nil {
			return nil, err
		}
		writes = overwriteOrder(r, k.N, c.writesPerKey())
		written = make([]uint8, k.N)
		overwritten = make([]byte, 0, k.ValueSize)
	case ReadRandom, ReadMissing, ReadMixed, Scan:
	case FillPrefix, SeekPrefix, SeekPrefixMissing:
		var err error
		if layout, err = k.prefixLayout(c.PrefixKeys); err != nil {
			return nil, err
		}
		if w == FillPrefix {
			order = r.Perm(k.N)
			break
		}
		var ok bool
		if seeker, ok = s.(PrefixSeeker); !ok {
			return nil, fmt.Errorf("workload: %s needs prefix seeks, which the store %T does not offer", w, s)
		}
	default:
		return nil, fmt.Errorf("workload: unknown workload %q", w)
	}
	key := make([]byte, 0, k.KeySize)
	start := time.Now()
	for op := 0; op < ops; op++ {
		if progress != nil && op%progressEvery == 0 {
			progress(op)
		}
		var err error
		t0 := time.Now()
		switch w {
		case FillSeq, FillRandom:
			i := op
			if order != nil {
				i = order[op]
			}
			key = k.Present(key, i)
			err = s.Put(key, k.Value(i))
		case FillOverwrite:
			i := int(writes[op])
			key = k.Present(key, i)
			v := k.Value(i)
			if j := int(written[i]); j < c.writesPerKey()-1 {
				overwritten = k.overwrittenValue(overwritten, i, j)
				v = overwritten
			}
			written[i]++
			err = s.Put(key, v)
		case FillPrefix:
			i := order[op]
			key = layout.key(key, i)
			err = s.Put(key, k.Value(i))
		case SeekPrefix, SeekPrefixMissing:
			g := r.IntN(layout.groups)
			missing := w == SeekPrefixMissing
			key = layout.appendPrefix(key, 2*uint64(g)+uint64(btoi(missing)))
			want := layout.groupKeys(k.N, g)
			if missing {
				want = 0
				res.Missing++
			}
			var n int
			n, err = seeker.SeekPrefix(key, layout.perPrefix+1)
			if err == nil && n != want {
				err = fmt.Errorf("prefix %q: %d keys, want %d (was the store filled with fillprefix?)", key, n, want)
			}
		case Scan:
			key = k.Present(key, r.IntN(k.N))
			var n int
			n, err = s.Scan(key, c.ScanLength)
			if err == nil && n == 0 {
				err = fmt.Errorf("scan from %q read nothing", key)
			}
		default:
			i := r.IntN(k.N)
			missing := w == ReadMissing || (w == ReadMixed && r.Float64() < c.MissRatio)
			if missing {
				key = k.Missing(key, i)
				res.Missing++
			} else {
				key = k.Present(key, i)
			}
			var v []byte
			var found bool
			v, found, err = s.Get(key)
			switch {
			case err != nil:
			case missing && found:
				err = fmt.Errorf("missing key %q found", key)
			case !missing && !found:
				err = fmt.Errorf("present key %q not found (was the store filled?)", key)
			case found && len(v) != k.ValueSize:
				err = fmt.Errorf("key %q has a value of %d bytes, want %d", key, len(v), k.ValueSize)
			case found && !bytes.Equal(v, k.Value(i)):
				err = fmt.Errorf("key %q has a value other than its last write's (was the store filled with these keys' seed?)", key)
			}
		}
		res.Latency.Record(time.Since(t0))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", w, err)
		}
	}
	res.Elapsed = time.Since(start)
	if progress != nil {
		progress(ops)
	}
	return res, nil
}

// overwriteOrder returns filloverwrite's writes as the key each one writes:
// every one of the n keys perKey times, in one order shuffled by r
// (Fisher–Yates), so that a key's writes are spread over the whole fill
// and each of its rewrites meets it in another table, as overwrites do.
// Keys are uint32s, half an int's memory: the order is the largest thing
// the workload holds, perKey·4 bytes per key.
func overwriteOrder(r *rand.Rand, n, perKey int) []uint32 {
	order := make([]uint32, n*perKey)
	for i := range order {
		order[i] = uint32(i / perKey)
	}
	for i := len(order) - 1; i > 0; i-- {
		j := r.IntN(i + 1)
		order[i], order[j] = order[j], order[i]
	}
	return order
}
