//go:build !peers_single || peers_badger

package peers

import (
	"errors"

	"github.com/bloomkv/bloomkv/internal/workload"
	"github.com/dgraph-io/badger/v4"
	badgeropts "github.com/dgraph-io/badger/v4/options"
)

func init() { register(Engine{"badger", openBadger}) }

// badgerStore adapts badger.
type badgerStore struct {
	db     *badger.DB
	l0Stop int // NumLevelZeroTablesStall
}

func openBadger(dir string, s Settings) (workload.Store, error) {
	threshold := int64(4 << 10) // values (100 B) stay in the LSM tree, not the value log
	if s.ValueThreshold > 0 {
		threshold = int64(s.ValueThreshold)
	}
	opts := badger.DefaultOptions(dir).
		WithLogger(nil).
		WithSyncWrites(false).
		WithBloomFalsePositive(0.01).
		WithBlockCacheSize(s.CacheSize).
		WithCompression(badgeropts.Snappy).
		WithBlockSize(s.BlockSize).
		WithMemTableSize(s.MemtableSize).
		WithBaseLevelSize(s.BaseLevelSize).
		WithLevelSizeMultiplier(10).
		WithBaseTableSize(s.TargetFileSize).
		WithNumVersionsToKeep(1).
		WithValueThreshold(threshold)
	db, err := badger.Open(opts)
	if err != nil {
		return nil, err
	}
	return &badgerStore{db: db, l0Stop: opts.NumLevelZeroTablesStall}, nil
}

func (b *badgerStore) Put(k, v []byte) error {
	return b.db.Update(func(txn *badger.Txn) error { return txn.Set(k, v) })
}

func (b *badgerStore) Get(k []byte) ([]byte, bool, error) {
	found := false
	var v []byte // a copy of its own: the workload's threads share the store
	err := b.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(k)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		v, err = item.ValueCopy(nil)
		return err
	})
	if !found {
		return nil, false, err
	}
	return v, err == nil, err
}

func (b *badgerStore) Scan(start []byte, n int) (int, error) { return b.scan(start, n, true) }

// ScanKeys is Scan with PrefetchValues off, reading no value: badger's
// key-only iteration, which reads nothing from its value log.
func (b *badgerStore) ScanKeys(start []byte, n int) (int, error) { return b.scan(start, n, false) }

func (b *badgerStore) scan(start []byte, n int, values bool) (int, error) {
	read := 0
	err := b.db.View(func(txn *badger.Txn) error {
		o := badger.DefaultIteratorOptions
		o.PrefetchSize = n
		o.PrefetchValues = values
		it := txn.NewIterator(o)
		defer it.Close()
		for it.Seek(start); it.Valid() && read < n; it.Next() {
			if values {
				if err := it.Item().Value(func([]byte) error { return nil }); err != nil {
					return err
				}
			} else {
				_ = it.Item().Key()
			}
			read++
		}
		return nil
	})
	return read, err
}

// L0 reads Levels, which counts each level's tables under its lock.
func (b *badgerStore) L0() (L0, error) {
	return L0{Tables: b.db.Levels()[0].NumTables}, nil
}

// L0Stop is NumLevelZeroTablesStall: at it badger stalls its memtable
// flushes, so writes stop once the memtables are full.
func (b *badgerStore) L0Stop() L0Stop { return L0Stop{N: b.l0Stop} }

// Tree reads Levels. badger counts neither the bytes of its WAL (its value
// log) nor those it writes to tables: no write amplification.
func (b *badgerStore) Tree() (Tree, error) {
	var t Tree
	for _, l := range b.db.Levels() {
		t.Levels = append(t.Levels, Level{Tables: l.NumTables, Bytes: l.Size})
	}
	return t, nil
}

func (b *badgerStore) Close() error { return b.db.Close() }

// CollectValueLog calls RunValueLogGC with badger's suggested discard
// ratio, 0.5 (a file is rewritten when at least half of it is dead), as
// its documentation's loop does, until it finds no file to rewrite.
func (b *badgerStore) CollectValueLog() (int, error) {
	for n := 0; ; n++ {
		switch err := b.db.RunValueLogGC(0.5); {
		case errors.Is(err, badger.ErrNoRewrite):
			return n, nil
		case err != nil:
			return n, err
		}
	}
}

// MapsTables is true: badger v4 reads its tables through memory maps
// (it has no option to read them with read calls).
func (b *badgerStore) MapsTables() bool { return true }
