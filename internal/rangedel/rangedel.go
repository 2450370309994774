// Package rangedel is bloomkv's range tombstones: a DeleteRange(start, end)
// at sequence number s deletes every version of every user key in [start,
// end) with a sequence number below s, for the reads that see s.
//
// Tombstones overlap as users write them. Reads and compactions need them
// fragmented instead: cut at every start and end key into non-overlapping
// fragments, each carrying the sequence numbers of every tombstone that
// covers it, newest first — as Pebble's keyspan fragmenter and RocksDB's
// FragmentedRangeTombstoneList do. Then the question "is key k at seqnum s
// deleted for a read at S?" is one binary search for the fragment holding k
// and a look at its newest seqnum ≤ S: deleted iff that seqnum is above s.
// Overlapping tombstones resolve by sequence number with no further rule.
//
// A memtable keeps the tombstones it is given and fragments them when read
// (memtable.RangeDels); a table stores its fragments in a block of their own
// (see package sstable) that the reader pins in memory, like the filter and
// the index; a compaction merges the fragments of its inputs, drops what no
// read point needs, and cuts them at its output tables' boundaries
// (Truncate).
//
// # Encoding
//
// A List's encoding, the contents of a table's range-deletion block:
//
//	+----------------+------------+------------+-----
//	| count (uvarint)| fragment 1 | fragment 2 | ...
//	+----------------+------------+------------+-----
//	fragment: start length (uvarint) | start | end length (uvarint) | end |
//	          seqnums (uvarint) | seqnum (uvarint) ... newest first
//
// INVARIANT: a List's fragments are in start-key order, each non-empty
// (Start < End) and ending at or before the next one starts (End ≤ next
// Start); each has at least one seqnum, in strictly decreasing order, none
// 0 and none above base.SeqNumMax. Decode accepts exactly such lists and
// nothing left over, so a damaged block is an error, never a wrong answer.
package rangedel

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/bloomkv/bloomkv/internal/base"
)

// Tombstone is one range deletion as written: [Start, End) at Seq.
type Tombstone struct {
	Start, End []byte
	Seq        base.SeqNum
}

// Fragment is a key range no tombstone starts or ends inside: [Start, End),
// covered by the tombstones of Seqs, newest first.
type Fragment struct {
	Start, End []byte
	Seqs       []base.SeqNum
}

// Covers reports whether f's range holds key.
func (f *Fragment) Covers(key []byte) bool {
	return bytes.Compare(f.Start, key) <= 0 && bytes.Compare(key, f.End) < 0
}

// Visible returns the newest of f's seqnums that a read at seq sees, 0 if
// it sees none.
func (f *Fragment) Visible(seq base.SeqNum) base.SeqNum {
	for _, s := range f.Seqs {
		if s <= seq {
			return s
		}
	}
	return 0
}

// List is a fragmented set of tombstones; see the package doc for what
// must hold. A nil List holds none.
type List []Fragment

// Build cuts tombstones, in any order and overlapping in any way, into
// their List. Empty tombstones (Start ≥ End) delete nothing and are left
// out. Adjacent fragments covered by the same seqnums are joined, so the
// result is the one List of their coverage. The fragments alias the
// tombstones' keys.
func Build(ts []Tombstone) List {
	var live []Tombstone
	var bounds [][]byte
	for _, t := range ts {
		if bytes.Compare(t.Start, t.End) < 0 {
			live = append(live, t)
			bounds = append(bounds, t.Start, t.End)
		}
	}
	if len(live) == 0 {
		return nil
	}
	slices.SortFunc(live, func(a, b Tombstone) int { return bytes.Compare(a.Start, b.Start) })
	slices.SortFunc(bounds, bytes.Compare)
	bounds = slices.CompactFunc(bounds, bytes.Equal)

	var out List
	var active []Tombstone // those covering the current segment's start
	next := 0              // live[next:] have not started yet
	for i := 0; i+1 < len(bounds); i++ {
		lo, hi := bounds[i], bounds[i+1]
		active = slices.DeleteFunc(active, func(t Tombstone) bool { return bytes.Compare(t.End, lo) <= 0 })
		for next < len(live) && bytes.Compare(live[next].Start, lo) <= 0 {
			active = append(active, live[next])
			next++
		}
		if len(active) == 0 {
			continue
		}
		seqs := make([]base.SeqNum, 0, len(active))
		for _, t := range active {
			seqs = append(seqs, t.Seq)
		}
		slices.SortFunc(seqs, func(a, b base.SeqNum) int { return cmp.Compare(b, a) })
		seqs = slices.Compact(seqs)
		if n := len(out); n > 0 && bytes.Equal(out[n-1].End, lo) && slices.Equal(out[n-1].Seqs, seqs) {
			out[n-1].End = hi
			continue
		}
		out = append(out, Fragment{Start: lo, End: hi, Seqs: seqs})
	}
	return out
}

// Add returns the List of l's tombstones and t: l with t fragmented in,
// the List Build would make of them all. l is not changed — the result
// shares its unchanged fragments and seqnum slices, which a reader of l may
// still hold — so adding a tombstone costs one copy of l's fragments and a
// split of those t overlaps, not a fragmentation of every tombstone.
func (l List) Add(t Tombstone) List {
	if bytes.Compare(t.Start, t.End) >= 0 {
		return l
	}
	// l[i:j] are the fragments t overlaps: ending after its start and
	// starting before its end.
	i := sort.Search(len(l), func(i int) bool { return bytes.Compare(l[i].End, t.Start) > 0 })
	j := sort.Search(len(l), func(j int) bool { return bytes.Compare(l[j].Start, t.End) >= 0 })
	out := make(List, i, len(l)+j-i+3)
	copy(out, l[:i])
	cur := t.Start // t is fragmented in up to cur
	for _, f := range l[i:j] {
		switch {
		case bytes.Compare(f.Start, cur) < 0: // f starts before t: its head stays
			out = out.appendJoined(Fragment{Start: f.Start, End: cur, Seqs: f.Seqs})
		case bytes.Compare(cur, f.Start) < 0: // a gap before f only t covers
			out = out.appendJoined(Fragment{Start: cur, End: f.Start, Seqs: []base.SeqNum{t.Seq}})
			cur = f.Start
		}
		end := f.End
		if bytes.Compare(t.End, end) < 0 {
			end = t.End
		}
		out = out.appendJoined(Fragment{Start: cur, End: end, Seqs: withSeq(f.Seqs, t.Seq)})
		if bytes.Compare(end, f.End) < 0 { // f ends after t: its tail stays
			out = out.appendJoined(Fragment{Start: end, End: f.End, Seqs: f.Seqs})
		}
		cur = end
	}
	if bytes.Compare(cur, t.End) < 0 {
		out = out.appendJoined(Fragment{Start: cur, End: t.End, Seqs: []base.SeqNum{t.Seq}})
	}
	if j < len(l) {
		out = out.appendJoined(l[j])
		out = append(out, l[j+1:]...)
	}
	return out
}

// appendJoined appends f to l, joined to l's last fragment when f starts
// where it ends and the same seqnums cover both, as Build joins them.
func (l List) appendJoined(f Fragment) List {
	if n := len(l); n > 0 && bytes.Equal(l[n-1].End, f.Start) && slices.Equal(l[n-1].Seqs, f.Seqs) {
		l[n-1].End = f.End
		return l
	}
	return append(l, f)
}

// withSeq returns seqs, newest first, with seq among them: seqs itself if it
// holds seq, otherwise a new slice (seqs may be shared; see Add).
func withSeq(seqs []base.SeqNum, seq base.SeqNum) []base.SeqNum {
	i := sort.Search(len(seqs), func(i int) bool { return seqs[i] <= seq })
	if i < len(seqs) && seqs[i] == seq {
		return seqs
	}
	out := make([]base.SeqNum, 0, len(seqs)+1)
	return append(append(append(out, seqs[:i]...), seq), seqs[i:]...)
}

// Tombstones returns the tombstones of l, one per fragment and seqnum: the
// input that fragments back into l.
func (l List) Tombstones() []Tombstone {
	var ts []Tombstone
	for _, f := range l {
		for _, s := range f.Seqs {
			ts = append(ts, Tombstone{Start: f.Start, End: f.End, Seq: s})
		}
	}
	return ts
}

// Merge returns the List of the tombstones of every list given.
func Merge(lists ...List) List {
	var ts []Tombstone
	n := 0
	for _, l := range lists {
		if len(l) > 0 {
			n++
		}
		ts = append(ts, l.Tombstones()...)
	}
	if n == 1 {
		for _, l := range lists {
			if len(l) > 0 {
				return l
			}
		}
	}
	return Build(ts)
}

// Find returns the fragment whose range holds key, or nil.
func (l List) Find(key []byte) *Fragment {
	// The last fragment starting at or before key is the only candidate.
	i := sort.Search(len(l), func(i int) bool { return bytes.Compare(l[i].Start, key) > 0 }) - 1
	if i < 0 || bytes.Compare(key, l[i].End) >= 0 {
		return nil
	}
	return &l[i]
}

// Cover returns the newest seqnum, at or below seq, of a tombstone covering
// key: a version of key below it is deleted for a read at seq. 0 means no
// visible tombstone covers key.
func (l List) Cover(key []byte, seq base.SeqNum) base.SeqNum {
	if len(l) == 0 {
		return 0
	}
	if f := l.Find(key); f != nil {
		return f.Visible(seq)
	}
	return 0
}

// Count returns the number of tombstones in l, one per fragment and seqnum.
func (l List) Count() int {
	n := 0
	for _, f := range l {
		n += len(f.Seqs)
	}
	return n
}

// SeqRange returns the smallest and largest seqnum in l, which must not be
// empty.
func (l List) SeqRange() (smallest, largest base.SeqNum) {
	smallest = base.SeqNumMax
	for _, f := range l {
		largest = max(largest, f.Seqs[0])
		smallest = min(smallest, f.Seqs[len(f.Seqs)-1])
	}
	return smallest, largest
}

// Truncate returns the part of l within [lo, hi), fragments cut at the two
// bounds; a nil bound is open. The result shares l's seqnums and keys.
func (l List) Truncate(lo, hi []byte) List {
	var out List
	for _, f := range l {
		if lo != nil && bytes.Compare(f.End, lo) <= 0 {
			continue
		}
		if hi != nil && bytes.Compare(f.Start, hi) >= 0 {
			break
		}
		if lo != nil && bytes.Compare(f.Start, lo) < 0 {
			f.Start = lo
		}
		if hi != nil && bytes.Compare(f.End, hi) > 0 {
			f.End = hi
		}
		if bytes.Compare(f.Start, f.End) < 0 { // empty when lo ≥ hi
			out = append(out, f)
		}
	}
	return out
}

// Filter returns the fragments of l with only the seqnums keep says to
// keep, leaving out fragments that keep none.
func (l List) Filter(keep func(f *Fragment, s base.SeqNum) bool) List {
	var out List
	for i := range l {
		f := l[i]
		var seqs []base.SeqNum
		for _, s := range f.Seqs {
			if keep(&l[i], s) {
				seqs = append(seqs, s)
			}
		}
		if len(seqs) > 0 {
			f.Seqs = seqs
			if n := len(out); n > 0 && bytes.Equal(out[n-1].End, f.Start) && slices.Equal(out[n-1].Seqs, seqs) {
				out[n-1].End = f.End
				continue
			}
			out = append(out, f)
		}
	}
	return out
}

// LastCovered returns the largest user key a fragment ending at end can
// cover, as an inclusive bound: a table's largest key. Between x and x ‖
// 0x00 there is no other key, so an end of that form gives x exactly;
// otherwise no finite key is the largest below end, and end itself is
// returned — a bound one key too wide, which costs at most a needless look
// at the table for the key end.
func LastCovered(end []byte) []byte {
	if n := len(end); n > 0 && end[n-1] == 0 {
		return end[:n-1]
	}
	return end
}

// Successor returns the smallest key after k: k ‖ 0x00, a fresh slice.
func Successor(k []byte) []byte {
	return append(bytes.Clone(k), 0)
}

// Check reports whether l holds what the package doc's invariant says.
func (l List) Check() error {
	for i, f := range l {
		if bytes.Compare(f.Start, f.End) >= 0 {
			return fmt.Errorf("range tombstone fragment %d [%q, %q) is empty", i, f.Start, f.End)
		}
		if i > 0 && bytes.Compare(l[i-1].End, f.Start) > 0 {
			return fmt.Errorf("range tombstone fragment %d [%q, %q) overlaps the one before, which ends at %q", i, f.Start, f.End, l[i-1].End)
		}
		if len(f.Seqs) == 0 {
			return fmt.Errorf("range tombstone fragment %d has no seqnum", i)
		}
		for j, s := range f.Seqs {
			if s == 0 || s > base.SeqNumMax {
				return fmt.Errorf("range tombstone fragment %d has seqnum %d", i, s)
			}
			if j > 0 && f.Seqs[j-1] <= s {
				return fmt.Errorf("range tombstone fragment %d: seqnums not in decreasing order", i)
			}
		}
	}
	return nil
}

// Encode appends l's encoding (see the package doc) to dst.
func (l List) Encode(dst []byte) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(l)))
	for _, f := range l {
		dst = binary.AppendUvarint(dst, uint64(len(f.Start)))
		dst = append(dst, f.Start...)
		dst = binary.AppendUvarint(dst, uint64(len(f.End)))
		dst = append(dst, f.End...)
		dst = binary.AppendUvarint(dst, uint64(len(f.Seqs)))
		for _, s := range f.Seqs {
			dst = binary.AppendUvarint(dst, uint64(s))
		}
	}
	return dst
}

// Decode parses an encoded List. The fragments alias b. It returns an
// error (without file or offset: the caller adds them) for anything that is
// not exactly a valid List's encoding.
func Decode(b []byte) (List, error) {
	p := b
	uvarint := func(what string) (uint64, error) {
		v, n := binary.Uvarint(p)
		if n <= 0 {
			return 0, fmt.Errorf("range tombstones: bad %s", what)
		}
		p = p[n:]
		return v, nil
	}
	bytesOf := func(what string) ([]byte, error) {
		n, err := uvarint(what + " length")
		if err != nil {
			return nil, err
		}
		if n > uint64(len(p)) {
			return nil, fmt.Errorf("range tombstones: %s of %d bytes runs past the block", what, n)
		}
		s := p[:n:n]
		p = p[n:]
		return s, nil
	}
	count, err := uvarint("count")
	if err != nil {
		return nil, err
	}
	// Every fragment takes at least 4 bytes: it cannot be more than that.
	if count > uint64(len(p))/4 {
		return nil, fmt.Errorf("range tombstones: count %d does not fit in %d bytes", count, len(p))
	}
	l := make(List, 0, count)
	for range count {
		var f Fragment
		if f.Start, err = bytesOf("start key"); err != nil {
			return nil, err
		}
		if f.End, err = bytesOf("end key"); err != nil {
			return nil, err
		}
		n, err := uvarint("seqnum count")
		if err != nil {
			return nil, err
		}
		if n > uint64(len(p)) {
			return nil, fmt.Errorf("range tombstones: %d seqnums do not fit in %d bytes", n, len(p))
		}
		f.Seqs = make([]base.SeqNum, n)
		for i := range f.Seqs {
			s, err := uvarint("seqnum")
			if err != nil {
				return nil, err
			}
			f.Seqs[i] = base.SeqNum(s)
		}
		l = append(l, f)
	}
	if len(p) != 0 {
		return nil, fmt.Errorf("range tombstones: %d bytes after the last fragment", len(p))
	}
	if err := l.Check(); err != nil {
		return nil, err
	}
	return l, nil
}

// String renders l for tests and tools, e.g. `[a, c)@7,3 [c, d)@7`.
func (l List) String() string {
	var b strings.Builder
	for i, f := range l {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "[%q, %q)@", f.Start, f.End)
		for j, s := range f.Seqs {
			if j > 0 {
				b.WriteByte(',')
			}
			fmt.Fprint(&b, uint64(s))
		}
	}
	return b.String()
}
