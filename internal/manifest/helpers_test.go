package manifest

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"

	"github.com/bloomkv/bloomkv/internal/base"
)

// ikey builds an internal key from a user key, seqnum and kind.
func ikey(uk string, seq base.SeqNum, kind base.Kind) base.InternalKey {
	return base.MakeInternalKey([]byte(uk), seq, kind)
}

// meta builds a table from user-key bounds and a seqnum range: the smallest
// key carries the largest seqnum and the largest key the smallest, so the
// bounds are in order even when lo == hi.
func meta(num uint64, lo, hi string, minSeq, maxSeq base.SeqNum) *FileMetadata {
	return &FileMetadata{
		FileNum:          num,
		Size:             num * 100,
		Smallest:         ikey(lo, maxSeq, base.KindSet),
		Largest:          ikey(hi, minSeq, base.KindDelete),
		SmallestSeqNum:   minSeq,
		LargestSeqNum:    maxSeq,
		FilterBitsPerKey: 10,
	}
}

// randBytes returns n random bytes, never nil (decoded keys never are).
func randBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.UintN(256))
	}
	return b
}

// randUvarint returns a value of a random size class, so that encodings of
// every length from 1 to 10 bytes occur.
func randUvarint(rng *rand.Rand) uint64 {
	return rng.Uint64() >> rng.UintN(64)
}

// randMeta returns arbitrary metadata that passes Validate.
func randMeta(rng *rand.Rand) *FileMetadata {
	a, b := randBytes(rng, rng.IntN(20)), randBytes(rng, rng.IntN(20))
	if rng.IntN(50) == 0 {
		a = randBytes(rng, 200+rng.IntN(300)) // a multi-byte length
	}
	if slices.Compare(a, b) > 0 {
		a, b = b, a
	}
	lo := base.SeqNum(randUvarint(rng)) & base.SeqNumMax
	hi := base.SeqNum(randUvarint(rng)) & base.SeqNumMax
	if lo > hi {
		lo, hi = hi, lo
	}
	m := &FileMetadata{
		FileNum:          max(1, randUvarint(rng)),
		Size:             randUvarint(rng),
		Smallest:         base.MakeInternalKey(a, hi, base.Kind(rng.IntN(2))),
		Largest:          base.MakeInternalKey(b, lo, base.Kind(rng.IntN(2))),
		SmallestSeqNum:   lo,
		LargestSeqNum:    hi,
		FilterBitsPerKey: []float64{0, 10, 1.4426950408889634, 0.5, 64}[rng.IntN(5)],
	}
	// Half the tables record their filter's family and parameter (tag 6
	// or 7); the others are records of before.
	if rng.IntN(2) == 0 {
		m.FilterFamily = uint8(rng.IntN(256))
		if m.FilterFamily == 0 {
			m.FilterBitsPerKey = 0
		}
		m.FilterParam = []float64{0, 8, 16, 10.5}[rng.IntN(4)]
		m.Entries = randUvarint(rng)
		// Half of those record their blocks' compression too (tag 7).
		if rng.IntN(2) == 0 {
			m.Compression = uint8(1 + rng.IntN(255))
		}
	}
	return m
}

// randEdit returns an arbitrary edit that Decode can return: it need not
// apply to any state.
func randEdit(rng *rand.Rand) VersionEdit {
	var e VersionEdit
	if rng.IntN(2) == 0 {
		e.LogNumber = max(1, randUvarint(rng))
	}
	if rng.IntN(2) == 0 {
		e.NextFileNumber = max(1, randUvarint(rng))
	}
	if rng.IntN(2) == 0 {
		e.LastSeqNum = max(1, base.SeqNum(randUvarint(rng)))
	}
	for range rng.IntN(4) {
		e.DeletedFiles = append(e.DeletedFiles, DeletedFile{Level: rng.IntN(NumLevels), FileNum: max(1, randUvarint(rng))})
	}
	for range rng.IntN(4) {
		e.NewFiles = append(e.NewFiles, NewFile{Level: rng.IntN(NumLevels), Meta: randMeta(rng)})
	}
	return e
}

// model is a plain picture of a state, kept by the tests next to the real
// thing: for each level, the tables in it by number.
type model struct {
	levels  [NumLevels]map[uint64]*FileMetadata
	logNum  uint64
	nextNum uint64
	lastSeq base.SeqNum
}

func newModel() *model {
	m := &model{nextNum: 2} // file number 1 is the first manifest
	for i := range m.levels {
		m.levels[i] = map[uint64]*FileMetadata{}
	}
	return m
}

func (m *model) clone() *model {
	c := *m
	for i := range c.levels {
		c.levels[i] = map[uint64]*FileMetadata{}
		for k, v := range m.levels[i] {
			c.levels[i][k] = v
		}
	}
	return &c
}

// apply applies an edit known to be valid.
func (m *model) apply(e *VersionEdit) {
	m.logNum = max(m.logNum, e.LogNumber)
	m.nextNum = max(m.nextNum, e.NextFileNumber)
	m.lastSeq = max(m.lastSeq, e.LastSeqNum)
	for _, d := range e.DeletedFiles {
		delete(m.levels[d.Level], d.FileNum)
	}
	for _, n := range e.NewFiles {
		m.levels[n.Level][n.Meta.FileNum] = n.Meta
	}
}

// check compares a state with the model: the same counters and, level by
// level, the same tables with equal metadata.
func (m *model) check(s State) error {
	if s.LogNumber != m.logNum || s.NextFileNumber != m.nextNum || s.LastSeqNum != m.lastSeq {
		return fmt.Errorf("counters (log %d, next %d, seq %d), model (%d, %d, %d)",
			s.LogNumber, s.NextFileNumber, s.LastSeqNum, m.logNum, m.nextNum, m.lastSeq)
	}
	if err := s.Version.CheckInvariants(); err != nil {
		return err
	}
	for level, files := range s.Version.Levels {
		if len(files) != len(m.levels[level]) {
			return fmt.Errorf("L%d has %d tables, model %d", level, len(files), len(m.levels[level]))
		}
		for _, f := range files {
			want, ok := m.levels[level][f.FileNum]
			if !ok {
				return fmt.Errorf("L%d has table %06d, model does not", level, f.FileNum)
			}
			if !reflect.DeepEqual(f, want) {
				return fmt.Errorf("L%d table %s, model %s", level, f, want)
			}
		}
	}
	return nil
}

// slots is the key space of generated tables: user keys "k000" to "k099".
const slots = 100

func slotKey(i int) string { return fmt.Sprintf("k%03d", i) }

// gen produces valid edits the way a DB would: flushes to L0, moves and
// compactions to deeper levels, with counters that keep up.
type gen struct {
	rng *rand.Rand
	m   *model
	// keyPad, if set, makes the keys of new tables this long, so that edits
	// span several log blocks.
	keyPad int
}

func (g *gen) newTable(lo, hi int) *FileMetadata {
	num := g.m.nextNum
	g.m.nextNum++
	minSeq := g.m.lastSeq + 1
	g.m.lastSeq += base.SeqNum(1 + g.rng.IntN(50))
	pad := ""
	if g.keyPad > 0 {
		pad = string(randBytes(g.rng, g.keyPad))
	}
	f := meta(num, slotKey(lo)+pad, slotKey(hi)+pad, minSeq, g.m.lastSeq)
	f.Size = uint64(g.rng.IntN(1 << 20))
	return f
}

// freeRange returns a random slot range no table of level (≥ 1) overlaps.
func (g *gen) freeRange(level int, ignore uint64) (lo, hi int, ok bool) {
	for range 20 {
		lo = g.rng.IntN(slots)
		hi = min(slots-1, lo+g.rng.IntN(5))
		a, b := []byte(slotKey(lo)), []byte(slotKey(hi)+"\xff")
		free := true
		for _, f := range g.m.levels[level] {
			if f.FileNum != ignore && f.Overlaps(a, b) {
				free = false
				break
			}
		}
		if free {
			return lo, hi, true
		}
	}
	return 0, 0, false
}

// next returns a valid edit for the model's state, without applying it to
// the model: the caller does, once the edit is accepted.
func (g *gen) next() *VersionEdit {
	saved := g.m.nextNum
	savedSeq := g.m.lastSeq
	defer func() { g.m.nextNum, g.m.lastSeq = saved, savedSeq }()
	e := &VersionEdit{}
	switch op := g.rng.IntN(10); {
	case op < 4: // flush
		lo := g.rng.IntN(slots)
		e.NewFiles = append(e.NewFiles, NewFile{Level: 0, Meta: g.newTable(lo, min(slots-1, lo+g.rng.IntN(30)))})
		e.LogNumber = g.m.nextNum // the WAL the flush leaves live
		g.m.nextNum++
	case op < 7: // compaction: tables out of a level, new ones into the next
		level := g.rng.IntN(NumLevels - 1)
		for _, f := range g.m.levels[level] {
			if g.rng.IntN(3) == 0 {
				e.DeletedFiles = append(e.DeletedFiles, DeletedFile{Level: level, FileNum: f.FileNum})
			}
		}
		for range g.rng.IntN(3) {
			if lo, hi, ok := g.freeRange(level+1, 0); ok {
				// Stay clear of the other outputs too.
				f := g.newTable(lo, hi)
				clash := false
				for _, n := range e.NewFiles {
					if n.Meta.Overlaps(f.Smallest.UserKey, f.Largest.UserKey) {
						clash = true
					}
				}
				if !clash {
					e.NewFiles = append(e.NewFiles, NewFile{Level: level + 1, Meta: f})
				}
			}
		}
	case op < 9: // trivial move of one table a level down
		level := 1 + g.rng.IntN(NumLevels-2)
		for _, f := range g.m.levels[level] {
			blocked := false
			for _, o := range g.m.levels[level+1] {
				if o.Overlaps(f.Smallest.UserKey, f.Largest.UserKey) {
					blocked = true
				}
			}
			if !blocked {
				e.DeletedFiles = append(e.DeletedFiles, DeletedFile{Level: level, FileNum: f.FileNum})
				e.NewFiles = append(e.NewFiles, NewFile{Level: level + 1, Meta: f})
				break
			}
		}
	default: // counters only
		g.m.lastSeq += base.SeqNum(g.rng.IntN(3))
		g.m.nextNum += uint64(g.rng.IntN(2))
	}
	if g.m.nextNum != saved || g.rng.IntN(2) == 0 {
		e.NextFileNumber = g.m.nextNum
	}
	if g.m.lastSeq != savedSeq || g.rng.IntN(2) == 0 {
		e.LastSeqNum = g.m.lastSeq
	}
	return e
}

// sameState reports whether a and b are the same state: reflect.DeepEqual
// of them but for their versions' indexes, whose B-trees' shapes depend on
// the order of their changes (CheckInvariants checks an index against its
// version).
func sameState(a, b State) bool {
	for _, s := range []*State{&a, &b} {
		if s.Version != nil {
			v := *s.Version
			v.index = nil
			s.Version = &v
		}
	}
	return reflect.DeepEqual(a, b)
}
