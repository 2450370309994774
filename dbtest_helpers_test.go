package bloomkv

// Shared helpers of the DB tests (db_model_test.go, db_recovery_test.go,
// db_concurrency_test.go): the oracle every test checks the DB against — a
// map of the live keys — and the generators and checkers built on it.

import (
	"bytes"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv/internal/race"
	"github.com/bloomkv/bloomkv/vfs"
)

var (
	dbSeeds       = flag.Int("db.seeds", 30, "random seeds TestDBModel runs (-race: 10; -short: 8)")
	dbSeed        = flag.Int64("db.seed", -1, "run only this seed of TestDBModel and TestDBRecoveryCrash")
	dbCrashCycles = flag.Int("db.crashcycles", 6, "workloads TestDBRecoveryCrash crashes at many points (-race and -short: 2)")
)

// testSeeds returns the seeds a randomized DB test runs: -db.seed alone if
// it is set, else 0 … n-1 (shortN under -short).
func testSeeds(n, shortN int, short bool) []uint64 {
	if *dbSeed >= 0 {
		return []uint64{uint64(*dbSeed)}
	}
	if short {
		n = min(n, shortN)
	}
	seeds := make([]uint64, n)
	for i := range seeds {
		seeds[i] = uint64(i)
	}
	return seeds
}

// kvModel is the oracle: every live key and its value.
type kvModel map[string]string

func (m kvModel) clone() kvModel { return maps.Clone(m) }

// apply applies the writes of one batch, in order.
func (m kvModel) apply(ops []kvOp) {
	for _, op := range ops {
		if op.rangeDel {
			for k := range m {
				if op.key <= k && k < op.end {
					delete(m, k)
				}
			}
		} else if op.del {
			delete(m, op.key)
		} else if op.merge {
			m[op.key] += op.value // AppendMerger's fold, over the value or none
		} else {
			m[op.key] = op.value
		}
	}
}

// sorted returns the model's keys and values in [lower, upper) (nil: no
// bound), in key order, as an Iterator with those bounds must show them.
func (m kvModel) sorted(lower, upper []byte) (keys, values [][]byte) {
	for _, k := range slices.Sorted(maps.Keys(m)) {
		kb := []byte(k)
		if lower != nil && bytes.Compare(kb, lower) < 0 || upper != nil && bytes.Compare(kb, upper) >= 0 {
			continue
		}
		keys = append(keys, kb)
		values = append(values, []byte(m[k]))
	}
	return keys, values
}

// kvOp is one write of a batch: a set (with ttl > 0, a SetWithTTL), a
// delete, with rangeDel a DeleteRange(key, end), or with merge a Merge of
// value into key (the model folds it as AppendMerger does: kvModel.apply;
// over a base with a time-to-live, kvExpiries too).
type kvOp struct {
	del        bool
	key, value string
	rangeDel   bool
	end        string
	merge      bool
	ttl        time.Duration
}

func (op kvOp) String() string {
	if op.rangeDel {
		return fmt.Sprintf("delrange(%s, %s)", shortKey(op.key), shortKey(op.end))
	}
	if op.del {
		return fmt.Sprintf("del(%s)", shortKey(op.key))
	}
	if op.merge {
		return fmt.Sprintf("merge(%s, %q)", shortKey(op.key), op.value)
	}
	if op.ttl > 0 {
		return fmt.Sprintf("setttl(%s, %d bytes, %v)", shortKey(op.key), len(op.value), op.ttl)
	}
	return fmt.Sprintf("set(%s, %d bytes)", shortKey(op.key), len(op.value))
}

// batchOf encodes ops as a Batch.
func batchOf(ops []kvOp) (*Batch, error) {
	b := NewBatch()
	for _, op := range ops {
		if err := op.addTo(b); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// kvWriter is what a kvOp is written to: a Batch or a Transaction.
type kvWriter interface {
	Set(key, value []byte) error
	Delete(key []byte) error
	DeleteRange(start, end []byte) error
	Merge(key, operand []byte) error
	SetWithTTL(key, value []byte, ttl time.Duration) error
}

// addTo adds op to w.
func (op kvOp) addTo(w kvWriter) error {
	switch {
	case op.rangeDel:
		return w.DeleteRange([]byte(op.key), []byte(op.end))
	case op.del:
		return w.Delete([]byte(op.key))
	case op.merge:
		return w.Merge([]byte(op.key), []byte(op.value))
	case op.ttl > 0:
		return w.SetWithTTL([]byte(op.key), []byte(op.value), op.ttl)
	}
	return w.Set([]byte(op.key), []byte(op.value))
}

// applyOps writes ops as a Put or Delete when there is one, else as a batch.
func applyOps(d *DB, ops []kvOp, wo *WriteOptions) error {
	if len(ops) == 1 {
		if ops[0].rangeDel {
			return d.DeleteRange([]byte(ops[0].key), []byte(ops[0].end), wo)
		}
		if ops[0].del {
			return d.Delete([]byte(ops[0].key), wo)
		}
		if ops[0].merge {
			return d.Merge([]byte(ops[0].key), []byte(ops[0].value), wo)
		}
		if ops[0].ttl > 0 {
			return d.PutWithTTL([]byte(ops[0].key), []byte(ops[0].value), ops[0].ttl, wo)
		}
		return d.Put([]byte(ops[0].key), []byte(ops[0].value), wo)
	}
	b, err := batchOf(ops)
	if err != nil {
		return err
	}
	return d.Apply(b, wo)
}

// shortKey renders a key for a message, eliding the middle of a long one.
func shortKey(k string) string {
	if len(k) > 40 {
		return fmt.Sprintf("%q…(%d bytes)", k[:32], len(k))
	}
	return fmt.Sprintf("%q", k)
}

// keySpace is a small alphabet of keys, so that writes collide on keys and
// tables hold many versions of one key. It holds the empty key, keys that
// are prefixes of each other and keys with 0x00 and 0xff bytes.
type keySpace struct {
	keys [][]byte
}

func newKeySpace(rng *rand.Rand, n int) *keySpace {
	seen := map[string]bool{}
	var ks keySpace
	add := func(k []byte) {
		if !seen[string(k)] {
			seen[string(k)] = true
			ks.keys = append(ks.keys, k)
		}
	}
	for _, k := range []string{"", "\x00", "a", "ab", "abc", "b", "\xff", "\xff\xff", "a\x00", "a\xff"} {
		add([]byte(k))
	}
	for len(ks.keys) < n {
		switch rng.IntN(4) {
		case 0: // a short key of letters
			k := make([]byte, 1+rng.IntN(4))
			for i := range k {
				k[i] = 'a' + byte(rng.IntN(4))
			}
			add(k)
		case 1: // random bytes
			k := make([]byte, rng.IntN(12))
			for i := range k {
				k[i] = byte(rng.IntN(256))
			}
			add(k)
		default: // the common shape, occasionally long
			k := fmt.Appendf(nil, "key%05d", rng.IntN(100000))
			if rng.IntN(20) == 0 {
				k = append(k, bytes.Repeat([]byte{'z'}, rng.IntN(300))...)
			}
			add(k)
		}
	}
	return &ks
}

// pick returns a key of the space.
func (ks *keySpace) pick(rng *rand.Rand) []byte { return ks.keys[rng.IntN(len(ks.keys))] }

// probe returns a seek target or bound: a key of the space, or one just
// after or before one, or a random short key.
func (ks *keySpace) probe(rng *rand.Rand) []byte {
	k := bytes.Clone(ks.pick(rng))
	switch rng.IntN(6) {
	case 0:
		return append(k, 0)
	case 1:
		if len(k) > 0 {
			return k[:len(k)-1]
		}
	case 2:
		return []byte{byte(rng.IntN(256))}
	}
	return k
}

// randValue returns a value of a random size — empty now and then, large
// now and then — that starts with tag, unless it is empty.
func randValue(rng *rand.Rand, tag string) []byte {
	var n int
	switch r := rng.IntN(100); {
	case r < 8:
		return []byte{}
	case r < 60:
		n = rng.IntN(100)
	case r < 97:
		n = 100 + rng.IntN(1900)
	default:
		n = 2000 + rng.IntN(10000)
	}
	return fillValue(rng, append([]byte(tag), '|'), n)
}

// fillValue appends n bytes to v, half of them random and half a repeated
// pattern, so that compression has something to do.
func fillValue(rng *rand.Rand, v []byte, n int) []byte {
	pat := byte(rng.IntN(256))
	for i := range n {
		if i%2 == 0 {
			v = append(v, byte(rng.Uint32()))
		} else {
			v = append(v, pat+byte(i%7))
		}
	}
	return v
}

// dbReader is what a DB and a Snapshot both offer.
type dbReader interface {
	Get(key []byte) ([]byte, error)
	MultiGet(keys [][]byte) ([][]byte, error)
	NewIter(opts *IterOptions) (*Iterator, error)
}

// readAll returns every key and value r shows, scanning forward, and checks
// that the keys ascend strictly.
func readAll(r dbReader) (kvModel, error) {
	it, err := r.NewIter(nil)
	if err != nil {
		return nil, fmt.Errorf("NewIter: %w", err)
	}
	got := kvModel{}
	var prev []byte
	for ok := it.First(); ok; ok = it.Next() {
		if prev != nil && bytes.Compare(prev, it.Key()) >= 0 {
			it.Close()
			return nil, fmt.Errorf("scan: key %q after %q", it.Key(), prev)
		}
		prev = append(prev[:0], it.Key()...)
		got[string(it.Key())] = string(it.Value())
	}
	if err := it.Close(); err != nil {
		return nil, fmt.Errorf("scan: %w", err)
	}
	return got, nil
}

// diffModels describes how got differs from want, or returns "" if equal.
func diffModels(got, want kvModel) string {
	var diffs []string
	keys := slices.Sorted(maps.Keys(maps.Collect(func(yield func(string, bool) bool) {
		for k := range got {
			yield(k, true)
		}
		for k := range want {
			yield(k, true)
		}
	})))
	for _, k := range keys {
		g, gok := got[k]
		w, wok := want[k]
		switch {
		case gok && !wok:
			diffs = append(diffs, fmt.Sprintf("  %s: got %s, want missing", shortKey(k), shortKey(g)))
		case !gok && wok:
			diffs = append(diffs, fmt.Sprintf("  %s: missing, want %s", shortKey(k), shortKey(w)))
		case g != w:
			diffs = append(diffs, fmt.Sprintf("  %s: got %s, want %s", shortKey(k), shortKey(g), shortKey(w)))
		}
	}
	if len(diffs) == 0 {
		return ""
	}
	if len(diffs) > 12 {
		diffs = append(diffs[:12], fmt.Sprintf("  … %d differences in all", len(diffs)))
	}
	return fmt.Sprintf("%d keys, want %d:\n%s", len(got), len(want), strings.Join(diffs, "\n"))
}

// checkGet checks r's value of key against the model.
func checkGet(r dbReader, key []byte, m kvModel) error {
	v, err := r.Get(key)
	want, ok := m[string(key)]
	switch {
	case !ok && errors.Is(err, ErrNotFound):
		return nil
	case !ok:
		return fmt.Errorf("Get(%s) = %s, %v; want ErrNotFound", shortKey(string(key)), shortKey(string(v)), err)
	case err != nil:
		return fmt.Errorf("Get(%s): %v; want %s", shortKey(string(key)), err, shortKey(want))
	case string(v) != want:
		return fmt.Errorf("Get(%s) = %s; want %s", shortKey(string(key)), shortKey(string(v)), shortKey(want))
	}
	return nil
}

// checkMultiGet checks r's MultiGet of keys, in their order, against the
// model: a value for every key the model holds (an empty one non-nil),
// nil for every other.
func checkMultiGet(r dbReader, keys [][]byte, m kvModel) error {
	values, err := r.MultiGet(keys)
	if err != nil {
		return fmt.Errorf("MultiGet of %d keys: %w", len(keys), err)
	}
	if len(values) != len(keys) {
		return fmt.Errorf("MultiGet of %d keys returned %d values", len(keys), len(values))
	}
	for i, k := range keys {
		want, ok := m[string(k)]
		switch got := values[i]; {
		case !ok && got != nil:
			return fmt.Errorf("MultiGet: key %d, %s = %s; want nil (not found)", i, shortKey(string(k)), shortKey(string(got)))
		case ok && got == nil:
			return fmt.Errorf("MultiGet: key %d, %s = nil (not found); want %s", i, shortKey(string(k)), shortKey(want))
		case ok && string(got) != want:
			return fmt.Errorf("MultiGet: key %d, %s = %s; want %s", i, shortKey(string(k)), shortKey(string(got)), shortKey(want))
		}
	}
	return nil
}

// checkState checks every key of ks with Get, and a full scan, against m.
// It returns the number of Gets it made.
func checkState(r dbReader, ks *keySpace, m kvModel) (gets int, err error) {
	for _, k := range ks.keys {
		gets++
		if err := checkGet(r, k, m); err != nil {
			return gets, err
		}
	}
	gets += len(ks.keys)
	if err := checkMultiGet(r, ks.keys, m); err != nil {
		return gets, err
	}
	got, err := readAll(r)
	if err != nil {
		return gets, err
	}
	if d := diffModels(got, m); d != "" {
		return gets, fmt.Errorf("full scan: %s", d)
	}
	return gets, nil
}

// iterOracle is the model of an Iterator: a position in the sorted keys it
// must show, with its own record of where it is.
type iterOracle struct {
	keys, values [][]byte
	i            int
	state        int8 // oracleNone, oracleAt, oracleBefore, oracleAfter
}

const (
	oracleNone int8 = iota
	oracleAt
	oracleBefore // a backward move ran off the start
	oracleAfter  // a forward move ran off the end
)

func (o *iterOracle) at(i int, ifOff int8) bool {
	if i < 0 || i >= len(o.keys) {
		o.state = ifOff
		return false
	}
	o.i, o.state = i, oracleAt
	return true
}

func (o *iterOracle) search(k []byte) int {
	return sort.Search(len(o.keys), func(i int) bool { return bytes.Compare(o.keys[i], k) >= 0 })
}

func (o *iterOracle) first() bool          { return o.at(0, oracleAfter) }
func (o *iterOracle) last() bool           { return o.at(len(o.keys)-1, oracleBefore) }
func (o *iterOracle) seekGE(k []byte) bool { return o.at(o.search(k), oracleAfter) }
func (o *iterOracle) seekLT(k []byte) bool { return o.at(o.search(k)-1, oracleBefore) }

func (o *iterOracle) next() bool {
	switch o.state {
	case oracleBefore:
		return o.first()
	case oracleAt:
		return o.at(o.i+1, oracleAfter)
	}
	return false
}

func (o *iterOracle) prev() bool {
	switch o.state {
	case oracleAfter:
		return o.last()
	case oracleAt:
		return o.at(o.i-1, oracleBefore)
	}
	return false
}

// randBounds returns iterator bounds: none, or a lower and/or upper bound
// from ks, now and then crossed or an empty upper bound (which shows
// nothing).
func randBounds(rng *rand.Rand, ks *keySpace) *IterOptions {
	switch rng.IntN(4) {
	case 0:
		return nil
	case 1:
		return &IterOptions{}
	}
	var o IterOptions
	if rng.IntN(2) == 0 {
		o.LowerBound = ks.probe(rng)
	}
	if rng.IntN(2) == 0 {
		o.UpperBound = ks.probe(rng)
		if rng.IntN(30) == 0 {
			o.UpperBound = []byte{}
		}
	}
	return &o
}

// checkIterMoves makes steps random moves on it and on the oracle of m
// within opts' bounds, then, with scan, scans it fully forward and
// backward, and returns the first disagreement with the moves that led to
// it. It does not close it.
func checkIterMoves(rng *rand.Rand, it *Iterator, opts *IterOptions, m kvModel, ks *keySpace, steps int, scan bool) error {
	var lower, upper []byte
	if opts != nil {
		lower, upper = opts.LowerBound, opts.UpperBound
	}
	keys, values := m.sorted(lower, upper)
	o := &iterOracle{keys: keys, values: values}
	var log []string
	fail := func(format string, args ...any) error {
		if len(log) > 30 {
			log = append([]string{"…"}, log[len(log)-30:]...)
		}
		return fmt.Errorf("iterator with bounds [%q, %q) over %d keys, after %s:\n"+format,
			append([]any{lower, upper, len(keys), strings.Join(log, " ")}, args...)...)
	}
	for range steps {
		var got, want bool
		switch r := rng.IntN(20); {
		case r == 0:
			log = append(log, "First")
			got, want = it.First(), o.first()
		case r == 1:
			log = append(log, "Last")
			got, want = it.Last(), o.last()
		case r < 5:
			k := ks.probe(rng)
			log = append(log, fmt.Sprintf("SeekGE(%q)", k))
			got, want = it.SeekGE(k), o.seekGE(k)
		case r < 8:
			k := ks.probe(rng)
			log = append(log, fmt.Sprintf("SeekLT(%q)", k))
			got, want = it.SeekLT(k), o.seekLT(k)
		case r < 14:
			log = append(log, "Next")
			got, want = it.Next(), o.next()
		default:
			log = append(log, "Prev")
			got, want = it.Prev(), o.prev()
		}
		if err := it.Error(); err != nil {
			return fail("Error() = %v", err)
		}
		if got != want || it.Valid() != want {
			return fail("returned %v, Valid %v; want %v", got, it.Valid(), want)
		}
		if want && (!bytes.Equal(it.Key(), o.keys[o.i]) || !bytes.Equal(it.Value(), o.values[o.i])) {
			return fail("at %s=%s, want %s=%s", shortKey(string(it.Key())), shortKey(string(it.Value())),
				shortKey(string(o.keys[o.i])), shortKey(string(o.values[o.i])))
		}
	}
	if !scan {
		return nil
	}
	n := 0
	for ok := it.First(); ok; ok = it.Next() {
		if n >= len(keys) || !bytes.Equal(it.Key(), keys[n]) || !bytes.Equal(it.Value(), values[n]) {
			return fail("forward scan: entry %d is %s; want %d keys", n, shortKey(string(it.Key())), len(keys))
		}
		n++
	}
	if n != len(keys) || it.Error() != nil {
		return fail("forward scan: %d keys (error %v), want %d", n, it.Error(), len(keys))
	}
	n = len(keys)
	for ok := it.Last(); ok; ok = it.Prev() {
		n--
		if n < 0 || !bytes.Equal(it.Key(), keys[n]) || !bytes.Equal(it.Value(), values[n]) {
			return fail("backward scan: entry %d from the end is %s", len(keys)-n-1, shortKey(string(it.Key())))
		}
	}
	if n != 0 || it.Error() != nil {
		return fail("backward scan: stopped %d keys short of the start (error %v)", n, it.Error())
	}
	return nil
}

// checkIter opens an iterator on r with random bounds, checks it against m
// with checkIterMoves, and closes it.
func checkIter(rng *rand.Rand, r dbReader, m kvModel, ks *keySpace, steps int) error {
	opts := randBounds(rng, ks)
	it, err := r.NewIter(opts)
	if err != nil {
		return fmt.Errorf("NewIter: %w", err)
	}
	err = checkIterMoves(rng, it, opts, m, ks, steps, rng.IntN(4) == 0)
	if cerr := it.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("Iterator.Close: %w", cerr)
	}
	return err
}

// describeOptions renders the options a randomized test chose, to print
// with a failing seed.
func describeOptions(o Options) string {
	filters := fmt.Sprintf("BitsPerKey:%g", o.BitsPerKey)
	if o.DisableFilters {
		filters = "DisableFilters"
	}
	if len(o.LevelFilters) > 0 {
		filters += fmt.Sprintf(" LevelFilters:%v", o.LevelFilters)
	}
	if o.Prefix != nil {
		filters += " Prefix:" + o.Prefix.Name
	}
	if len(o.RangeFilterBits) > 0 {
		filters += fmt.Sprintf(" RangeFilterBits:%v", o.RangeFilterBits)
	}
	return fmt.Sprintf("{MemtableSize:%d MaxImmutableMemtables:%d BlockSize:%d DisableBlockAlign:%v IndexPartitionSize:%d Compression:%v TopLevelCompression:%v %s FilterAllocation:%v BlockCacheSize:%d LevelSizing:%v MaxConcurrentCompactions:%d L0CompactionConcurrency:%d L0SlowdownTrigger:%d L0StopTrigger:%d L0CompactionTrigger:%d BaseLevelSize:%d TargetFileSize:%d MaxOpenFiles:%d MaxManifestFileSize:%d ValueSeparation:%+v pagedFiltersWithoutLimit:%v}",
		o.MemtableSize, o.MaxImmutableMemtables, o.BlockSize, o.DisableBlockAlign, o.IndexPartitionSize, o.Compression, o.TopLevelCompression, filters, o.FilterAllocation, o.BlockCacheSize,
		o.LevelSizing, o.MaxConcurrentCompactions, o.L0CompactionConcurrency, o.L0SlowdownTrigger, o.L0StopTrigger,
		o.L0CompactionTrigger, o.BaseLevelSize, o.TargetFileSize, o.MaxOpenFiles, o.MaxManifestFileSize, o.ValueSeparation, o.pagedFiltersWithoutLimit)
}

// randOptions returns random options (without FS): small memtables, so that
// flushes happen, and every block size, compression and filter setting.
func randOptions(rng *rand.Rand) Options {
	o := Options{
		MemtableSize:          int64(64<<10 + rng.IntN(192<<10+1)),
		MaxImmutableMemtables: 1 + rng.IntN(3),
		BlockSize:             256 + rng.IntN(16384-256+1),
		Compression:           []Compression{NoCompression, SnappyCompression, ZstdCompression}[rng.IntN(3)],
	}
	// Aligned blocks in half the runs, from a bit already drawn rather
	// than a draw of its own, so that every seed's other options stay.
	o.DisableBlockAlign = o.MemtableSize&1 == 1
	// L0's and the base level's compression the same way, from the next
	// two bits: the default (none), each compression, or Compression's.
	o.TopLevelCompression = []Compression{DefaultCompression, SnappyCompression, ZstdCompression, o.Compression}[o.MemtableSize>>1&3]
	// And the compaction slots' opening from the next: the default
	// (2·L0CompactionTrigger), every table, or every fourth.
	o.L0CompactionConcurrency = []int{0, 1, 4, 0}[o.MemtableSize>>3&3]
	// And the index partitions from the next: none, one per data block
	// (a size of 1), a few blocks' or a few dozen's.
	o.IndexPartitionSize = []int{0, 1, 100, 1024}[o.MemtableSize>>5&3]
	switch r := rng.IntN(10); {
	case r < 2:
		o.DisableFilters = true
	case r < 4:
		o.BitsPerKey = 1 + 19*rng.Float64()
	default:
		o.BitsPerKey = float64(1 + rng.IntN(20))
	}
	switch rng.IntN(4) {
	case 0:
		o.BlockCacheSize = -1 // disabled
	case 1:
		o.BlockCacheSize = int64(1 + rng.IntN(64<<10)) // tiny: evictions
	}
	// Small levels and tables, so that compactions run all the time.
	o.FilterAllocation = []FilterAllocation{UniformAllocation, OptimalAllocation, BestAllocation, ProgressiveAllocation}[rng.IntN(4)]
	o.L0CompactionTrigger = 1 + rng.IntN(4)
	o.BaseLevelSize = uint64(16<<10 + rng.IntN(240<<10))
	o.TargetFileSize = uint64(4<<10 + rng.IntN(60<<10))
	o.LevelSizing = []LevelSizing{DynamicLevelSizing, StaticLevelSizing}[rng.IntN(2)]
	o.MaxConcurrentCompactions = 1 + rng.IntN(4)
	if rng.IntN(3) == 0 { // low L0 thresholds: writes paced and stalled often
		o.L0SlowdownTrigger = o.L0CompactionTrigger + rng.IntN(3)
		o.L0StopTrigger = o.L0SlowdownTrigger + 1 + rng.IntN(4)
	}
	// A table cache smaller than the tree, so that table files close and
	// reopen under reads; manifests small enough to rotate.
	if rng.IntN(2) == 0 {
		o.MaxOpenFiles = 16 + rng.IntN(48)
	}
	if rng.IntN(2) == 0 {
		o.MaxManifestFileSize = int64(1<<10 + rng.IntN(16<<10))
	}
	// Where there are filters: prefixes in them half the time, under one
	// of the extractors the prefix checks know, and a filter family per
	// level now and then.
	if !o.DisableFilters {
		if rng.IntN(2) == 0 {
			o.Prefix = testExtractors[rng.IntN(len(testExtractors))]
		}
		if rng.IntN(4) == 0 {
			for range 1 + rng.IntN(4) {
				o.LevelFilters = append(o.LevelFilters, []FilterSpec{Bloom(10), Fuse(8), Fuse(16), Ribbon(8), Ribbon(16)}[rng.IntN(5)])
			}
		}
	}
	// Range filters half the time, whatever the point filters: a level
	// without now and then, and 3 bits per key (a false positive in two
	// ranges of a key) to 24 (almost none), so that range scans skip
	// many tables and read some.
	if rng.IntN(2) == 0 {
		for range 1 + rng.IntN(3) {
			o.RangeFilterBits = append(o.RangeFilterBits, []float64{0, 3, 8, 16, 24}[rng.IntN(5)])
		}
	}
	// Value separation, drawn last so that every seed's other options
	// stay: off, the default size, or sizes that separate most values
	// (randValue's are up to 12 KB); dead shares that reclaim blob files
	// all the time, or seldom.
	switch rng.IntN(4) {
	case 0:
		o.ValueSeparation.MinSize = ValueSeparationOff
	case 2:
		o.ValueSeparation.MinSize = 1 + rng.IntN(64)
	case 3:
		o.ValueSeparation.MinSize = 100 + rng.IntN(1000)
	}
	if rng.IntN(2) == 0 {
		o.ValueSeparation.DeadShare = 0.05 + 0.9*rng.Float64()
	}
	// Paged filters half the time, drawn after everything else: on the
	// tables whose filters the allocation or LevelFilters made weaker
	// than BitsPerKey.
	o.pagedFiltersWithoutLimit = rng.IntN(2) == 0
	return o
}

// separateByParity sets o's value separation by n's parity: off for an
// even n; for an odd one, at the size randOptions drew or, if it drew off
// or the default, at one of 1–1,100 bytes. A randomized test that runs
// consecutive seeds (or configurations) so runs any two of them with
// values inline and in blob files.
func separateByParity(o *Options, n uint64, rng *rand.Rand) {
	if n%2 == 0 {
		o.ValueSeparation.MinSize = ValueSeparationOff
	} else if o.ValueSeparation.MinSize < 1 {
		o.ValueSeparation.MinSize = 1 + rng.IntN(1100)
	}
}

// sizeFor returns normal, or underRace under -race (race.Enabled), which
// slows the biggest tests tenfold.
func sizeFor(normal, underRace int) int {
	if race.Enabled {
		return underRace
	}
	return normal
}

// runTestChild runs this test binary's test name (-test.run=^name$, -v) in
// a child process, with env (NAME=value) added to its environment, and
// returns what it printed; it fails t unless the child exits 0 having run
// the test. A test whose oracle is the whole process — its resident memory,
// its file limit — runs its body in a child, so that what other tests left
// in this process cannot sway it.
func runTestChild(t *testing.T, name, env string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+name+"$", "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), env)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: "+name) {
		t.Fatalf("%s in a child process (%s): %v\n%s", name, env, err, out)
	}
	return string(out)
}

// b2i is 1 for true, 0 for false: a count of the cases that hold.
func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// noCompaction is an L0CompactionTrigger no test workload reaches.
const noCompaction = 1000

// failOne is the policy of an Injecting that fails one operation, the
// one of index at (none for -1), and remembers it, with whether its
// file's latest handle was opened read-only (by Open), which makes some
// failures harmless (benignFailure). It is called from the DB's
// goroutines: failed reads it under the same lock.
type failOne struct {
	at int64

	mu         sync.Mutex
	readOnly   map[string]bool // whether the name's latest handle was opened by Open
	op         *vfs.Op
	opReadOnly bool
}

// policy is the Injecting's policy.
func (f *failOne) policy(op vfs.Op) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	switch op.Kind {
	case vfs.OpOpen, vfs.OpCreate:
		if f.readOnly == nil {
			f.readOnly = map[string]bool{}
		}
		f.readOnly[op.Name] = op.Kind == vfs.OpOpen
	}
	if op.Index != f.at {
		return false
	}
	f.op, f.opReadOnly = &op, f.readOnly[op.Name]
	return true
}

// failed returns the operation failed, nil before it ran, and whether its
// file was opened read-only.
func (f *failOne) failed() (*vfs.Op, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.op, f.opReadOnly
}

// lockIdle locks d.mu once no flush or compaction runs — none can start
// while it is held: it must join d.mu.imm or d.mu.compactions first — and
// the deleter has removed the files the finished ones retired. It returns
// the sticky error if there is one, with d.mu held all the same.
func (d *DB) lockIdle() error {
	d.mu.Lock()
	for {
		for d.mu.bgErr == nil && (len(d.mu.compactions) > 0 || len(d.mu.imm) > 0) {
			d.mu.cond.Wait()
		}
		if d.mu.bgErr != nil {
			return d.mu.bgErr
		}
		// pickGen changes with every job begun or ended and every
		// version: unchanged, no job has queued a file since the wait.
		gen := d.mu.pickGen
		d.mu.Unlock()
		d.deleter.wait()
		d.mu.Lock()
		if d.mu.pickGen == gen {
			return nil
		}
	}
}
