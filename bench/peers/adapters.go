package peers

import (
	"errors"
	"time"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/internal/workload"
	"github.com/cockroachdb/pebble/v2"
	pebblebloom "github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
	"github.com/dgraph-io/badger/v4"
	badgeropts "github.com/dgraph-io/badger/v4/options"
	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/filter"
	"github.com/syndtr/goleveldb/leveldb/opt"
)

func openBloomkv(dir string, s Settings) (workload.Store, error) {
	return workload.OpenBloomkv(dir, &bloomkv.Options{
		MemtableSize:   s.MemtableSize,
		BlockSize:      s.BlockSize,
		Compression:    bloomkv.SnappyCompression,
		BitsPerKey:     float64(s.BitsPerKey),
		BlockCacheSize: s.CacheSize,
		BaseLevelSize:  uint64(s.BaseLevelSize),
		TargetFileSize: uint64(s.TargetFileSize),
	})
}

// pebbleStore adapts pebble.
type pebbleStore struct {
	db  *pebble.DB
	buf []byte
}

type quietLogger struct{}

func (quietLogger) Infof(string, ...interface{})      {}
func (quietLogger) Errorf(string, ...interface{})     {}
func (quietLogger) Fatalf(f string, a ...interface{}) { panic(errors.New("pebble: fatal")) }

func openPebble(dir string, s Settings) (workload.Store, error) {
	cache := pebble.NewCache(s.CacheSize)
	defer cache.Unref()
	opts := &pebble.Options{
		Cache:                 cache,
		MemTableSize:          uint64(s.MemtableSize),
		LBaseMaxBytes:         s.BaseLevelSize,
		L0CompactionThreshold: 4,
		Logger:                quietLogger{},
	}
	for i := range opts.Levels {
		l := &opts.Levels[i]
		l.FilterPolicy = pebblebloom.FilterPolicy(s.BitsPerKey)
		l.Compression = func() *sstable.CompressionProfile { return sstable.SnappyCompression }
		l.BlockSize = s.BlockSize
		opts.TargetFileSizes[i] = s.TargetFileSize
	}
	db, err := pebble.Open(dir, opts)
	if err != nil {
		return nil, err
	}
	return &pebbleStore{db: db}, nil
}

func (p *pebbleStore) Put(k, v []byte) error { return p.db.Set(k, v, pebble.NoSync) }

func (p *pebbleStore) Get(k []byte) ([]byte, bool, error) {
	v, closer, err := p.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	p.buf = append(p.buf[:0], v...)
	return p.buf, true, closer.Close()
}

func (p *pebbleStore) Scan(start []byte, n int) (int, error) {
	it, err := p.db.NewIter(nil)
	if err != nil {
		return 0, err
	}
	read := 0
	for ok := it.SeekGE(start); ok && read < n; ok = it.Next() {
		_, _ = it.Key(), it.Value()
		read++
	}
	return read, it.Close()
}

// Settle flushes the memtable and waits until no compaction runs.
func (p *pebbleStore) Settle() error {
	if err := p.db.Flush(); err != nil {
		return err
	}
	idle := 0
	for idle < 4 {
		time.Sleep(25 * time.Millisecond)
		if p.db.Metrics().Compact.NumInProgress == 0 {
			idle++
		} else {
			idle = 0
		}
	}
	return nil
}

func (p *pebbleStore) Close() error { return p.db.Close() }

// leveldbStore adapts goleveldb.
type leveldbStore struct {
	db *leveldb.DB
	wo *opt.WriteOptions
}

func openGoleveldb(dir string, s Settings) (workload.Store, error) {
	db, err := leveldb.OpenFile(dir, &opt.Options{
		Filter:              filter.NewBloomFilter(s.BitsPerKey),
		BlockCacheCapacity:  int(s.CacheSize),
		Compression:         opt.SnappyCompression,
		BlockSize:           s.BlockSize,
		WriteBuffer:         int(s.MemtableSize),
		CompactionTotalSize: int(s.BaseLevelSize),
		CompactionTableSize: int(s.TargetFileSize),
		CompactionL0Trigger: 4,
	})
	if err != nil {
		return nil, err
	}
	return &leveldbStore{db: db, wo: &opt.WriteOptions{Sync: false}}, nil
}

func (l *leveldbStore) Put(k, v []byte) error { return l.db.Put(k, v, l.wo) }

func (l *leveldbStore) Get(k []byte) ([]byte, bool, error) {
	v, err := l.db.Get(k, nil)
	if errors.Is(err, leveldb.ErrNotFound) {
		return nil, false, nil
	}
	return v, err == nil, err
}

func (l *leveldbStore) Scan(start []byte, n int) (int, error) {
	it := l.db.NewIterator(nil, nil)
	defer it.Release()
	read := 0
	for ok := it.Seek(start); ok && read < n; ok = it.Next() {
		_, _ = it.Key(), it.Value()
		read++
	}
	return read, it.Error()
}

func (l *leveldbStore) Close() error { return l.db.Close() }

// badgerStore adapts badger.
type badgerStore struct {
	db  *badger.DB
	buf []byte
}

func openBadger(dir string, s Settings) (workload.Store, error) {
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
		WithValueThreshold(4 << 10) // values (100 B) stay in the LSM tree, not the value log
	db, err := badger.Open(opts)
	if err != nil {
		return nil, err
	}
	return &badgerStore{db: db}, nil
}

func (b *badgerStore) Put(k, v []byte) error {
	return b.db.Update(func(txn *badger.Txn) error { return txn.Set(k, v) })
}

func (b *badgerStore) Get(k []byte) ([]byte, bool, error) {
	found := false
	err := b.db.View(func(txn *badger.Txn) error {
		item, err := txn.Get(k)
		if errors.Is(err, badger.ErrKeyNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		found = true
		b.buf, err = item.ValueCopy(b.buf[:0])
		return err
	})
	if !found {
		return nil, false, err
	}
	return b.buf, err == nil, err
}

func (b *badgerStore) Scan(start []byte, n int) (int, error) {
	read := 0
	err := b.db.View(func(txn *badger.Txn) error {
		o := badger.DefaultIteratorOptions
		o.PrefetchSize = n
		it := txn.NewIterator(o)
		defer it.Close()
		for it.Seek(start); it.Valid() && read < n; it.Next() {
			if err := it.Item().Value(func([]byte) error { return nil }); err != nil {
				return err
			}
			read++
		}
		return nil
	})
	return read, err
}

func (b *badgerStore) Close() error { return b.db.Close() }
