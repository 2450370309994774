package bloomkv

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/humanize"
	"github.com/bloomkv/bloomkv/internal/manifest"
	"github.com/bloomkv/bloomkv/sstable"
)

// Explain looks key up exactly as Get does and returns the lookup's
// account: every place the read consulted, in order — the memtables, then
// each level and table — with what each cost, and where the answer came
// from. The lookup is the same code as Get's (not a re-enactment), so it
// counts in Metrics like any Get, and it warms the block cache like one.
//
// A missing or deleted key is no error: the Trace says so. The error is
// ErrClosed, or a read error such as corruption, in which case the Trace
// holds the steps up to the failure.
func (d *DB) Explain(key []byte) (*Trace, error) {
	rs, seq, err := d.acquireReadState()
	if err != nil {
		return nil, err
	}
	defer d.releaseReadState(rs)
	t := &Trace{Key: bytes.Clone(key), SeqNum: uint64(seq)}
	value, err := d.lookup(rs, key, seq, t)
	switch {
	case err == nil:
		t.Value = value
	case errors.Is(err, ErrNotFound):
		err = nil
	}
	return t, err
}

// Trace is the account of one point lookup that DB.Explain returns, of
// one prefix seek that DB.ExplainPrefix returns, or of one range scan that
// DB.ExplainRange returns.
type Trace struct {
	// Key is the key looked up, a prefix seek's key, or a range scan's
	// lower bound.
	Key []byte
	// RangeEnd is a range scan's upper bound, never nil then; nil
	// otherwise.
	RangeEnd []byte
	// Prefix is a prefix seek's prefix (Key's, under Options.Prefix),
	// never nil then; nil for a point lookup.
	Prefix []byte
	// Keys counts the keys a prefix seek found, from Key to the prefix's
	// end, or a range scan found in [Key, RangeEnd).
	Keys int
	// SeqNum is the sequence number the read saw: it looked for the newest
	// version written at or before it.
	SeqNum uint64
	// Steps are the places consulted, in the order the read consulted them.
	Steps []TraceStep
	// Found reports that a version of Key was found, and Deleted that it is
	// a tombstone, so that the key has no value. Value is the value
	// otherwise. A prefix seek sets Found alone, if it found a key.
	Found, Deleted bool
	Value          []byte
	// Source names where the version was found, as Step.Place does:
	// "memtable", "immutable memtable 1", "L2/000123.sst"; empty when none was.
	Source string
	// CoveredBy, when a range tombstone deleted Key, names it and where it
	// was met: `range tombstone ["a", "m") @42 in L1/000123.sst`. Deleted
	// is then true, and Source the place.
	CoveredBy string
	// Operands counts the merge operands the lookup found and folded into
	// Value (Source is then "merge"); MergeBase names where the value
	// they were folded over was found, empty when there was none (the key
	// deleted below them, its version there expired, or never set).
	Operands  int
	MergeBase string
	// ExpiresAt is the expiry of the version found, if it was written with
	// a time-to-live (the zero Time otherwise); Expired reports that it had
	// passed (an ExpiredStep): Deleted is then true, and Source the place
	// that held the version.
	ExpiresAt time.Time
	Expired   bool
}

// StepKind says what a TraceStep consulted.
type StepKind uint8

// The kinds of step.
const (
	// MemtableStep: a memtable, searched in memory.
	MemtableStep StepKind = iota + 1
	// TableStep: a table, through its key range, its filter, its index and
	// at most one data block.
	TableStep
	// LevelStep: a level below L0 where no table's key range holds the key,
	// found by a binary search of the level's key bounds: no table consulted.
	LevelStep
	// BlobStep: the read of a value from a blob file (FileNum), after the
	// table step that found its handle; BytesRead is its record's size.
	BlobStep
	// MergeStep: the fold of the merge operands the steps before it found
	// (Operands of them) over the value found last, if any, with
	// Options.Merger; it reads nothing.
	MergeStep
	// ExpiredStep: the version the step before found has a time-to-live
	// that ended at ExpiresAt, at or before the clock's reading Now: the
	// key reads as deleted (Found and Deleted), its older versions hidden.
	ExpiredStep
)

// FilterVerdict is what a table's filter said of the key.
type FilterVerdict uint8

// The filter verdicts.
const (
	// FilterNotAsked: the key is outside the table's range, so the filter
	// was not consulted.
	FilterNotAsked FilterVerdict = iota
	// NoFilter: the table has no filter (a range scan's: no range
	// filter), so it had to be read.
	NoFilter
	// FilterAbsent: the filter ruled the key out; nothing was read.
	FilterAbsent
	// FilterMaybe: the filter could not rule the key out, so the index and
	// a data block were consulted. If the table then held no version of
	// the key at all, that was a false positive.
	FilterMaybe
	// FilterNoPrefixes: a prefix seek's table whose filter holds no
	// prefixes of the seek's extractor (the table was written without
	// Options.Prefix, or under an extractor of another Name), so the table
	// had to be sought.
	FilterNoPrefixes
)

// String returns the verdict as Trace.String prints it.
func (v FilterVerdict) String() string {
	switch v {
	case FilterNotAsked:
		return "-"
	case NoFilter:
		return "none"
	case FilterAbsent:
		return "absent"
	case FilterMaybe:
		return "maybe"
	case FilterNoPrefixes:
		return "no prefixes"
	}
	return fmt.Sprintf("FilterVerdict(%d)", uint8(v))
}

// TraceStep is one place a lookup or a prefix seek consulted.
type TraceStep struct {
	Kind StepKind
	// Memtable numbers a MemtableStep's memtable: 0 is the mutable one,
	// i ≥ 1 the i-th immutable one, newest first.
	Memtable int
	// Level is the level of a TableStep or LevelStep.
	Level int
	// Tables is the number of tables in a LevelStep's level.
	Tables int
	// FileNum is a TableStep's table, or a BlobStep's blob file; Smallest
	// and Largest bound a table's user keys, inclusively.
	FileNum           uint64
	Smallest, Largest []byte
	// Ingested reports that a TableStep's table was added by DB.Ingest:
	// every version in it is at its one seqnum.
	Ingested bool
	// InRange reports that the table's key range holds the key (a prefix
	// seek's: overlaps the prefix's keys); only then is the table
	// consulted further.
	InRange bool
	// Filter is the table's filter's verdict, on the key or the prefix; a
	// range scan's, its range filter's on the range.
	Filter FilterVerdict
	// Sought reports that a prefix seek or range scan searched the
	// memtable, or opened and sought the table; a table it skipped has
	// Sought false. A point
	// lookup's steps leave it false.
	Sought bool
	// BlocksFromCache and BlocksFromFile count the data blocks the step
	// read from the block cache and from the file, and BytesRead the bytes
	// read from the file. The index is pinned in memory: it costs no read,
	// but in a table whose index is partitioned (Options.
	// IndexPartitionSize), where the step read the index partition it
	// needed from the block cache (IndexFromCache) or from the file
	// (IndexFromFile, IndexBytesRead bytes).
	BlocksFromCache, BlocksFromFile int
	BytesRead                       int64
	IndexFromCache, IndexFromFile   int
	IndexBytesRead                  int64
	// FilterPagesFromCache and FilterPagesFromFile count the pages of the
	// table's paged filter (Options.DisablePagedFilters) the step read,
	// past its filter's maybe, and PagedFilterAbsent reports that the
	// page ruled the key out: no data block was read.
	FilterPagesFromCache, FilterPagesFromFile int
	PagedFilterAbsent                         bool
	// Found reports that the step found a version of the key, Deleted
	// that it is a tombstone, Operand that it is a merge operand: the
	// lookup went on below it, to the places after.
	Found, Deleted, Operand bool
	// Operands is a MergeStep's number of operands folded.
	Operands int
	// KeyInTable reports that a TableStep's table holds the key at some
	// sequence number, visible to the read or not; Found implies it. A
	// table whose versions are all newer than the read's finds nothing,
	// yet its filter's "maybe" was right.
	KeyInTable bool
	// RangeDelStart, RangeDelEnd and RangeDelSeq describe the range
	// tombstone the step met covering the key, if it met one the read
	// sees (RangeDelSeq > 0): its fragment [RangeDelStart, RangeDelEnd)
	// and the newest of its seqnums the read sees. Range tombstones are
	// in memory, asked before the filter. CoveredByRangeDel reports that
	// the tombstone deleted the key (the step then has Found and Deleted):
	// the place held no newer version.
	RangeDelStart, RangeDelEnd []byte
	RangeDelSeq                uint64
	CoveredByRangeDel          bool
	// Round and BlockKeys are a MultiGet's (DB.ExplainMultiGet), 0 for a
	// Get's: Round is the round, from 1, in which the key was sent to the
	// table, and BlockKeys, when the step read a data block, how many
	// keys of the batch that one read (or cache hit) served, itself
	// included; above 1, the block was shared.
	Round, BlockKeys int
	// ExpiresAt and Now are an ExpiredStep's: the instant the version
	// expired and the clock's reading that found it expired.
	ExpiresAt, Now time.Time
	// Err is the error that ended the lookup at this step, if any.
	Err error
}

// rangeDel returns the step's range tombstone as Trace.String prints it:
// `range tombstone ["a", "m") @42`.
func (s *TraceStep) rangeDel() string {
	return fmt.Sprintf("range tombstone [%q, %q) @%d", s.RangeDelStart, s.RangeDelEnd, s.RangeDelSeq)
}

// setRangeDel records the range tombstone a step met.
func (s *TraceStep) setRangeDel(hit lookupRangeDel) {
	if hit.frag == nil {
		return
	}
	s.RangeDelStart, s.RangeDelEnd = bytes.Clone(hit.frag.Start), bytes.Clone(hit.frag.End)
	s.RangeDelSeq, s.CoveredByRangeDel = uint64(hit.seq), hit.decided
}

// Place names the step's place: "memtable", "immutable memtable 2",
// "L0/000007.sst", or "L3" for a LevelStep.
func (s *TraceStep) Place() string {
	switch s.Kind {
	case MemtableStep:
		if s.Memtable == 0 {
			return "memtable"
		}
		return fmt.Sprintf("immutable memtable %d", s.Memtable)
	case TableStep:
		return fmt.Sprintf("L%d/%s", s.Level, manifest.MakeFilename(manifest.FileTypeTable, s.FileNum))
	case BlobStep:
		return manifest.MakeFilename(manifest.FileTypeBlob, s.FileNum)
	case MergeStep:
		return "merge"
	case ExpiredStep:
		return "expiry"
	}
	return fmt.Sprintf("L%d", s.Level)
}

// ingestedMark follows the place of an ingested table's step in a
// trace's text: " (ingested)", or nothing.
func (s *TraceStep) ingestedMark() string {
	if s.Ingested {
		return " (ingested)"
	}
	return ""
}

// FalsePositive reports that the table's filter said "maybe" but the table
// held no version of the key at any sequence number: the filter was wrong,
// and a data block was read for nothing. A table holding only versions
// newer than the read's is no false positive (see KeyInTable), as in
// Metrics' TruePositives.
//
// It is a point lookup's notion: a prefix seek's steps (Sought) do not
// report it, since the seek does not learn which of the tables it sought
// held keys of the prefix.
func (s *TraceStep) FalsePositive() bool {
	return s.Kind == TableStep && s.Filter == FilterMaybe && !s.KeyInTable && s.Err == nil && !s.Sought
}

// Trace is lookup's tracer: the methods below are the lookupTracer hooks.

func (t *Trace) memtable(i int, found bool, kind base.Kind, hit lookupRangeDel) {
	s := TraceStep{Kind: MemtableStep, Memtable: i, Found: found, Deleted: found && kind == base.KindDelete, Operand: found && kind == base.KindMerge}
	s.setRangeDel(hit)
	t.Steps = append(t.Steps, s)
	t.settle(&s)
}

func (t *Trace) outOfRange(level int, tb *table) {
	t.addTable(level, tb, nil, false, 0, lookupRangeDel{}, nil)
}

func (t *Trace) table(level int, tb *table, stats sstable.LookupStats, found bool, kind base.Kind, hit lookupRangeDel, err error) {
	t.addTable(level, tb, &stats, found, kind, hit, err)
}

func (t *Trace) noTable(level, tables int) {
	t.Steps = append(t.Steps, TraceStep{Kind: LevelStep, Level: level, Tables: tables})
}

func (t *Trace) blob(rec blobRead) {
	t.Steps = append(t.Steps, TraceStep{Kind: BlobStep, FileNum: rec.handle.FileNum, BytesRead: int64(rec.bytes), Err: rec.err})
}

func (t *Trace) merged(operands int, err error) {
	t.MergeBase = ""
	if t.Found && !t.Deleted {
		t.MergeBase = t.Source
	}
	t.Steps = append(t.Steps, TraceStep{Kind: MergeStep, Operands: operands, Found: err == nil, Err: err})
	t.Found, t.Deleted, t.CoveredBy, t.Source, t.Operands = err == nil, false, "", "merge", operands
	t.Expired = false // an expired base is no base: the fold is the answer
}

func (t *Trace) expiry(expiry, now int64) {
	t.ExpiresAt = time.Unix(0, expiry).UTC()
	if now < expiry {
		return
	}
	t.Steps = append(t.Steps, TraceStep{Kind: ExpiredStep, Found: true, Deleted: true, ExpiresAt: t.ExpiresAt, Now: time.Unix(0, now).UTC()})
	t.Expired, t.Deleted = true, true
}

// The skipTracer hooks: a prefix seek's or a range scan's steps.

func (t *Trace) skipMemtable(i int) {
	t.Steps = append(t.Steps, TraceStep{Kind: MemtableStep, Memtable: i, Sought: true})
}

func (t *Trace) skipTable(level int, tb *table, inRange bool, verdict FilterVerdict) {
	t.Steps = append(t.Steps, TraceStep{
		Kind:     TableStep,
		Level:    level,
		FileNum:  tb.meta.FileNum,
		Ingested: tb.meta.GlobalSeqNum != 0,
		Smallest: bytes.Clone(tb.meta.Smallest.UserKey),
		Largest:  bytes.Clone(tb.meta.Largest.UserKey),
		InRange:  inRange,
		Filter:   verdict,
		Sought:   inRange && verdict != FilterAbsent,
	})
}

// addTable records a table step; a nil stats means the range check failed.
func (t *Trace) addTable(level int, tb *table, stats *sstable.LookupStats, found bool, kind base.Kind, hit lookupRangeDel, err error) {
	s := TraceStep{
		Kind:     TableStep,
		Level:    level,
		FileNum:  tb.meta.FileNum,
		Ingested: tb.meta.GlobalSeqNum != 0,
		Smallest: bytes.Clone(tb.meta.Smallest.UserKey),
		Largest:  bytes.Clone(tb.meta.Largest.UserKey),
		InRange:  stats != nil,
		Found:    found,
		Deleted:  found && kind == base.KindDelete,
		Operand:  found && kind == base.KindMerge,
		Err:      err,
	}
	if stats != nil {
		switch {
		case !stats.FilterChecked:
			s.Filter = NoFilter
		case stats.FilterNegative:
			s.Filter = FilterAbsent
		default:
			s.Filter = FilterMaybe
		}
		s.BlocksFromCache, s.BlocksFromFile, s.BytesRead = stats.BlocksCached, stats.BlocksRead, stats.BytesRead
		s.IndexFromCache, s.IndexFromFile, s.IndexBytesRead = stats.IndexBlocksCached, stats.IndexBlocksRead, stats.IndexBytesRead
		s.FilterPagesFromCache, s.FilterPagesFromFile, s.PagedFilterAbsent = stats.FilterPagesCached, stats.FilterPagesRead, stats.PagedFilterNegative
		s.KeyInTable = stats.KeyPresent
	}
	s.setRangeDel(hit)
	t.Steps = append(t.Steps, s)
	t.settle(&s)
}

// settle records the answer if step s found one: a merge operand is
// none yet (see merged).
func (t *Trace) settle(s *TraceStep) {
	if s.Found && !s.Operand {
		t.Found, t.Deleted, t.Source = true, s.Deleted, s.Place()
		if s.CoveredByRangeDel {
			t.CoveredBy = s.rangeDel() + " in " + t.Source
		}
	}
}

// TraceTotals add up a trace's steps.
type TraceTotals struct {
	TablesOutOfRange  int   // tables whose key range did not hold the key
	FilterNegatives   int   // tables skipped by their filters: reads avoided
	PagedNegatives    int   // of FilterPositives, tables their paged filters skipped
	FilterPositives   int   // tables whose filters said "maybe"
	FalsePositives    int   // of those, the ones holding no version of the key
	UnfilteredTables  int   // tables without a filter (a prefix seek's: without one for its prefixes) that were read
	TablesSought      int   // tables a prefix seek opened and sought
	BlocksFromCache   int   // data blocks found in the block cache
	BlocksFromFile    int   // data blocks read from files
	BytesRead         int64 // bytes of data blocks read from table files
	MemtablesSearched int
	BlobReads         int   // values read from blob files
	BlobBytesRead     int64 // bytes those reads read
}

// Totals adds up the trace's steps.
func (t *Trace) Totals() TraceTotals {
	var n TraceTotals
	for i := range t.Steps {
		s := &t.Steps[i]
		switch {
		case s.Kind == MemtableStep:
			n.MemtablesSearched++
		case s.Kind != TableStep:
		case !s.InRange:
			n.TablesOutOfRange++
		case s.Filter == FilterAbsent:
			n.FilterNegatives++
		case s.Filter == FilterMaybe:
			n.FilterPositives++
			if s.FalsePositive() {
				n.FalsePositives++
			}
			if s.PagedFilterAbsent {
				n.PagedNegatives++
			}
		case s.Filter == NoFilter || s.Filter == FilterNoPrefixes:
			n.UnfilteredTables++
		}
		if s.Kind == TableStep && s.Sought {
			n.TablesSought++
		}
		if s.Kind == BlobStep {
			n.BlobReads++
			n.BlobBytesRead += s.BytesRead
			continue
		}
		n.BlocksFromCache += s.BlocksFromCache
		n.BlocksFromFile += s.BlocksFromFile
		n.BytesRead += s.BytesRead
	}
	return n
}

// skippedParts are a summary's first parts: the tables out of range and
// those the filter (its name) ruled out, each if any.
func skippedParts(n TraceTotals, filter string) []string {
	var parts []string
	if n.TablesOutOfRange > 0 {
		parts = append(parts, plural(n.TablesOutOfRange, "table", "tables")+" out of range")
	}
	if n.FilterNegatives == 1 {
		parts = append(parts, "1 table skipped by its "+filter)
	} else if n.FilterNegatives > 1 {
		parts = append(parts, plural(n.FilterNegatives, "table", "tables")+" skipped by their "+filter+"s")
	}
	if n.PagedNegatives > 0 {
		parts = append(parts, plural(n.PagedNegatives, "table", "tables")+" skipped by a paged filter's page")
	}
	return parts
}

// Summary is the lookup in one line, e.g. "2 tables out of range, 3
// tables skipped by their filters, 1 block read (1.21 KiB), found in
// L2/000123.sst"; for a prefix seek, e.g. "1 table out of range, 5 tables
// skipped by their filters, 1 table sought, 3 keys found".
func (t *Trace) Summary() string {
	n := t.Totals()
	if t.RangeEnd != nil {
		return t.rangeSummary(n)
	}
	parts := skippedParts(n, "filter")
	if t.Prefix != nil {
		return strings.Join(append(parts, t.prefixSummary(n)...), ", ")
	}
	if n.FalsePositives > 0 {
		parts = append(parts, plural(n.FalsePositives, "filter false positive", "filter false positives"))
	}
	if n.UnfilteredTables > 0 {
		parts = append(parts, plural(n.UnfilteredTables, "table", "tables")+" without a filter")
	}
	switch {
	case n.BlocksFromFile > 0:
		parts = append(parts, fmt.Sprintf("%s read (%s)", plural(n.BlocksFromFile, "block", "blocks"), humanize.Bytes(uint64(n.BytesRead))))
	case n.BlocksFromCache == 0 && t.sharedBlock():
		parts = append(parts, "a block another key of the batch read")
	case n.BlocksFromCache == 0:
		parts = append(parts, "no block read")
	}
	if n.BlocksFromCache > 0 {
		parts = append(parts, plural(n.BlocksFromCache, "block", "blocks")+" from the cache")
	}
	if n.BlobReads > 0 {
		parts = append(parts, fmt.Sprintf("%s from blob files (%s)", plural(n.BlobReads, "value", "values"), humanize.Bytes(uint64(n.BlobBytesRead))))
	}
	switch {
	case t.Operands > 0 && t.MergeBase != "":
		parts = append(parts, fmt.Sprintf("%s folded over the value in %s", plural(t.Operands, "merge operand", "merge operands"), t.MergeBase))
	case t.Operands > 0:
		parts = append(parts, plural(t.Operands, "merge operand", "merge operands")+" folded, no value below")
	case t.CoveredBy != "":
		parts = append(parts, "covered by "+t.CoveredBy)
	case t.Expired:
		parts = append(parts, "expired at "+t.ExpiresAt.Format(time.RFC3339Nano)+" in "+t.Source)
	case t.Deleted:
		parts = append(parts, "deleted in "+t.Source)
	case t.Found && !t.ExpiresAt.IsZero():
		parts = append(parts, "found in "+t.Source+", expires at "+t.ExpiresAt.Format(time.RFC3339Nano))
	case t.Found:
		parts = append(parts, "found in "+t.Source)
	default:
		parts = append(parts, "not found")
	}
	return strings.Join(parts, ", ")
}

// soughtFound are the last parts of a prefix seek's or range scan's
// Summary: the tables sought (how many had no filter, unfiltered naming
// it) and the keys found (none: noKeys).
func (t *Trace) soughtFound(n TraceTotals, unfiltered, noKeys string) []string {
	sought := "no table sought"
	if n.TablesSought > 0 {
		sought = plural(n.TablesSought, "table", "tables") + " sought"
	}
	if n.UnfilteredTables > 0 {
		sought += fmt.Sprintf(" (%d without %s)", n.UnfilteredTables, unfiltered)
	}
	found := noKeys
	if t.Keys > 0 {
		found = plural(t.Keys, "key", "keys") + " found"
	}
	return []string{sought, found}
}

// plural renders k things: "1 table", "3 tables".
func plural(k int, one, many string) string {
	if k == 1 {
		return "1 " + one
	}
	return strconv.Itoa(k) + " " + many
}

// String renders the trace as a table, a step a line, then the summary.
// The index column says where the table's index came from ("memory": it
// is pinned when the table opens; of a partitioned index, the partition
// the lookup needed: "cache", or "file" and the bytes read), the data
// block column whether the block
// came from the block cache or the file, and how many bytes were read:
//
//	lookup "key042" at seqnum 200
//	#  place          key range             in range  filter  index   data block   result
//	1  memtable                                                                    not here
//	2  L0/000007.sst  "key001" .. "key199"  yes       absent                       skipped
//	3  L0/000005.sst  "key000" .. "key198"  yes       maybe   memory  file, 679 B  found
//	summary: 1 table skipped by its filter, 1 block read (679 B), found in L0/000005.sst
//
// A prefix seek's trace (DB.ExplainPrefix) has no index and data block
// columns, the seek's reads being those of an iterator, which counts no
// blocks per table; its filter column is each filter's verdict on the
// prefix, and its result column says what was sought and what skipped.
func (t *Trace) String() string {
	if t.Prefix != nil {
		return t.prefixString()
	}
	if t.RangeEnd != nil {
		return t.rangeString()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "lookup %q at seqnum %d\n", t.Key, t.SeqNum)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	multi := t.multiGet()
	if multi {
		fmt.Fprint(tw, "round\tshared by\t")
	}
	fmt.Fprintln(tw, "#\tplace\tkey range\tin range\tfilter\tindex\tdata block\tresult")
	for i := range t.Steps {
		s := &t.Steps[i]
		keyRange, inRange, filter := s.rangeCells()
		var index, block string
		switch {
		case s.Kind != TableStep || s.FilterPagesFromFile+s.FilterPagesFromCache == 0:
		case s.PagedFilterAbsent:
			filter += ", paged absent"
		default:
			filter += ", paged maybe"
		}
		if s.Kind == TableStep {
			switch {
			case s.IndexFromFile > 0:
				index = "file, " + humanize.Bytes(uint64(s.IndexBytesRead))
			case s.IndexFromCache > 0:
				index = "cache"
			case s.Filter == FilterMaybe || s.Filter == NoFilter:
				index = "memory" // pinned: see sstable.Reader
			}
			switch {
			case s.BlocksFromFile > 0:
				block = "file, " + humanize.Bytes(uint64(s.BytesRead))
			case s.BlocksFromCache > 0:
				block = "cache"
			case s.BlockKeys > 1:
				block = "shared" // a MultiGet's: another key's read
			}
		}
		if s.Kind == BlobStep {
			block = "value, " + humanize.Bytes(uint64(s.BytesRead))
		}
		if multi {
			fmt.Fprint(tw, s.multiCells())
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", i+1, s.Place()+s.ingestedMark(), keyRange, inRange, filter, index, block, s.result())
	}
	tw.Flush()
	fmt.Fprintf(&b, "summary: %s\n", t.Summary())
	return b.String()
}

// result is a step's outcome for String.
func (s *TraceStep) result() string {
	switch {
	case s.Err != nil:
		return "error: " + s.Err.Error()
	case s.CoveredByRangeDel:
		return "covered by " + s.rangeDel()
	case s.Kind == BlobStep:
		return "value read"
	case s.Kind == MergeStep:
		return fmt.Sprintf("folded %s", plural(s.Operands, "operand", "operands"))
	case s.Operand:
		return "merge operand"
	case s.Kind == ExpiredStep:
		return "expired at " + s.ExpiresAt.Format(time.RFC3339Nano) + " (clock " + s.Now.Format(time.RFC3339Nano) + ")"
	case s.Deleted:
		return "deleted (tombstone)"
	case s.Found:
		return "found"
	case s.PagedFilterAbsent:
		return "false positive, skipped by the paged filter"
	case s.FalsePositive():
		return "false positive"
	case s.KeyInTable:
		return "only newer versions"
	case s.Kind == MemtableStep || (s.Kind == TableStep && s.InRange && s.Filter != FilterAbsent):
		return "not here"
	case s.Kind == TableStep:
		return "skipped"
	}
	return "skipped"
}

// skipString is String for the trace of a move that skips tables by a
// filter (a prefix seek, a bounded scan): the header line, then a row per
// step with the filter's verdict under filterColumn, then the summary.
func (t *Trace) skipString(header, filterColumn string) string {
	var b strings.Builder
	fmt.Fprintln(&b, header)
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "#\tplace\tkey range\tin range\t%s\tresult\n", filterColumn)
	for i := range t.Steps {
		s := &t.Steps[i]
		keyRange, inRange, filter := s.rangeCells()
		result := "skipped"
		if s.Sought {
			result = "sought"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", i+1, s.Place()+s.ingestedMark(), keyRange, inRange, filter, result)
	}
	tw.Flush()
	fmt.Fprintf(&b, "summary: %s\n", t.Summary())
	return b.String()
}

// rangeCells returns the key range, in-range and filter columns of step s
// as Trace.String prints them, for point lookups and prefix seeks alike.
func (s *TraceStep) rangeCells() (keyRange, inRange, filter string) {
	switch s.Kind {
	case TableStep:
		keyRange, inRange = fmt.Sprintf("%q .. %q", s.Smallest, s.Largest), "no"
		if s.InRange {
			inRange, filter = "yes", s.Filter.String()
		}
	case LevelStep:
		keyRange, inRange = fmt.Sprintf("none of its %d tables", s.Tables), "no"
		if s.Tables == 1 {
			keyRange = "not its 1 table"
		}
	}
	return keyRange, inRange, filter
}
