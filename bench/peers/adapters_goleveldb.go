//go:build !peers_single || peers_goleveldb

package peers

import (
	"bufio"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/bloomkv/bloomkv/internal/workload"
	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/filter"
	"github.com/syndtr/goleveldb/leveldb/opt"
)

func init() { register(Engine{"goleveldb", openGoleveldb}) }

// leveldbStore adapts goleveldb.
type leveldbStore struct {
	db   *leveldb.DB
	wo   *opt.WriteOptions
	opts *opt.Options
}

func openGoleveldb(dir string, s Settings) (workload.Store, error) {
	opts := &opt.Options{
		Filter:              filter.NewBloomFilter(s.BitsPerKey),
		BlockCacheCapacity:  int(s.CacheSize),
		Compression:         opt.SnappyCompression,
		BlockSize:           s.BlockSize,
		WriteBuffer:         int(s.MemtableSize),
		CompactionTotalSize: int(s.BaseLevelSize),
		CompactionTableSize: int(s.TargetFileSize),
		CompactionL0Trigger: 4,
	}
	db, err := leveldb.OpenFile(dir, opts)
	if err != nil {
		return nil, err
	}
	return &leveldbStore{db: db, wo: &opt.WriteOptions{Sync: false}, opts: opts}, nil
}

func (l *leveldbStore) Put(k, v []byte) error { return l.db.Put(k, v, l.wo) }

func (l *leveldbStore) Get(k []byte) ([]byte, bool, error) {
	v, err := l.db.Get(k, nil)
	if errors.Is(err, leveldb.ErrNotFound) {
		return nil, false, nil
	}
	return v, err == nil, err
}

func (l *leveldbStore) Scan(start []byte, n int) (int, error) { return l.scan(start, n, true) }

// ScanKeys is Scan without asking for values, which goleveldb keeps in its
// tables' blocks and reads either way.
func (l *leveldbStore) ScanKeys(start []byte, n int) (int, error) { return l.scan(start, n, false) }

func (l *leveldbStore) scan(start []byte, n int, values bool) (int, error) {
	it := l.db.NewIterator(nil, nil)
	defer it.Release()
	read := 0
	for ok := it.Seek(start); ok && read < n; ok = it.Next() {
		_ = it.Key()
		if values {
			_ = it.Value()
		}
		read++
	}
	return read, it.Error()
}

// L0 reads the property leveldb.num-files-at-level0.
func (l *leveldbStore) L0() (L0, error) {
	v, err := l.db.GetProperty("leveldb.num-files-at-level0")
	if err != nil {
		return L0{}, err
	}
	n, err := strconv.Atoi(v)
	return L0{Tables: n}, err
}

// L0Stop is WriteL0PauseTrigger, at which goleveldb pauses writes.
func (l *leveldbStore) L0Stop() L0Stop { return L0Stop{N: l.opts.GetWriteL0PauseTrigger()} }

// Tree parses the property leveldb.sstables, which lists every level
// ("--- level 0 ---") and its tables ("num:size[smallest .. largest]") —
// goleveldb adds levels as the data needs them, so the list is as deep as
// the data has gone —:
// the other properties and DB.Stats skip empty levels or round sizes to
// MiB. goleveldb does not count the bytes of its WAL (DB.Stats' IOWrite
// counts every file's): no write amplification.
func (l *leveldbStore) Tree() (Tree, error) {
	v, err := l.db.GetProperty("leveldb.sstables")
	if err != nil {
		return Tree{}, err
	}
	return parseLeveldbTables(v)
}

// parseLeveldbTables parses goleveldb's leveldb.sstables property.
func parseLeveldbTables(v string) (Tree, error) {
	var t Tree
	sc := bufio.NewScanner(strings.NewReader(v))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		var level int
		if _, err := fmt.Sscanf(line, "--- level %d ---", &level); err == nil {
			if level != len(t.Levels) {
				return t, fmt.Errorf("goleveldb sstables: level %d after %d levels", level, len(t.Levels))
			}
			t.Levels = append(t.Levels, Level{})
			continue
		}
		num, rest, ok := strings.Cut(line, ":")
		size, _, ok2 := strings.Cut(rest, "[")
		n, err := strconv.ParseInt(size, 10, 64)
		if !ok || !ok2 || err != nil || len(t.Levels) == 0 || strings.TrimLeft(num, "0123456789") != "" {
			return t, fmt.Errorf("goleveldb sstables: line %q", line)
		}
		t.Levels[len(t.Levels)-1].Tables++
		t.Levels[len(t.Levels)-1].Bytes += n
	}
	return t, sc.Err()
}

// Counters reads Stats' write delays; goleveldb counts no table or block
// reads.
func (l *leveldbStore) Counters() (Counters, error) {
	var st leveldb.DBStats
	if err := l.db.Stats(&st); err != nil {
		return Counters{}, err
	}
	return Counters{Tables: -1, Blocks: -1, Stall: st.WriteDelayDuration, FalsePositives: -1}, nil
}

func (l *leveldbStore) Close() error { return l.db.Close() }
