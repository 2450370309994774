package bloomkv

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/bloomkv/bloomkv/vfs"
)

// TestFiltersAtWork is the project's claim, measured: with the data in 12
// overlapping L0 tables, a Get of an absent key inside the key range reads a
// data block from only the tables whose filter gives a false positive —
// about 1% of the tables it probes — and with filters off it reads one
// block from every table whose range holds the key. Reads are counted by
// the file system, not by the DB, and the block cache is off so every block
// a lookup needs is a read.
func TestFiltersAtWork(t *testing.T) {
	const tables, perTable, gets = 12, 2000, 5000
	for _, filters := range []bool{true, false} {
		t.Run(fmt.Sprintf("filters=%v", filters), func(t *testing.T) {
			fs := vfs.NewCounting(vfs.NewMem(), nil)
			// Compaction would merge the tables; this test wants them side by side.
			db, err := Open("/db", &Options{FS: fs, MemtableSize: 8 << 20, BlockCacheSize: -1, DisableFilters: !filters, L0CompactionTrigger: 64})
			if err != nil {
				t.Fatal(err)
			}
			defer db.Close()
			// Each table gets even-numbered keys from across the whole range,
			// so the tables overlap; odd numbers are never written.
			rng := rand.New(rand.NewPCG(1, 1))
			type span struct{ lo, hi int }
			var spans []span
			for range tables {
				s := span{math.MaxInt, -1}
				for range perTable {
					n := 2 * rng.IntN(500_000)
					s.lo, s.hi = min(s.lo, n), max(s.hi, n)
					if err := db.Put(key(n), []byte("v"), NoSync); err != nil {
						t.Fatal(err)
					}
				}
				spans = append(spans, s)
				if err := db.Flush(); err != nil {
					t.Fatal(err)
				}
			}
			if got := db.Metrics().Levels[0].Tables; got != tables {
				t.Fatalf("%d L0 tables, want %d", got, tables)
			}
			// The oracle for each lookup: the tables whose range holds the
			// key, from the spans written, and the false-positive rate each
			// one's filter should have.
			db.mu.Lock()
			rates := map[int]float64{} // table (by span index) → expected FPR
			for i, tb := range db.mu.current.tables[0] {
				// L0 is newest first; spans oldest first.
				if f := tb.reader.Filter(); f != nil {
					rates[tables-1-i] = f.ExpectedFalsePositiveRate()
				}
			}
			db.mu.Unlock()

			before := fs.Kind(vfs.KindTable).ReadCalls()
			probes, expected, variance := 0, 0.0, 0.0
			for range gets {
				n := 2*rng.IntN(500_000) + 1
				if _, err := db.Get(key(n)); err != ErrNotFound {
					t.Fatalf("Get(%d) = %v, want ErrNotFound", n, err)
				}
				for i, s := range spans {
					if s.lo <= n && n <= s.hi {
						probes++
						p := rates[i]
						expected += p
						variance += p * (1 - p)
					}
				}
			}
			reads := float64(fs.Kind(vfs.KindTable).ReadCalls() - before)
			m := db.Metrics().Levels[0]
			if m.TableProbes != uint64(probes) {
				t.Fatalf("the DB counted %d table probes, the oracle %d", m.TableProbes, probes)
			}
			if !filters {
				if reads != float64(probes) {
					t.Fatalf("without filters: %v block reads for %d probes, want one each", reads, probes)
				}
				return
			}
			// Each probe reads a block with its table's false-positive
			// rate: the total is a sum of Bernoulli trials. Five standard
			// deviations either side cannot fail by chance (fixed seed).
			bound := 5 * math.Sqrt(variance)
			if math.Abs(reads-expected) > bound {
				t.Fatalf("%v block reads for %d probes; expected %.1f ± %.1f", reads, probes, expected, bound)
			}
			if reads != float64(m.BlocksFromFile) || m.FilterNegatives+m.FilterPositives != uint64(probes) {
				t.Fatalf("metrics disagree with the file system: %+v, %v reads", m, reads)
			}
			t.Logf("%d gets, %d table probes, %v block reads (%.2f%% of probes; expected %.1f ± %.1f); measured FPR %.3f%%",
				gets, probes, reads, 100*reads/float64(probes), expected, bound, 100*m.FalsePositiveRate())
		})
	}
}

func key(n int) []byte { return []byte(fmt.Sprintf("key%08d", n)) }
