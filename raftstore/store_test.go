package raftstore

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"sort"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/vfs"
)

// The behaviours raft-boltdb's own tests check of its store (bolt_store_test.go),
// checked of ours; then what they leave out: reopening, crashes, every field
// of an entry, sharing a DB.

func openStore(t *testing.T, dir string, opts *bloomkv.Options) *Store {
	t.Helper()
	s, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func testLog(index uint64, data string) *raft.Log {
	return &raft.Log{Index: index, Data: []byte(data)}
}

// fullLog is an entry with every field set, AppendedAt in UTC without a
// monotonic reading (what decoding gives back).
func fullLog(index uint64) *raft.Log {
	return &raft.Log{
		Index:      index,
		Term:       index/3 + 1,
		Type:       raft.LogType(index % 6),
		Data:       []byte(fmt.Sprintf("data-%d", index)),
		Extensions: []byte{byte(index), 0, 0xff},
		AppendedAt: time.Unix(1_700_000_000+int64(index), int64(index*7919)%1e9).UTC(),
	}
}

func indexes(t *testing.T, s *Store) (first, last uint64) {
	t.Helper()
	first, err := s.FirstIndex()
	if err != nil {
		t.Fatal(err)
	}
	last, err = s.LastIndex()
	if err != nil {
		t.Fatal(err)
	}
	return first, last
}

func TestStoreFirstLastIndex(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, nil)
	if f, l := indexes(t, s); f != 0 || l != 0 {
		t.Fatalf("empty log: first %d last %d, want 0 0", f, l)
	}
	if err := s.StoreLogs([]*raft.Log{testLog(1, "log1"), testLog(2, "log2"), testLog(3, "log3")}); err != nil {
		t.Fatal(err)
	}
	if f, l := indexes(t, s); f != 1 || l != 3 {
		t.Fatalf("first %d last %d, want 1 3", f, l)
	}
	// Reopened, the bounds come from the DB.
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, dir, nil)
	if f, l := indexes(t, s); f != 1 || l != 3 {
		t.Fatalf("reopened: first %d last %d, want 1 3", f, l)
	}
}

// TestStoreLogsRefusals checks that a batch holding a nil entry, first or
// later, or an entry of index 0 is refused whole with an ArgumentError.
func TestStoreLogsRefusals(t *testing.T) {
	s := openStore(t, t.TempDir(), nil)
	for _, logs := range [][]*raft.Log{
		{nil},
		{nil, testLog(1, "a")},
		{testLog(1, "a"), nil},
		{testLog(0, "zero")},
		{testLog(1, "a"), testLog(0, "zero")},
	} {
		err := s.StoreLogs(logs)
		if !errors.As(err, new(*bloomkv.ArgumentError)) {
			t.Errorf("StoreLogs(%v): %v, want an ArgumentError", logs, err)
		}
	}
	if f, l := indexes(t, s); f != 0 || l != 0 {
		t.Errorf("after the refusals: first %d last %d, want 0 0", f, l)
	}
	var got raft.Log
	if err := s.GetLog(1, &got); err != raft.ErrLogNotFound {
		t.Errorf("GetLog(1) after the refusals: %v, want ErrLogNotFound", err)
	}
}

func TestStoreGetLog(t *testing.T) {
	s := openStore(t, t.TempDir(), nil)
	var got raft.Log
	if err := s.GetLog(1, &got); err != raft.ErrLogNotFound {
		t.Fatalf("GetLog of a missing entry: %v, want raft.ErrLogNotFound", err)
	}
	logs := []*raft.Log{testLog(1, "log1"), testLog(2, "log2"), testLog(3, "log3")}
	if err := s.StoreLogs(logs); err != nil {
		t.Fatal(err)
	}
	if err := s.GetLog(2, &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(&got, logs[1]) {
		t.Fatalf("GetLog(2) = %#v, want %#v", got, logs[1])
	}
	if err := s.GetLog(4, &got); err != raft.ErrLogNotFound {
		t.Fatalf("GetLog past the end: %v, want raft.ErrLogNotFound", err)
	}
}

// TestStoreLogFields round-trips entries with every field of raft.Log set,
// and the edge values of each, through StoreLog and StoreLogs.
func TestStoreLogFields(t *testing.T) {
	s := openStore(t, t.TempDir(), nil)
	cases := []*raft.Log{
		testLog(1, "log1"),
		fullLog(2),
		{Index: 3}, // everything empty
		{Index: 4, Term: ^uint64(0), Type: raft.LogConfiguration, Data: bytes.Repeat([]byte{0xab}, 1<<20)},
		{Index: 5, AppendedAt: time.Unix(-62135596800, 0).UTC().Add(time.Nanosecond)}, // year 1, not zero
		{Index: 6, AppendedAt: time.Date(3000, 1, 2, 3, 4, 5, 999_999_999, time.UTC)},
		{Index: ^uint64(0), Term: 7, Data: []byte("the last index")},
	}
	if err := s.StoreLog(cases[0]); err != nil {
		t.Fatal(err)
	}
	if err := s.StoreLogs(cases[1:]); err != nil {
		t.Fatal(err)
	}
	for _, want := range cases {
		var got raft.Log
		if err := s.GetLog(want.Index, &got); err != nil {
			t.Fatalf("GetLog(%d): %v", want.Index, err)
		}
		if !reflect.DeepEqual(&got, want) {
			t.Fatalf("GetLog(%d) = %+v, want %+v", want.Index, got, want)
		}
	}
	if f, l := indexes(t, s); f != 1 || l != ^uint64(0) {
		t.Fatalf("first %d last %d, want 1 and the largest uint64", f, l)
	}
}

func TestStoreOverwrite(t *testing.T) {
	s := openStore(t, t.TempDir(), nil)
	if err := s.StoreLogs([]*raft.Log{fullLog(5), fullLog(6)}); err != nil {
		t.Fatal(err)
	}
	replaced := &raft.Log{Index: 6, Term: 99, Data: []byte("new leader's entry")}
	if err := s.StoreLog(replaced); err != nil {
		t.Fatal(err)
	}
	var got raft.Log
	if err := s.GetLog(6, &got); err != nil || !reflect.DeepEqual(&got, replaced) {
		t.Fatalf("GetLog(6) = %+v, %v; want the replacement %+v", got, err, replaced)
	}
}

func TestStoreDeleteRange(t *testing.T) {
	cases := []struct {
		name     string
		stored   []uint64
		min, max uint64
	}{
		{"boltdb's case", []uint64{1, 2, 3}, 1, 2},
		{"compaction prefix", []uint64{1, 2, 3, 4, 5, 6}, 1, 4},
		{"truncated suffix", []uint64{1, 2, 3, 4, 5, 6}, 4, 6},
		{"suffix past the end", []uint64{1, 2, 3, 4, 5, 6}, 4, 100},
		{"middle", []uint64{1, 2, 3, 4, 5, 6}, 3, 4},
		{"all", []uint64{1, 2, 3}, 1, 3},
		{"around all", []uint64{5, 6, 7}, 0, ^uint64(0)},
		{"none stored in range", []uint64{1, 2, 8, 9}, 3, 7},
		{"gap across", []uint64{1, 2, 8, 9}, 2, 8},
		{"min above max", []uint64{1, 2, 3}, 3, 1},
		{"one", []uint64{1, 2, 3}, 2, 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openStore(t, t.TempDir(), nil)
			var logs []*raft.Log
			for _, i := range c.stored {
				logs = append(logs, fullLog(i))
			}
			if err := s.StoreLogs(logs); err != nil {
				t.Fatal(err)
			}
			if err := s.DeleteRange(c.min, c.max); err != nil {
				t.Fatal(err)
			}
			var left []uint64
			for _, i := range c.stored {
				if i < c.min || i > c.max {
					left = append(left, i)
				}
			}
			checkLog(t, s, left, c.stored)
		})
	}
}

// checkLog checks that exactly the entries want (sorted) of all are stored,
// whole, and the bounds match them.
func checkLog(t *testing.T, s *Store, want, all []uint64) {
	t.Helper()
	in := map[uint64]bool{}
	for _, i := range want {
		in[i] = true
	}
	for _, i := range all {
		var got raft.Log
		err := s.GetLog(i, &got)
		switch {
		case in[i] && err != nil:
			t.Fatalf("GetLog(%d): %v, want the entry", i, err)
		case in[i] && !reflect.DeepEqual(&got, fullLog(i)):
			t.Fatalf("GetLog(%d) = %+v, want %+v", i, got, fullLog(i))
		case !in[i] && err != raft.ErrLogNotFound:
			t.Fatalf("GetLog(%d): %v, want raft.ErrLogNotFound", i, err)
		}
	}
	var wf, wl uint64
	if len(want) > 0 {
		wf, wl = want[0], want[len(want)-1]
	}
	if f, l := indexes(t, s); f != wf || l != wl {
		t.Fatalf("first %d last %d, want %d %d", f, l, wf, wl)
	}
}

func TestStoreSetGet(t *testing.T) {
	s := openStore(t, t.TempDir(), nil)
	if _, err := s.Get([]byte("bad")); err != ErrKeyNotFound {
		t.Fatalf("Get of a missing key: %v, want ErrKeyNotFound", err)
	}
	// raft tells a missing term from a failure by this text.
	if ErrKeyNotFound.Error() != "not found" {
		t.Fatalf("ErrKeyNotFound reads %q, raft looks for \"not found\"", ErrKeyNotFound)
	}
	for _, kv := range []struct{ k, v string }{{"hello", "world"}, {"hello", "again"}, {"", "empty key"}, {"empty value", ""}} {
		if err := s.Set([]byte(kv.k), []byte(kv.v)); err != nil {
			t.Fatal(err)
		}
		got, err := s.Get([]byte(kv.k))
		if err != nil || string(got) != kv.v {
			t.Fatalf("Get(%q) = %q, %v; want %q", kv.k, got, err, kv.v)
		}
	}
	// The stable keys are not log entries.
	if f, l := indexes(t, s); f != 0 || l != 0 {
		t.Fatalf("stable keys moved the log bounds to %d %d", f, l)
	}
}

func TestStoreSetUint64GetUint64(t *testing.T) {
	s := openStore(t, t.TempDir(), nil)
	if _, err := s.GetUint64([]byte("bad")); err != ErrKeyNotFound {
		t.Fatalf("GetUint64 of a missing key: %v, want ErrKeyNotFound", err)
	}
	for _, v := range []uint64{123, 0, ^uint64(0)} {
		if err := s.SetUint64([]byte("abc"), v); err != nil {
			t.Fatal(err)
		}
		if got, err := s.GetUint64([]byte("abc")); err != nil || got != v {
			t.Fatalf("GetUint64 = %d, %v; want %d", got, err, v)
		}
	}
	if err := s.Set([]byte("short"), []byte{1, 2, 3}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetUint64([]byte("short")); !errors.Is(err, bloomkv.ErrCorruption) {
		t.Fatalf("GetUint64 of a 3-byte value: %v, want ErrCorruption", err)
	}
}

// TestStoreSharedDB puts a Store on a DB holding other keys on both sides of
// its key spaces: they change neither bounds nor entries, and Close leaves
// the DB open.
func TestStoreSharedDB(t *testing.T) {
	db, err := bloomkv.Open(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, k := range []string{"a", "raft/", "raft/log", "raft/log0", "raft/stable", "z"} {
		if err := db.Put([]byte(k), []byte("other"), nil); err != nil {
			t.Fatal(err)
		}
	}
	s, err := New(db)
	if err != nil {
		t.Fatal(err)
	}
	if f, l := indexes(t, s); f != 0 || l != 0 {
		t.Fatalf("other keys taken for entries: first %d last %d", f, l)
	}
	if err := s.StoreLogs([]*raft.Log{fullLog(7), fullLog(8)}); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteRange(0, ^uint64(0)); err != nil {
		t.Fatal(err)
	}
	checkLog(t, s, nil, []uint64{7, 8})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if v, err := db.Get([]byte("raft/log0")); err != nil || string(v) != "other" {
		t.Fatalf("after Close the DB's own key reads %q, %v", v, err)
	}
	if _, err := New(nil); err == nil {
		t.Fatal("New(nil) succeeded")
	}
}

// TestStoreCorruptEntry checks that a damaged value is an error wrapping
// ErrCorruption, never a wrong entry.
func TestStoreCorruptEntry(t *testing.T) {
	s := openStore(t, t.TempDir(), nil)
	good := appendLog(nil, fullLog(1))
	for i, v := range [][]byte{
		nil,
		{2},                   // unknown format
		good[:len(good)-1],    // cut short
		append(good, 0),       // trailing byte
		{1, 0x80},             // bad varint
		{1, 1, 0, 0xff, 0x7f}, // data longer than the value
	} {
		if err := s.DB().Put(logKey(uint64(i+10)), v, nil); err != nil {
			t.Fatal(err)
		}
		var got raft.Log
		if err := s.GetLog(uint64(i+10), &got); !errors.Is(err, bloomkv.ErrCorruption) {
			t.Fatalf("case %d: GetLog: %v, want ErrCorruption", i, err)
		}
	}
}

// TestStoreModel runs random StoreLogs, DeleteRange and reopenings against a
// map of the entries that must be there.
func TestStoreModel(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	model := map[uint64]bool{}
	var all []uint64
	seen := map[uint64]bool{}
	for step := range 300 {
		switch r := rng.IntN(10); {
		case r < 6:
			start := uint64(1 + rng.IntN(500))
			var logs []*raft.Log
			for i := range uint64(1 + rng.IntN(20)) {
				logs = append(logs, fullLog(start+i))
				model[start+i] = true
				if !seen[start+i] {
					seen[start+i] = true
					all = append(all, start+i)
				}
			}
			if err := s.StoreLogs(logs); err != nil {
				t.Fatal(err)
			}
		case r < 9:
			lo := uint64(rng.IntN(520))
			hi := lo + uint64(rng.IntN(60))
			if err := s.DeleteRange(lo, hi); err != nil {
				t.Fatal(err)
			}
			for i := range model {
				if i >= lo && i <= hi {
					delete(model, i)
				}
			}
		default:
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s = openStore(t, dir, nil)
		}
		if step%50 == 0 || step == 299 {
			var want []uint64
			for i := range model {
				want = append(want, i)
			}
			sort.Slice(want, func(a, b int) bool { return want[a] < want[b] })
			checkLog(t, s, want, all)
		}
	}
}

// TestStoreCrash checks on bloomkv's crash-simulating file system that every
// StoreLogs, DeleteRange and Set that returned survives a crash, and that a
// crash leaves each whole or absent.
func TestStoreCrash(t *testing.T) {
	fs := vfs.NewMem()
	s, err := Open("raft", &bloomkv.Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	var logs []*raft.Log
	for i := uint64(1); i <= 200; i++ {
		logs = append(logs, fullLog(i))
	}
	for i := 0; i < len(logs); i += 50 {
		if err := s.StoreLogs(logs[i : i+50]); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.DeleteRange(1, 120); err != nil {
		t.Fatal(err)
	}
	if err := s.SetUint64([]byte("CurrentTerm"), 42); err != nil {
		t.Fatal(err)
	}
	for seed := range uint64(4) {
		crashed := fs.CrashClone(vfs.CrashOptions{TornWrites: true, Seed: seed})
		s2, err := Open("raft", &bloomkv.Options{FS: crashed})
		if err != nil {
			t.Fatal(err)
		}
		var want, all []uint64
		for i := uint64(1); i <= 200; i++ {
			all = append(all, i)
			if i > 120 {
				want = append(want, i)
			}
		}
		checkLog(t, s2, want, all)
		if v, err := s2.GetUint64([]byte("CurrentTerm")); err != nil || v != 42 {
			t.Fatalf("CurrentTerm after a crash: %d, %v", v, err)
		}
		if err := s2.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}
