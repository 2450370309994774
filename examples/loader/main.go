// Command loader builds a bloomkv tree of -n keys by bulk ingest — sorted
// keys written into tables with package sstable's Writer, each with its
// filter, then added in one DB.Ingest — and, with -compare, the same tree
// by Puts in random order, as a load of a data set built elsewhere would
// otherwise go. It reports each load's time, the flush and compactions
// after it included (fill+settle), their ratio, and then random Gets of
// present keys (readrandom) and of absent ones (readmissing) on both
// trees, in alternating rounds so that the machine's load falls on both
// alike. With -pairs p each tree is loaded p times, in turns, and the
// ratio is of the total times.
//
//	go run ./examples/loader [-n keys] [-value bytes] [-table keys] [-reads n] [-compare [-pairs p]] [-dir DIR]
//
// Keys are 16 hexadecimal digits of a permutation of 0…n−1 (an absent key
// is one of n…2n−1), values -value bytes. Without -dir the databases live
// in a temporary directory removed at exit.
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/sstable"
)

type config struct {
	n, value, table, reads int
	missingReads, pairs    int
	compare                bool
	dir                    string
}

func main() {
	var c config
	flag.IntVar(&c.n, "n", 1_000_000, "keys to load")
	flag.IntVar(&c.value, "value", 100, "bytes of each value")
	flag.IntVar(&c.table, "table", 500_000, "keys per ingested table")
	flag.IntVar(&c.reads, "reads", 200_000, "Gets of present keys (readrandom), per tree")
	flag.IntVar(&c.missingReads, "missing-reads", 4_000_000, "Gets of absent keys (readmissing), per tree: many more, each costing far less")
	flag.BoolVar(&c.compare, "compare", false, "also load the keys by Puts, and compare")
	flag.IntVar(&c.pairs, "pairs", 1, "loads of each tree, taking turns; the reads run on the last")
	flag.StringVar(&c.dir, "dir", "", "directory for the databases (default: a temporary one)")
	flag.Parse()
	if err := run(os.Stdout, c); err != nil {
		fmt.Fprintln(os.Stderr, "loader:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, c config) error {
	if c.n <= 0 || c.value < 0 || c.table <= 0 || c.reads < 0 || c.missingReads < 0 || c.pairs <= 0 {
		return errors.New("-n, -table and -pairs must be positive, -value and -reads not negative")
	}
	if c.dir == "" {
		dir, err := os.MkdirTemp("", "loader")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		c.dir = dir
	}
	// Each pair loads both trees afresh, ingest first; all pairs but the
	// last are then removed, so that the noise of a busy machine falls on
	// both loads alike and is seen.
	var ingested, put *bloomkv.DB
	var took, putTook time.Duration
	for p := range c.pairs {
		if p > 0 {
			ingested.Close()
			if put != nil {
				put.Close()
			}
			for _, sub := range []string{"ingest", "tables", "puts"} {
				if err := os.RemoveAll(filepath.Join(c.dir, fmt.Sprint(sub, p-1))); err != nil {
					return err
				}
			}
		}
		db, t, err := loadByIngest(c, fmt.Sprint(p))
		if err != nil {
			return err
		}
		ingested, took = db, took+t
		m := db.Metrics()
		fmt.Fprintf(w, "ingest: %d keys in %d tables, %.1f MB, in %v (fill+settle)\n", c.n, m.TablesIngested, float64(m.BytesIngested)/1e6, t.Round(time.Millisecond))
		if !c.compare {
			continue
		}
		if db, t, err = loadByPuts(c, fmt.Sprint(p)); err != nil {
			ingested.Close()
			return err
		}
		put, putTook = db, putTook+t
		fmt.Fprintf(w, "puts:   %d keys in %v (fill+settle)\n", c.n, t.Round(time.Millisecond))
	}
	defer ingested.Close()
	if !c.compare {
		return nil
	}
	defer put.Close()
	fmt.Fprintf(w, "ingest is %.1f× as fast as puts (%d pairs: %v against %v)\n", putTook.Seconds()/took.Seconds(), c.pairs,
		took.Round(time.Millisecond), putTook.Round(time.Millisecond))
	settledAt := [2]uint64{ingested.Metrics().Compactions, put.Metrics().Compactions}
	for _, missing := range []bool{false, true} {
		name, n := "readrandom", c.reads
		if missing {
			name, n = "readmissing", c.missingReads
		}
		var t [2]time.Duration
		for r := range readRounds {
			for i, db := range []*bloomkv.DB{ingested, put} {
				d, err := reads(db, c.n, c.value, n/readRounds, missing, uint64(r))
				if err != nil {
					return fmt.Errorf("%s: %w", name, err)
				}
				t[i] += d
			}
		}
		per := func(d time.Duration) float64 { return float64(readRounds*(n/readRounds)) / d.Seconds() }
		fmt.Fprintf(w, "%-11s ingested tree %.0f Gets/s, put tree %.0f Gets/s, ratio %.3f\n", name, per(t[0]), per(t[1]), t[1].Seconds()/t[0].Seconds())
	}
	// A compaction during the reads competes with them for the machine.
	fmt.Fprintf(w, "compactions during the reads: ingested tree %d, put tree %d\n",
		ingested.Metrics().Compactions-settledAt[0], put.Metrics().Compactions-settledAt[1])
	return nil
}

// key returns key i: its 16 hexadecimal digits.
func key(buf []byte, i uint64) []byte { return fmt.Appendf(buf[:0], "%016x", i) }

// value returns the value of key i.
func value(buf []byte, i uint64, n int) []byte {
	buf = buf[:0]
	for len(buf) < n {
		buf = fmt.Appendf(buf, "%016x", i*0x9e3779b97f4a7c15)
	}
	return buf[:n]
}

// loadByIngest writes the keys, in order, into tables of c.table keys and
// ingests them into a new database, then settles it.
func loadByIngest(c config, suffix string) (*bloomkv.DB, time.Duration, error) {
	start := time.Now()
	// Tables of their own: writing over a file a DB linked would change
	// its table.
	src := filepath.Join(c.dir, "tables"+suffix)
	if err := os.MkdirAll(src, 0o755); err != nil {
		return nil, 0, err
	}
	var paths []string
	var kb, vb []byte
	for lo := 0; lo < c.n; lo += c.table {
		path := filepath.Join(src, fmt.Sprintf("%d.sst", len(paths)))
		if err := writeTable(path, lo, min(lo+c.table, c.n), c.value, &kb, &vb); err != nil {
			return nil, 0, err
		}
		paths = append(paths, path)
	}
	db, err := bloomkv.Open(filepath.Join(c.dir, "ingest"+suffix), nil)
	if err != nil {
		return nil, 0, err
	}
	return settled(db, db.Ingest(paths), start)
}

// writeTable writes keys [lo, hi) as a table at path, synced: the filter
// and compression those of a DB's default options.
func writeTable(path string, lo, hi, valueLen int, kb, vb *[]byte) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w, err := sstable.NewWriter(f, sstable.WriterOptions{Filter: sstable.Bloom(10), Compression: sstable.SnappyCompression, BlockAlign: true})
	if err != nil {
		return err
	}
	for i := lo; i < hi; i++ {
		*kb, *vb = key(*kb, uint64(i)), value(*vb, uint64(i), valueLen)
		if err := w.Add(sstable.MakeInternalKey(*kb, 0, sstable.KindSet), *vb); err != nil {
			return err
		}
	}
	if _, err := w.Finish(); err != nil {
		return err
	}
	return f.Sync()
}

// loadByPuts puts the keys, in random order, into a new database without
// waiting for the disk on each (bloomkv.NoSync), then settles it.
func loadByPuts(c config, suffix string) (*bloomkv.DB, time.Duration, error) {
	start := time.Now()
	db, err := bloomkv.Open(filepath.Join(c.dir, "puts"+suffix), nil)
	if err != nil {
		return nil, 0, err
	}
	var kb, vb []byte
	for _, i := range rand.New(rand.NewPCG(1, 2)).Perm(c.n) {
		kb, vb = key(kb, uint64(i)), value(vb, uint64(i), c.value)
		if err = db.Put(kb, vb, bloomkv.NoSync); err != nil {
			break
		}
	}
	return settled(db, err, start)
}

// settled, after a load that returned err, flushes the memtable and waits
// until the background compactions have nothing left to do; it returns
// the database and the time since start, or closes it on an error.
func settled(db *bloomkv.DB, err error, start time.Time) (*bloomkv.DB, time.Duration, error) {
	if err == nil {
		err = db.Flush()
	}
	for err == nil {
		if m := db.Metrics(); !m.CompactionPending && m.ImmutableMemtables == 0 {
			return db, time.Since(start), nil
		}
		time.Sleep(5 * time.Millisecond)
	}
	db.Close()
	return nil, 0, err
}

// readRounds is the number of rounds each read workload is cut into, the
// two trees taking turns.
const readRounds = 10

// reads makes count random Gets of the n keys' present ones or, with
// missing, of absent ones, checking each answer, and returns their time.
func reads(db *bloomkv.DB, n, valueLen, count int, missing bool, round uint64) (time.Duration, error) {
	rng := rand.New(rand.NewPCG(round, 7))
	var kb, vb []byte
	start := time.Now()
	for range count {
		i := rng.Uint64N(uint64(n))
		if missing {
			i += uint64(n)
		}
		kb = key(kb, i)
		got, err := db.Get(kb)
		switch {
		case missing && !errors.Is(err, bloomkv.ErrNotFound):
			return 0, fmt.Errorf("a Get of absent key %s: %q, %v", kb, got, err)
		case !missing && err != nil:
			return 0, fmt.Errorf("a Get of key %s: %v", kb, err)
		case !missing && string(got) != string(value(vb, i, valueLen)):
			return 0, fmt.Errorf("a Get of key %s: %q, want %q", kb, got, value(vb, i, valueLen))
		}
	}
	return time.Since(start), nil
}
