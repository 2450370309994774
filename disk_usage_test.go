package bloomkv

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv/vfs"
)

// usageOracle is, for one table, what EstimateDiskUsage must come near:
// the table's bytes per entry, its keys (read through the table's
// iterator, not its index), and the largest share of the file one data
// block takes, the bound of the estimate's error at each end of a range.
type usageOracle struct {
	keys     [][]byte
	perEntry float64
	perBlock float64
}

func newUsageOracle(t *testing.T, tb *table) usageOracle {
	t.Helper()
	var o usageOracle
	it := tb.reader.NewIterator()
	for ok := it.First(); ok; ok = it.Next() {
		o.keys = append(o.keys, bytes.Clone(it.Key().UserKey))
	}
	if err := it.Close(); err != nil {
		t.Fatal(err)
	}
	layout, err := tb.reader.Layout()
	if err != nil {
		t.Fatal(err)
	}
	var data, largest uint64
	for _, b := range layout.Data {
		n := b.Length + 5 // the block trailer
		data += n
		largest = max(largest, n)
	}
	scale := float64(tb.meta.Size) / float64(data)
	o.perEntry = float64(tb.meta.Size) / float64(len(o.keys))
	o.perBlock = float64(largest) * scale
	return o
}

// in returns the oracle's bytes for [lo, hi), and whether the table
// straddles a bound (some keys in the range, some out).
func (o usageOracle) in(lo, hi []byte) (bytes float64, straddles bool) {
	n := 0
	for _, k := range o.keys {
		if (lo == nil || string(k) >= string(lo)) && (hi == nil || string(k) < string(hi)) {
			n++
		}
	}
	return float64(n) * o.perEntry, n > 0 && n < len(o.keys)
}

// TestEstimateDiskUsage checks EstimateDiskUsage over random ranges of a
// DB whose entries are all the same size (incompressible values, each key
// written once), against the oracle: each table's entries in the range
// times its bytes per entry, within one data block's share per straddled
// bound of each table the range straddles. The whole range is the tables'
// total size exactly, and the memtables count only once flushed.
func TestEstimateDiskUsage(t *testing.T) {
	opts := checkpointOptions(vfs.NewMem())
	// No compaction after the first, so that the tables stay as the
	// oracle reads them: L0's stay in L0.
	opts.L0CompactionTrigger, opts.L0SlowdownTrigger, opts.L0StopTrigger = 50, 50, 60
	// Values in the tables: a table's separated values count in the share
	// of its file the range takes, which a lone large value upsets.
	opts.ValueSeparation.MinSize = ValueSeparationOff
	d, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	rng := rand.New(rand.NewPCG(3, 4))
	key := func(i int) []byte { return fmt.Appendf(nil, "k%06d", i) }
	const n = 6000
	value := make([]byte, 100)
	for _, i := range rng.Perm(n) {
		for j := range value {
			value[j] = byte(rng.Uint32())
		}
		if err := d.Put(key(i), value, NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	for i := n; i < n+1500; i++ { // L0 tables over the deeper levels, then the memtable
		if err := d.Put(key(i%n*7%n), value, NoSync); err != nil {
			t.Fatal(err)
		}
		if i == n+1000 {
			if err := d.Flush(); err != nil {
				t.Fatal(err)
			}
		}
	}

	// The oracle reads the tables of one version, which must stay current
	// while the estimates are checked: wait for the compactions the
	// flushes called for (the deeper levels' sizes may).
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		if m := d.Metrics(); !m.CompactionPending && m.ImmutableMemtables == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("compactions never ended")
		}
	}
	rs, _, err := d.acquireReadState()
	if err != nil {
		t.Fatal(err)
	}
	version := rs.version
	var oracles []usageOracle
	var total uint64
	levels := 0
	for _, tables := range rs.version.tables {
		levels += b2i(len(tables) > 0)
		for _, tb := range tables {
			oracles = append(oracles, newUsageOracle(t, tb))
			total += tb.meta.Size
		}
	}
	d.releaseReadState(rs)
	if levels < 2 || len(oracles) < 8 {
		t.Fatalf("%d tables in %d levels; the test wants more", len(oracles), levels)
	}

	check := func(lo, hi []byte) uint64 {
		t.Helper()
		got, err := d.EstimateDiskUsage(lo, hi)
		if err != nil {
			t.Fatal(err)
		}
		var want, tolerance float64
		for _, o := range oracles {
			b, straddles := o.in(lo, hi)
			want += b
			if straddles {
				tolerance += 2 * o.perBlock
			}
		}
		if diff := float64(got) - want; diff > tolerance || -diff > tolerance {
			t.Errorf("EstimateDiskUsage(%q, %q) = %d; want %.0f ± %.0f", lo, hi, got, want, tolerance)
		}
		return got
	}
	if got := check(nil, nil); got != total {
		t.Errorf("EstimateDiskUsage(nil, nil) = %d; want the tables' %d", got, total)
	}
	for range 200 {
		a, b := rng.IntN(n+10), rng.IntN(n+10)
		lo, hi := key(min(a, b)), key(max(a, b))
		switch rng.IntN(6) {
		case 0:
			lo = nil
		case 1:
			hi = nil
		}
		check(lo, hi)
	}
	// A partition of the keys adds up to the total, but for the blocks at
	// the inner bounds, which count on both sides.
	var sum uint64
	bounds := [][]byte{nil, key(1000), key(1001), key(2500), key(4999), nil}
	for i := 0; i+1 < len(bounds); i++ {
		sum += check(bounds[i], bounds[i+1])
	}
	var slack float64 // a block per table across each inner bound
	for _, b := range bounds[1 : len(bounds)-1] {
		for _, o := range oracles {
			if _, straddles := o.in(nil, b); straddles {
				slack += o.perBlock
			}
		}
	}
	// Below the total only by the rounding down of the scaled shares: less
	// than a byte per table and range.
	floor := total - uint64(len(oracles)*(len(bounds)-1))
	if sum < floor || float64(sum) > float64(total)+slack {
		t.Errorf("a partition's estimates add up to %d; the tables hold %d (+ up to %.0f)", sum, total, slack)
	}

	rs, _, err = d.acquireReadState()
	if err != nil {
		t.Fatal(err)
	}
	changed := rs.version != version
	d.releaseReadState(rs)
	if changed {
		t.Fatal("the tables changed while the estimates were checked: the oracle is stale")
	}

	for _, tc := range []struct{ lo, hi []byte }{
		{key(10), key(10)}, {[]byte("a"), []byte("b")}, {[]byte("z"), nil}, {nil, []byte("a")},
	} {
		if got, err := d.EstimateDiskUsage(tc.lo, tc.hi); err != nil || got != 0 {
			t.Errorf("EstimateDiskUsage(%q, %q) = %d, %v; want 0", tc.lo, tc.hi, got, err)
		}
	}
	var ae *ArgumentError
	if _, err := d.EstimateDiskUsage(key(2), key(1)); !errors.As(err, &ae) || ae.Arg != "lo" {
		t.Errorf("EstimateDiskUsage with lo after hi = %v; want an ArgumentError for lo", err)
	}

	// The memtable's writes count once flushed.
	big := make([]byte, 5000)
	for i := range big {
		big[i] = byte(rng.Uint32()) // incompressible
	}
	if err := d.Put([]byte("zz-new"), big, NoSync); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.EstimateDiskUsage([]byte("zz"), nil); got != 0 {
		t.Errorf("the memtable's key counts %d bytes before a flush", got)
	}
	if err := d.Flush(); err != nil {
		t.Fatal(err)
	}
	if got, _ := d.EstimateDiskUsage([]byte("zz"), nil); got < 5000 {
		t.Errorf("after a flush, the key of 5000 bytes counts %d", got)
	}
	d.Close()
	if _, err := d.EstimateDiskUsage(nil, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("EstimateDiskUsage after Close = %v; want ErrClosed", err)
	}
}
