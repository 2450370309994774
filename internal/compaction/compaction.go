package compaction

import (
	"bytes"
	"fmt"
	"math"
	"runtime"
	"strings"
	"sync"

	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/sstable"
)

// Compaction is one unit of work the picker chose: tables to merge and the
// level their merge goes to. It is plain data, computed from one version; the
// DB runs it with Run (or moves its one table, see IsTrivialMove) and
// installs the result with one manifest edit (Edit).
//
// INVARIANT: no table left in Level holds a version of a user key in
// [Smallest, Largest] older than a version the compaction moves (L0 inputs
// are closed under overlap, and tables of a deeper level share no user
// key); and Inputs[1] is every table of OutputLevel that overlaps
// [Smallest, Largest] — but for an intra-L0 compaction, whose inputs are
// L0's newest tables, every one newer than the oldest of them, so that
// its one output takes their place in L0's order. So the outputs replace
// the inputs in OutputLevel without overlapping the tables left there
// (L0's by seqnum), and no version ends up below an older one.
type Compaction struct {
	// Level is the input level, never the last; OutputLevel is where
	// the outputs go: Level+1, the base level from L0, or Level itself
	// for a rewrite in place (BlobRewrite, PickExpired) and an intra-L0
	// compaction (L0's newest tables merged into one L0 table, with no
	// Inputs[1]: see intraL0).
	Level, OutputLevel int
	// Inputs[0] are the input tables of Level, in the level's order;
	// Inputs[1] the tables of OutputLevel that overlap them, in key order.
	Inputs [2][]*manifest.FileMetadata
	// Smallest and Largest bound the user keys of every input table.
	Smallest, Largest []byte
	// Bottommost reports that no level below OutputLevel has a table
	// overlapping [Smallest, Largest]. Then a tombstone that hides no
	// older version in the compaction hides nothing at all and Run drops
	// it.
	Bottommost bool
	// Filter is the filter of the output tables (the zero spec: none),
	// from the filter allocation and the tree's shape (PlanForLevel).
	// Where the plan mixes two filters in OutputLevel (BestAllocation),
	// Filter is the cheaper, and FilterHi goes to the fraction
	// FilterHiFraction of the outputs, each output by its file number
	// (OutputFilter; LevelFilter.For). FilterHiFraction 0 (and FilterHi
	// unset) gives every output Filter.
	Filter           sstable.FilterSpec
	FilterHi         sstable.FilterSpec
	FilterHiFraction float64
	// Compression is the compression of the output tables' data blocks
	// (Options.OutputCompression).
	Compression sstable.Compression
	// Grandparents are the tables of the level below OutputLevel that
	// overlap [Smallest, Largest], in key order (none when OutputLevel is
	// the last level): Run cuts outputs at their starts (outputCutter).
	Grandparents []*manifest.FileMetadata
	// Score is the score of Level that made the picker choose it, ≥ 1; 0
	// for a manual compaction.
	Score float64
	// Manual reports that PickManual chose it.
	Manual bool
	// BlobRewrite reports a rewrite of one table into its own level, to
	// relocate the live values of blob files in RelocateBlobs
	// (pickBlobRewrite). A rewrite into its own level (Level ==
	// OutputLevel: this, or PickExpired's) is never a trivial move.
	BlobRewrite bool
	// RelocateBlobs are the blob files whose values the compaction
	// copies into a blob file of its own instead of copying their
	// handles: those whose dead share reached Options.BlobDeadShare when
	// it was picked.
	RelocateBlobs map[uint64]bool
}

// NumInputs returns the number of input tables.
func (c *Compaction) NumInputs() int { return len(c.Inputs[0]) + len(c.Inputs[1]) }

// InputBytes returns the total size of the input tables.
func (c *Compaction) InputBytes() uint64 {
	var n uint64
	for _, files := range c.Inputs {
		for _, f := range files {
			n += f.Size
		}
	}
	return n
}

// Filters returns the filters of the output tables, as the level's plan.
func (c *Compaction) Filters() LevelFilter {
	if c.FilterHiFraction == 0 {
		return Single(c.Filter)
	}
	return LevelFilter{Lo: c.Filter, Hi: c.FilterHi, HiFraction: c.FilterHiFraction}
}

// OutputFilter returns the filter of the output table numbered fileNum:
// Filters().For(fileNum), what FilterForLevel gives it on the version
// the compaction was picked from.
func (c *Compaction) OutputFilter(fileNum uint64) sstable.FilterSpec {
	return c.Filters().For(fileNum)
}

// setFilters sets the output tables' filters to f (Filter alone for a
// level of one filter).
func (c *Compaction) setFilters(f LevelFilter) {
	c.Filter, c.FilterHi, c.FilterHiFraction = f.Lo, sstable.FilterSpec{}, 0
	if f.Mixed() {
		c.FilterHi, c.FilterHiFraction = f.Hi, f.HiFraction
	}
}

// trivialMoveSlack is how far (relative) a table's filter may be from its
// new level's bits per key and still be moved without a rewrite: enough to
// absorb the rounding of a filter to whole 512-bit blocks in a table of a few
// thousand keys, not enough to let OptimalAllocation's per-level sizing
// drift (its adjacent levels differ by several bits per key).
const trivialMoveSlack = 0.1

// IsTrivialMove reports whether the compaction can be done by moving its one
// input table to OutputLevel with an edit (Edit(c.Inputs[0])), without
// reading or writing it: it has a single input, nothing of OutputLevel
// overlaps it, and its filter suits Filter, the filter OutputLevel's
// tables get (filterSuits: the same family, for Bloom within 10% in bits
// per key, for fuse the same width), so a move never drags a filter sized
// for one level into another — under OptimalAllocation and BestAllocation
// that leaves the moves between levels of different filters to a
// rewrite. A move keeps the table's shadowed versions and tombstones; that
// is the price of not rewriting it, paid later when the key range is
// compacted again.
//
// Where OutputLevel mixes two filters (BestAllocation: FilterHiFraction >
// 0), only a table with the cheaper, Filter, moves; one with the richer is
// rewritten, and its outputs get the richer filter at the plan's fraction
// (OutputFilter). A move then never spends more memory than the plan gives
// the level, and a table moved in with the cheaper filter only lowers the
// level's share of the richer one. Were either filter to suit, the moves
// would bring the richer one in at their source's fraction rather than
// the plan's: the level above usually has it on every table, and a
// sequential load, which moves every table down, would put it on the
// whole level, up to a step of the largest level (about a bit per key)
// over the budget. Were the filter to suit that the table's own number
// draws (For), the level would be biased too: the tables refused are
// rewritten under new numbers and draw again, so the level would get its
// fraction of the richer filter on top of the tables moved with it.
//
// Nor does a table move to a level whose tables are compressed otherwise
// (compressionSuits): L0 and the base level are written uncompressed by
// default, and a sequential load, which moves every table, would
// otherwise carry them uncompressed to the bottom of the tree.
func (c *Compaction) IsTrivialMove() bool {
	if c.Level == c.OutputLevel || len(c.Inputs[0]) != 1 || len(c.Inputs[1]) != 0 {
		return false
	}
	return filterSuits(c.Inputs[0][0], c.Filter) && compressionSuits(c.Inputs[0][0], c.Compression)
}

// compressionSuits reports whether table m's data blocks are compressed as
// want would compress them, or m's compression is unknown (recorded before
// the manifest held it: those move as they always did). A writer stores
// DefaultCompression's blocks uncompressed.
func compressionSuits(m *manifest.FileMetadata, want sstable.Compression) bool {
	if want == sstable.DefaultCompression {
		want = sstable.NoCompression
	}
	return m.Compression == 0 || sstable.Compression(m.Compression) == want
}

// filterSuits reports whether table m's filter is close enough to want to
// move the table where want is built: no filter for none; the same family,
// and for Bloom bits per key within trivialMoveSlack, for fuse and ribbon
// the same width. A fuse or ribbon want is also met by the Bloom filter of
// the same false-positive rate that the writer builds instead where the
// filter costs more (small tables) or cannot be built
// (FilterSpec.StandIn): that is what a rewrite of such a table would build
// again. (A large table whose Bloom filter has that rate moves too,
// spending up to about a fifth more bits per key than a fuse filter would,
// and more than a Ribbon filter, rather than being rewritten for it.)
func filterSuits(m *manifest.FileMetadata, want sstable.FilterSpec) bool {
	family, param := m.Filter()
	if (want.Family == sstable.FuseFamily || want.Family == sstable.RibbonFamily) && sstable.FilterFamily(family) == sstable.BloomFamily {
		want = want.StandIn()
	}
	switch {
	case sstable.FilterFamily(family) != want.Family:
		return false
	case want.Family == sstable.BloomFamily:
		return math.Abs(param-want.Bits) <= trivialMoveSlack*want.Bits
	}
	return param == want.Bits
}

// Edit returns the version edit that installs the compaction's outputs: it
// deletes every input table from its level and adds outputs to OutputLevel.
// For a trivial move pass c.Inputs[0] as outputs: the edit deletes the
// table from Level and adds it to OutputLevel. The DB adds the counters
// (NextFileNumber) before it appends the edit.
func (c *Compaction) Edit(outputs []*manifest.FileMetadata) *manifest.VersionEdit {
	e := &manifest.VersionEdit{}
	for i, files := range c.Inputs {
		level := c.Level
		if i == 1 {
			level = c.OutputLevel
		}
		for _, f := range files {
			e.DeletedFiles = append(e.DeletedFiles, manifest.DeletedFile{Level: level, FileNum: f.FileNum})
		}
	}
	for _, f := range outputs {
		e.NewFiles = append(e.NewFiles, manifest.NewFile{Level: c.OutputLevel, Meta: f})
	}
	return e
}

// String describes the compaction for logs and tests, e.g.
// "L0→L1 score 1.50 [a, z] inputs 000004 000003 + 000002 bottommost bits/key 10".
func (c *Compaction) String() string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "L%d→L%d", c.Level, c.OutputLevel)
	switch {
	case c.Manual:
		sb.WriteString(" manual")
	case c.BlobRewrite:
		sb.WriteString(" blob rewrite")
	default:
		fmt.Fprintf(&sb, " score %.2f", c.Score)
	}
	fmt.Fprintf(&sb, " [%q, %q] inputs", c.Smallest, c.Largest)
	for i, files := range c.Inputs {
		if i == 1 && len(files) > 0 {
			sb.WriteString(" +")
		}
		for _, f := range files {
			fmt.Fprintf(&sb, " %06d", f.FileNum)
		}
	}
	if c.Bottommost {
		sb.WriteString(" bottommost")
	}
	fmt.Fprintf(&sb, " filter %v", c.Filters())
	return sb.String()
}

// keyRange returns the smallest and largest user keys of files, which must
// not be empty. The results alias the files' keys.
func keyRange(files ...[]*manifest.FileMetadata) (lo, hi []byte) {
	first := true
	for _, fs := range files {
		for _, f := range fs {
			if first || bytes.Compare(f.Smallest.UserKey, lo) < 0 {
				lo = f.Smallest.UserKey
			}
			if first || bytes.Compare(f.Largest.UserKey, hi) > 0 {
				hi = f.Largest.UserKey
			}
			first = false
		}
	}
	return lo, hi
}

// parallel calls f(0), …, f(n−1) on up to GOMAXPROCS goroutines, and
// returns when all have returned.
func parallel(n int, f func(i int)) {
	workers := min(runtime.GOMAXPROCS(0), n)
	var wg sync.WaitGroup
	wg.Add(workers)
	for w := range workers {
		go func() {
			defer wg.Done()
			for i := w; i < n; i += workers {
				f(i)
			}
		}()
	}
	wg.Wait()
}
