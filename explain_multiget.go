package bloomkv

import (
	"bytes"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/humanize"
	"github.com/bloomkv/bloomkv/sstable"
)

// ExplainMultiGet reads keys exactly as MultiGet does and returns the
// batch's account: for each key, its path as Explain would show a Get of
// it — the memtables, the tables whose range or filter ruled it out, the
// table and data block that answered — with the MultiGet round each table
// was tried in and how many keys of the batch shared its block read; and
// for each round, the keys it sent to tables, the distinct blocks they
// needed, how many of those served several keys (read once for all of
// them), where the blocks came from and how many reads were in flight at
// once. The read is MultiGet's own code, recording as it goes (not a
// re-enactment): it counts in Metrics as MultiGet does and warms the block
// cache like it.
//
// Missing and deleted keys are no error: their traces say so. The error
// is ErrClosed, or a read error such as corruption; the MultiTrace then
// holds the steps up to the failure.
func (d *DB) ExplainMultiGet(keys [][]byte) (*MultiTrace, error) {
	mt := new(MultiTrace)
	_, err := d.multiGet(keys, liveSeq, mt)
	if len(mt.Keys) == 0 && err != nil {
		return nil, err
	}
	return mt, err
}

// MultiTrace is the account of one MultiGet that DB.ExplainMultiGet
// returns.
type MultiTrace struct {
	// SeqNum is the sequence number the batch read at, every key alike.
	SeqNum uint64
	// Keys are the keys' traces, in the request's order: each as
	// DB.Explain would return it, its TableSteps also saying the round
	// (TraceStep.Round) and the block's sharing (TraceStep.BlockKeys).
	Keys []*Trace
	// Rounds are the batch's rounds, in order: in each, every key not yet
	// answered goes to the next table that may hold it, and the blocks so
	// chosen are read.
	Rounds []MultiGetRound

	traces []keyTrace
}

// MultiGetRound is one round of a MultiGet.
type MultiGetRound struct {
	// Keys counts the keys sent to a table's data block this round, past
	// the memtables and the tables whose filters ruled them out.
	Keys int
	// Blocks counts the distinct data blocks those keys needed; Shared,
	// of those, the ones that served more than one key, each read once,
	// and SharedKeys the keys those served. A key sorting past its
	// table's last block needs none (the index answers it).
	Blocks, Shared, SharedKeys int
	// FromCache and FromFile count the blocks found in the block cache,
	// taken inline, and read from files; BytesRead is what those reads
	// read (all three left out of a round that failed). Concurrent is the
	// most file reads the round had in flight at once: every miss at
	// once, up to 16.
	FromCache, FromFile, Concurrent int
	BytesRead                       int64
	// Answered counts the keys of Keys the round answered: found, deleted
	// or covered by a range tombstone of the table. The others were
	// filter false positives (or met only newer versions) and go on to
	// the next round. (A key whose filter ruled it out where a range
	// tombstone covers it is deleted there without a block: it is in no
	// round's Keys.)
	Answered int
}

// keyTrace is multiGet's tracer of one key: its Trace, and what the key's
// routing has met but not yet recorded — the range tombstone of the table
// it was sent to, recorded once the block answers — and the round.
type keyTrace struct {
	*Trace
	hit   lookupRangeDel
	round int
}

// The hooks multiGet calls; each does nothing on a nil MultiTrace, so a
// MultiGet pays a nil check per hook.

// start prepares a trace per key.
func (mt *MultiTrace) start(keys [][]byte, seq base.SeqNum) {
	if mt == nil {
		return
	}
	mt.SeqNum = uint64(seq)
	mt.traces = make([]keyTrace, len(keys))
	mt.Keys = make([]*Trace, len(keys))
	for i, key := range keys {
		mt.Keys[i] = &Trace{Key: bytes.Clone(key), SeqNum: uint64(seq)}
		mt.traces[i].Trace = mt.Keys[i]
	}
}

// keyTracer is key i's tracer for memtablesGet: a nil interface, not a
// typed nil, when there is no trace.
func (mt *MultiTrace) keyTracer(i int) lookupTracer {
	if mt == nil {
		return nil
	}
	return mt.Keys[i]
}

// key is key i's tracer for the rounds.
func (mt *MultiTrace) key(i int) *keyTrace {
	if mt == nil {
		return nil
	}
	return &mt.traces[i]
}

// round starts round n.
func (mt *MultiTrace) round(n int) {
	if mt == nil {
		return
	}
	mt.Rounds = append(mt.Rounds, MultiGetRound{})
	for i := range mt.traces {
		mt.traces[i].round = n
	}
}

// endRound adds up the round's reads, once they are done (or failed).
func (mt *MultiTrace) endRound(reads []blockRead, misses int, err error) {
	if mt == nil {
		return
	}
	r := &mt.Rounds[len(mt.Rounds)-1]
	for i := range reads {
		br := &reads[i]
		r.Keys += len(br.keys)
		for _, k := range br.keys {
			// Found, or deleted by a range tombstone of the table.
			if err == nil && (k.res.Found || k.lk.Covered > 0) {
				r.Answered++
			}
		}
		if br.keys[0].loc.Block == br.t.reader.NumBlocks() {
			continue // past the last block: the index answered, no block
		}
		r.Blocks++
		if len(br.keys) > 1 {
			r.Shared++
			r.SharedKeys += len(br.keys)
		}
		if err == nil {
			// The read is counted in the step of the block's first key.
			s := br.keys[0].tr.Steps[len(br.keys[0].tr.Steps)-1]
			r.FromCache += s.BlocksFromCache
			r.FromFile += s.BlocksFromFile
			r.BytesRead += s.BytesRead
		}
	}
	r.Concurrent = min(misses, multiGetReads)
}

// finish records the values found.
func (mt *MultiTrace) finish(values [][]byte) {
	if mt == nil {
		return
	}
	for i, t := range mt.Keys {
		if t.Found && !t.Deleted {
			t.Value = values[i]
		}
	}
}

// tracer is the key's Trace as a lookupTracer: a nil interface, not a
// typed nil, for no trace.
func (k *keyTrace) tracer() lookupTracer {
	if k == nil {
		return nil
	}
	return k.Trace
}

// outOfRange records an L0 table whose key range rules the key out.
func (k *keyTrace) outOfRange(level int, t *table) { k.Trace.outOfRange(level, t) }

// noTable records a level none of whose tables holds the key's range.
func (k *keyTrace) noTable(level, tables int) { k.Trace.noTable(level, tables) }

// located records the table the key was routed to: a filter that ruled
// it out is a step now, as in lookup (deleted there if a range tombstone
// of the table covers the key); one that did not waits for the block.
func (k *keyTrace) located(level int, t *table, stats sstable.LookupStats, hit lookupRangeDel, ok bool) {
	if ok {
		k.hit = hit
		return
	}
	found := hit.seq > 0
	hit.decided = found
	k.Trace.table(level, t, stats, found, base.KindDelete, hit, nil)
	k.mark(0)
}

// answered records the answer the key's block gave, as lookup's
// getFromTable would.
func (k *keyTrace) answered(r *blockRead, stats sstable.LookupStats, res sstable.GetResult, err error) {
	hit := k.hit
	found, kind := res.Found, res.Kind
	if err == nil && !found && hit.seq > 0 {
		found, kind, hit.decided = true, base.KindDelete, true
	}
	k.Trace.table(r.level, r.t, stats, found, kind, hit, err)
	blockKeys := 0
	if r.keys[0].loc.Block < r.t.reader.NumBlocks() {
		blockKeys = len(r.keys)
	}
	k.mark(blockKeys)
}

// mark sets the round and the block's keys on the step just recorded.
func (k *keyTrace) mark(blockKeys int) {
	s := &k.Steps[len(k.Steps)-1]
	s.Round, s.BlockKeys = k.round, blockKeys
}

// Totals add up the batch: the keys' traces and the rounds.
type MultiTotals struct {
	TraceTotals       // every key's steps, added up
	Keys              int
	Found, Deleted    int // keys found with a value, and keys deleted
	FromMemtables     int // keys answered by a memtable
	Rounds            int
	Blocks            int // distinct data blocks the rounds needed
	SharedBlocks      int // of those, blocks that served several keys
	BlockReadsSaved   int // block reads sharing saved: a block's keys less one, over the shared blocks
	MostConcurrent    int // the most file reads in flight at once in any round
	TableProbesToRead int // keys sent to a table's data block, over the rounds
}

// Totals adds up the batch.
func (mt *MultiTrace) Totals() MultiTotals {
	var n MultiTotals
	n.Keys, n.Rounds = len(mt.Keys), len(mt.Rounds)
	for _, t := range mt.Keys {
		tt := t.Totals()
		n.FilterNegatives += tt.FilterNegatives
		n.FilterPositives += tt.FilterPositives
		n.FalsePositives += tt.FalsePositives
		n.PagedNegatives += tt.PagedNegatives
		n.TablesOutOfRange += tt.TablesOutOfRange
		n.UnfilteredTables += tt.UnfilteredTables
		n.BlocksFromCache += tt.BlocksFromCache
		n.BlocksFromFile += tt.BlocksFromFile
		n.BytesRead += tt.BytesRead
		n.MemtablesSearched += tt.MemtablesSearched
		switch {
		case t.Deleted:
			n.Deleted++
		case t.Found:
			n.Found++
		}
		if t.Found && strings.Contains(t.Source, "memtable") {
			n.FromMemtables++
		}
	}
	for _, r := range mt.Rounds {
		n.Blocks += r.Blocks
		n.SharedBlocks += r.Shared
		n.BlockReadsSaved += r.SharedKeys - r.Shared
		n.MostConcurrent = max(n.MostConcurrent, r.Concurrent)
		n.TableProbesToRead += r.Keys
	}
	return n
}

// Summary is the batch in one line, e.g. "64 keys, 60 found, 4 not found;
// 2 rounds, 58 blocks for 64 table probes (4 reads saved by sharing), 58
// read from files (232 KiB), at most 16 at once; 180 tables skipped by
// their filters, 2 filter false positives".
func (mt *MultiTrace) Summary() string {
	n := mt.Totals()
	keys := []string{plural(n.Keys, "key", "keys"), fmt.Sprintf("%d found", n.Found)}
	if n.Deleted > 0 {
		keys = append(keys, fmt.Sprintf("%d deleted", n.Deleted))
	}
	keys = append(keys, fmt.Sprintf("%d not found", n.Keys-n.Found-n.Deleted))
	if n.FromMemtables > 0 {
		keys = append(keys, fmt.Sprintf("%d from memtables", n.FromMemtables))
	}
	reads := []string{plural(n.Rounds, "round", "rounds"),
		fmt.Sprintf("%s for %s", plural(n.Blocks, "block", "blocks"), plural(n.TableProbesToRead, "table probe", "table probes"))}
	if n.BlockReadsSaved > 0 {
		reads[1] += fmt.Sprintf(" (%s saved by sharing)", plural(n.BlockReadsSaved, "read", "reads"))
	}
	if n.BlocksFromFile > 0 {
		reads = append(reads, fmt.Sprintf("%d read from files (%s), at most %d at once", n.BlocksFromFile, humanize.Bytes(uint64(n.BytesRead)), n.MostConcurrent))
	}
	if n.BlocksFromCache > 0 {
		reads = append(reads, fmt.Sprintf("%d from the cache", n.BlocksFromCache))
	}
	var filters []string
	if n.FilterNegatives > 0 {
		by := " skipped by their filters"
		if n.FilterNegatives == 1 {
			by = " skipped by its filter"
		}
		filters = append(filters, plural(n.FilterNegatives, "table", "tables")+by)
	}
	if n.FalsePositives > 0 {
		filters = append(filters, plural(n.FalsePositives, "filter false positive", "filter false positives"))
	}
	out := strings.Join(keys, ", ") + "; " + strings.Join(reads, ", ")
	if len(filters) > 0 {
		out += "; " + strings.Join(filters, ", ")
	}
	return out
}

// String renders the batch: its rounds as a table, then each key's trace
// (as Trace.String renders it, with the round and block-sharing columns),
// then the summary:
//
//	multiget of 3 keys at seqnum 200
//	round  keys  blocks  shared  cache  file  at once  bytes    answered
//	1      3     2       1       0      2     2        1.3 KiB  2
//	2      1     1       0       0      1     1        679 B    1
//	key 1 of 3: lookup "key001" at seqnum 200
//	...
//	summary: 3 keys, 3 found, 0 not found; 2 rounds, 3 blocks for 4 table probes (1 read saved by sharing), ...
func (mt *MultiTrace) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "multiget of %s at seqnum %d\n", plural(len(mt.Keys), "key", "keys"), mt.SeqNum)
	if len(mt.Rounds) > 0 {
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "round\tkeys\tblocks\tshared\tcache\tfile\tat once\tbytes\tanswered")
		for i, r := range mt.Rounds {
			fmt.Fprintf(tw, "%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%d\n", i+1, r.Keys, r.Blocks, r.Shared, r.FromCache, r.FromFile, r.Concurrent, humanize.Bytes(uint64(r.BytesRead)), r.Answered)
		}
		tw.Flush()
	} else {
		fmt.Fprintln(&b, "no round: the memtables answered every key")
	}
	for i, t := range mt.Keys {
		fmt.Fprintf(&b, "key %d of %d: %s", i+1, len(mt.Keys), t.String())
	}
	fmt.Fprintf(&b, "summary: %s\n", mt.Summary())
	return b.String()
}

// multiGet reports that the trace is one key's of a MultiGet: a step
// carries a round.
func (t *Trace) multiGet() bool {
	for i := range t.Steps {
		if t.Steps[i].Round > 0 {
			return true
		}
	}
	return false
}

// multiCells are the round and shared-by columns of a MultiGet key's step
// as Trace.String prints them: empty for a memtable, the round of a table
// step, and for one that read a block, how many keys the read served.
func (s *TraceStep) multiCells() string {
	if s.Round == 0 {
		return "\t\t"
	}
	if s.BlockKeys == 0 {
		return fmt.Sprintf("%d\t\t", s.Round)
	}
	return fmt.Sprintf("%d\t%s\t", s.Round, plural(s.BlockKeys, "key", "keys"))
}

// sharedBlock reports that a MultiGet key's trace has a step answered
// from a block whose read (or cache hit) another key's step counts.
func (t *Trace) sharedBlock() bool {
	for i := range t.Steps {
		if s := &t.Steps[i]; s.BlockKeys > 1 && s.BlocksFromFile == 0 && s.BlocksFromCache == 0 {
			return true
		}
	}
	return false
}
