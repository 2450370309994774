package raftstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/vfs"
)

func openFSM(t *testing.T, dir string, opts *FSMOptions) *FSM {
	t.Helper()
	f, err := OpenFSM(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Close() })
	return f
}

// fsmState reads the FSM's whole state.
func fsmState(t *testing.T, f *FSM) map[string]string {
	t.Helper()
	got := map[string]string{}
	if err := f.Scan(nil, nil, func(k, v []byte) error {
		got[string(k)] = string(v)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return got
}

func sameState(t *testing.T, what string, got, want map[string]string) {
	t.Helper()
	if !maps.Equal(got, want) {
		t.Fatalf("%s: %d keys, want %d: got %v, want %v", what, len(got), len(want), clip(got), clip(want))
	}
}

func clip(m map[string]string) string {
	s := fmt.Sprint(m)
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// randomCommand returns a command of 1–4 ops on a small key space, and
// applies it to model.
func randomCommand(rng *rand.Rand, model map[string]string, step int) []byte {
	var cmd []byte
	for j := range 1 + rng.IntN(4) {
		k := fmt.Sprintf("key%03d", rng.IntN(200))
		if rng.IntN(4) == 0 {
			cmd = AppendDelete(cmd, []byte(k))
			delete(model, k)
			continue
		}
		v := fmt.Sprintf("v%d.%d", step, j)
		cmd = AppendSet(cmd, []byte(k), []byte(v))
		model[k] = v
	}
	return cmd
}

func TestFSMApply(t *testing.T) {
	dir := t.TempDir()
	f := openFSM(t, dir, nil)
	rng := rand.New(rand.NewPCG(3, 4))
	model := map[string]string{}
	index := uint64(0)
	for step := range 400 {
		var logs []*raft.Log
		for range 1 + rng.IntN(5) {
			index++
			logs = append(logs, &raft.Log{Index: index, Type: raft.LogCommand, Data: randomCommand(rng, model, step)})
		}
		var resp []any
		if len(logs) == 1 {
			resp = []any{f.Apply(logs[0])}
		} else {
			resp = f.ApplyBatch(logs)
		}
		for i, r := range resp {
			if r != nil {
				t.Fatalf("entry %d: response %v", logs[i].Index, r)
			}
		}
	}
	sameState(t, "applied", fsmState(t, f), model)
	if f.AppliedIndex() != index {
		t.Fatalf("AppliedIndex %d, want %d", f.AppliedIndex(), index)
	}
	// Get sees the same; a deleted or never-set key is ErrNotFound.
	for k, v := range model {
		if got, err := f.Get([]byte(k)); err != nil || string(got) != v {
			t.Fatalf("Get(%q) = %q, %v; want %q", k, got, err, v)
		}
	}
	if _, err := f.Get([]byte("never")); !errors.Is(err, bloomkv.ErrNotFound) {
		t.Fatalf("Get of a missing key: %v", err)
	}
	// Scan's bounds are the user's keys.
	n := 0
	if err := f.Scan([]byte("key050"), []byte("key100"), func(k, v []byte) error {
		if string(k) < "key050" || string(k) >= "key100" || model[string(k)] != string(v) {
			t.Fatalf("Scan gave %q=%q", k, v)
		}
		n++
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := 0
	for k := range model {
		if k >= "key050" && k < "key100" {
			want++
		}
	}
	if n != want {
		t.Fatalf("Scan saw %d keys, want %d", n, want)
	}

	// Reopened, the state and its applied index are there, and entries at or
	// below it (raft applying its log again) are skipped.
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	f = openFSM(t, dir, nil)
	if f.AppliedIndex() != index {
		t.Fatalf("reopened: AppliedIndex %d, want %d", f.AppliedIndex(), index)
	}
	if r := f.Apply(&raft.Log{Index: index, Type: raft.LogCommand, Data: AppendSet(nil, []byte("key000"), []byte("replayed"))}); r != nil {
		t.Fatal(r)
	}
	sameState(t, "reopened, after a replayed entry", fsmState(t, f), model)
}

func TestFSMBadCommands(t *testing.T) {
	f := openFSM(t, t.TempDir(), nil)
	good := AppendSet(nil, []byte("a"), []byte("1"))
	cases := []struct {
		name string
		cmd  []byte
	}{
		{"unknown op", []byte{'x', 1, 'a'}},
		{"cut key", []byte{'s', 5, 'a'}},
		{"missing value", []byte{'s', 1, 'b'}},
		{"bad varint", []byte{'d', 0x80}},
		{"good then bad", append(AppendSet(nil, []byte("b"), []byte("2")), 'q')},
		{"key too long", AppendSet(nil, bytes.Repeat([]byte("k"), maxUserKey+1), nil)},
	}
	logs := []*raft.Log{{Index: 1, Type: raft.LogCommand, Data: good}}
	for i, c := range cases {
		logs = append(logs, &raft.Log{Index: uint64(i + 2), Type: raft.LogCommand, Data: c.cmd})
	}
	// A configuration entry reaches ApplyBatch too and changes nothing.
	logs = append(logs, &raft.Log{Index: uint64(len(logs) + 1), Type: raft.LogConfiguration, Data: []byte("not a command")})
	resp := f.ApplyBatch(logs)
	if resp[0] != nil {
		t.Fatalf("good command: %v", resp[0])
	}
	for i, c := range cases {
		if err, _ := resp[i+1].(error); !errors.Is(err, ErrBadCommand) {
			t.Fatalf("%s: response %v, want ErrBadCommand", c.name, resp[i+1])
		}
	}
	if resp[len(resp)-1] != nil {
		t.Fatalf("configuration entry: %v", resp[len(resp)-1])
	}
	sameState(t, "after bad commands", fsmState(t, f), map[string]string{"a": "1"})
	if f.AppliedIndex() != uint64(len(logs)) {
		t.Fatalf("AppliedIndex %d, want %d: bad commands are applied as no-ops", f.AppliedIndex(), len(logs))
	}
}

// memSink is a raft.SnapshotSink into memory.
type memSink struct {
	bytes.Buffer
	closed, cancelled bool
}

func (s *memSink) ID() string           { return "mem" }
func (s *memSink) Close() error         { s.closed = true; return nil }
func (s *memSink) Cancel() error        { s.cancelled = true; return nil }
func (s *memSink) stream() []byte       { return s.Bytes() }
func readCloser(b []byte) io.ReadCloser { return io.NopCloser(bytes.NewReader(b)) }

// persisted takes a snapshot of f, persists it and releases it, and
// returns the stream.
func persisted(t *testing.T, f *FSM) []byte {
	t.Helper()
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Release()
	var sink memSink
	if err := snap.Persist(&sink); err != nil {
		t.Fatal(err)
	}
	return sink.stream()
}

func applyAll(t *testing.T, f *FSM, first uint64, cmds ...[]byte) {
	t.Helper()
	for i, c := range cmds {
		if r := f.Apply(&raft.Log{Index: first + uint64(i), Type: raft.LogCommand, Data: c}); r != nil {
			t.Fatal(r)
		}
	}
}

// TestFSMSnapshotRestore: a snapshot is the state at Snapshot, not at
// Persist; Restore replaces a whole other state with it.
func TestFSMSnapshotRestore(t *testing.T) {
	src := openFSM(t, t.TempDir(), nil)
	rng := rand.New(rand.NewPCG(5, 6))
	model := map[string]string{}
	for i := range 300 {
		applyAll(t, src, uint64(i+1), randomCommand(rng, model, i))
	}
	// Large values, several restore batches' worth.
	for i := range 40 {
		k, v := fmt.Sprintf("big%02d", i), bytes.Repeat([]byte{byte(i)}, 200<<10)
		applyAll(t, src, uint64(301+i), AppendSet(nil, []byte(k), v))
		model[k] = string(v)
	}
	atSnapshot := maps.Clone(model)
	snap, err := src.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	// Applied after Snapshot, before Persist: not in the snapshot.
	applyAll(t, src, 341, AppendSet(nil, []byte("key001"), []byte("later")), AppendDelete(nil, []byte("big00")))
	var sink memSink
	if err := snap.Persist(&sink); err != nil || !sink.closed || sink.cancelled {
		t.Fatalf("Persist: %v (closed %v, cancelled %v)", err, sink.closed, sink.cancelled)
	}
	snap.Release()

	dst := openFSM(t, t.TempDir(), nil)
	applyAll(t, dst, 1, AppendSet(nil, []byte("only in dst"), []byte("x")), AppendSet(nil, []byte("key001"), []byte("dst's")))
	if err := dst.Restore(readCloser(sink.stream())); err != nil {
		t.Fatal(err)
	}
	sameState(t, "restored", fsmState(t, dst), atSnapshot)
	if dst.AppliedIndex() != 340 {
		t.Fatalf("restored AppliedIndex %d, want 340", dst.AppliedIndex())
	}
	// The next entries apply on top, and the restored state outlives a reopen.
	applyAll(t, dst, 341, AppendSet(nil, []byte("key001"), []byte("later")), AppendDelete(nil, []byte("big00")))
	atSnapshot["key001"] = "later"
	delete(atSnapshot, "big00")
	sameState(t, "restored, then applied", fsmState(t, dst), fsmState(t, src))
	dir := dst.dir
	if err := dst.Close(); err != nil {
		t.Fatal(err)
	}
	dst = openFSM(t, dir, nil)
	sameState(t, "restored, reopened", fsmState(t, dst), atSnapshot)
	if names, _ := vfs.Default.List(dir); len(names) != 2 {
		t.Fatalf("after a restore the FSM directory holds %v, want STATE and one state", names)
	}
}

// TestFSMRestoreBadStream: a stream damaged in any way is refused with
// ErrCorruption, and the old state stays.
func TestFSMRestoreBadStream(t *testing.T) {
	src := openFSM(t, t.TempDir(), nil)
	applyAll(t, src, 1, AppendSet(nil, []byte("a"), []byte("1")), AppendSet(nil, []byte("b"), []byte("2")))
	good := persisted(t, src)
	dst := openFSM(t, t.TempDir(), nil)
	applyAll(t, dst, 1, AppendSet(nil, []byte("old"), []byte("state")))
	streams := map[string][]byte{"empty": nil, "extra byte": append(bytes.Clone(good), 0)}
	for n := 1; n < len(good); n++ {
		streams[fmt.Sprintf("cut at %d", n)] = good[:n]
	}
	for i := range good {
		b := bytes.Clone(good)
		b[i] ^= 1 << (i % 8)
		streams[fmt.Sprintf("bit %d of byte %d", i%8, i)] = b
	}
	for name, s := range streams {
		if err := dst.Restore(readCloser(s)); !errors.Is(err, bloomkv.ErrCorruption) {
			t.Fatalf("%s: Restore: %v, want ErrCorruption", name, err)
		}
	}
	sameState(t, "after refused streams", fsmState(t, dst), map[string]string{"old": "state"})
	if err := dst.Restore(readCloser(good)); err != nil {
		t.Fatal(err)
	}
	sameState(t, "after the good stream", fsmState(t, dst), map[string]string{"a": "1", "b": "2"})
}

// failingReader reads a stream up to n bytes, then fails with err.
type failingReader struct {
	b   []byte
	n   int
	err error
}

func (f *failingReader) Read(p []byte) (int, error) {
	if f.n == 0 {
		return 0, f.err
	}
	k := copy(p[:min(len(p), f.n)], f.b)
	f.b, f.n = f.b[k:], f.n-k
	return k, nil
}

func (f *failingReader) Close() error { return nil }

// TestFSMRestoreReadError: a stream whose reader fails is refused with the
// reader's error, not as corrupt, and the old state stays.
func TestFSMRestoreReadError(t *testing.T) {
	src := openFSM(t, t.TempDir(), nil)
	applyAll(t, src, 1, AppendSet(nil, []byte("a"), []byte("1")), AppendSet(nil, []byte("b"), []byte("2")))
	good := persisted(t, src)
	dst := openFSM(t, t.TempDir(), nil)
	applyAll(t, dst, 1, AppendSet(nil, []byte("old"), []byte("state")))
	broken := errors.New("connection reset")
	for _, n := range []int{0, 3, len(snapshotMagic) + 1, len(good) / 2, len(good) - 1} {
		err := dst.Restore(&failingReader{b: good, n: n, err: broken})
		if !errors.Is(err, broken) || errors.Is(err, bloomkv.ErrCorruption) {
			t.Errorf("failing after %d bytes: Restore: %v, want the reader's error and not ErrCorruption", n, err)
		}
	}
	sameState(t, "after failed reads", fsmState(t, dst), map[string]string{"old": "state"})
}

// crashingReader hands out a stream, and at every chunk boundary takes the
// file system a crash would leave at that point of a Restore.
type crashingReader struct {
	r       io.Reader
	fs      *vfs.MemFS
	chunk   int
	crashes []*vfs.MemFS
}

func (c *crashingReader) Read(p []byte) (int, error) {
	c.crashes = append(c.crashes, c.fs.CrashClone(vfs.CrashOptions{}))
	return c.r.Read(p[:min(len(p), c.chunk)])
}

// TestFSMRestoreCrash crashes a Restore at many points while it reads its
// stream, and right after: each crash reopens as the old state or the new
// one, whole, with its applied index.
func TestFSMRestoreCrash(t *testing.T) {
	src := openFSM(t, t.TempDir(), nil)
	newState := map[string]string{}
	for i := range 30 {
		k, v := fmt.Sprintf("new%02d", i), string(bytes.Repeat([]byte{byte('a' + i%26)}, 100<<10))
		applyAll(t, src, uint64(i+1), AppendSet(nil, []byte(k), []byte(v)))
		newState[k] = v
	}
	stream := persisted(t, src)

	fs := vfs.NewMem()
	opts := &FSMOptions{DB: &bloomkv.Options{FS: fs}}
	f, err := OpenFSM("fsm", opts)
	if err != nil {
		t.Fatal(err)
	}
	oldState := map[string]string{"old": "state", "new05": "old value"}
	applyAll(t, f, 1, AppendSet(nil, []byte("old"), []byte("state")), AppendSet(nil, []byte("new05"), []byte("old value")))
	persisted(t, f) // makes the old state durable
	cr := &crashingReader{r: bytes.NewReader(stream), fs: fs, chunk: 128 << 10}
	if err := f.Restore(io.NopCloser(cr)); err != nil {
		t.Fatal(err)
	}
	crashes := append(cr.crashes, fs.CrashClone(vfs.CrashOptions{}))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	var olds, news int
	for i, crashed := range crashes {
		g, err := OpenFSM("fsm", &FSMOptions{DB: &bloomkv.Options{FS: crashed}})
		if err != nil {
			t.Fatalf("crash %d: %v", i, err)
		}
		got := fsmState(t, g)
		last := i == len(crashes)-1
		switch {
		case maps.Equal(got, newState) && g.AppliedIndex() == 30:
			news++
		case !last && maps.Equal(got, oldState) && g.AppliedIndex() == 2:
			olds++
		default:
			t.Fatalf("crash %d of %d: state %v, applied %d: neither the old state nor the new", i, len(crashes), clip(got), g.AppliedIndex())
		}
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
		if names, _ := crashed.List("fsm"); len(names) != 2 {
			t.Fatalf("crash %d: reopened FSM directory holds %v, want STATE and one state", i, names)
		}
	}
	t.Logf("%d crashes: %d left the old state, %d the new", len(crashes), olds, news)
	if olds < 10 || news < 1 {
		t.Fatalf("%d crashes left the old state, %d the new: the stream should span many crash points", olds, news)
	}
}

func TestOpenFSMForeignDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := vfs.Default.MkdirAll(dir + "/photos"); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenFSM(dir, nil); err == nil {
		t.Fatal("OpenFSM took a directory holding someone else's files")
	}
	if names, _ := vfs.Default.List(dir); len(names) != 1 {
		t.Fatalf("OpenFSM changed a foreign directory: %v", names)
	}
}

// TestFSMSnapshotCheckpoint: a snapshot persists from its checkpoint
// directory beside the state, after the FSM has moved on and even after it
// closed, and Release removes the directory. Every file the checkpoint
// holds is named as bloomkv.IsDBFileName expects: the oracle of
// ownSnapshotDir's proof is bloomkv's own Checkpoint.
func TestFSMSnapshotCheckpoint(t *testing.T) {
	dir := t.TempDir()
	opts := &FSMOptions{DB: &bloomkv.Options{MemtableSize: 64 << 10}}
	f, err := OpenFSM(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	model := map[string]string{}
	for i := range 200 {
		k, v := fmt.Sprintf("key%03d", i), string(bytes.Repeat([]byte{byte(i)}, 1<<10))
		applyAll(t, f, uint64(i+1), AppendSet(nil, []byte(k), []byte(v)))
		model[k] = v
	}
	applyAll(t, f, 201, AppendDelete(nil, []byte("key007")))
	delete(model, "key007")
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	ckpt := f.fs.PathJoin(dir, snapshotName(1))
	names, err := vfs.Default.List(ckpt)
	if err != nil {
		t.Fatalf("no checkpoint directory after Snapshot: %v", err)
	}
	var tables int
	for _, name := range names {
		if !bloomkv.IsDBFileName(name) {
			t.Errorf("the checkpoint holds %q, which bloomkv.IsDBFileName does not know", name)
		}
		if bytes.HasSuffix([]byte(name), []byte(".sst")) {
			tables++
		}
	}
	if tables == 0 {
		t.Fatalf("checkpoint holds %v: no table, so the names of tables went unchecked", names)
	}
	if err := ownSnapshotDir(vfs.Default, ckpt); err != nil {
		t.Fatal(err)
	}
	// Written after Snapshot: not in it. Then the FSM closes.
	applyAll(t, f, 202, AppendSet(nil, []byte("key001"), []byte("later")))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	var sink memSink
	if err := snap.Persist(&sink); err != nil || !sink.closed {
		t.Fatalf("Persist after Close: %v (closed %v)", err, sink.closed)
	}
	snap.Release()
	if _, err := vfs.Default.Stat(ckpt); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("Release left the checkpoint directory: %v", err)
	}
	dst := openFSM(t, t.TempDir(), nil)
	if err := dst.Restore(readCloser(sink.stream())); err != nil {
		t.Fatal(err)
	}
	sameState(t, "restored", fsmState(t, dst), model)
	if dst.AppliedIndex() != 201 {
		t.Fatalf("restored AppliedIndex %d, want 201", dst.AppliedIndex())
	}
}

// TestFSMSnapshotCrash: a crash between Snapshot and Release — at every
// point of the checkpoint's writing, and after it — leaves a checkpoint
// directory, whole or partial, that the next OpenFSM removes, with the
// state at least at the snapshot's applied index. So does a process that
// ends without releasing.
func TestFSMSnapshotCrash(t *testing.T) {
	mem := vfs.NewMem()
	var crashes []*vfs.MemFS
	// Every file operation of the checkpoint is a crash point.
	counting := &crashingFS{FS: mem, mem: mem, crashes: &crashes}
	f, err := OpenFSM("fsm", &FSMOptions{DB: &bloomkv.Options{FS: counting, MemtableSize: 64 << 10}})
	if err != nil {
		t.Fatal(err)
	}
	model := map[string]string{}
	for i := range 100 {
		k, v := fmt.Sprintf("key%03d", i), string(bytes.Repeat([]byte{byte(i)}, 2<<10))
		applyAll(t, f, uint64(i+1), AppendSet(nil, []byte(k), []byte(v)))
		model[k] = v
	}
	// The crash points are the checkpoint's file operations: wait for the
	// flushes and compactions the applies left running, whose own file
	// operations (a table's, the manifest's rotation) would otherwise
	// count too — before the snapshot's synced write, when the last
	// unsynced applies may still be lost.
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		if m := f.cur.db.Metrics(); !m.CompactionPending && m.ImmutableMemtables == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the flushes and compactions never ended")
		}
	}
	counting.on.Store(true)
	snap, err := f.Snapshot()
	counting.on.Store(false)
	if err != nil {
		t.Fatal(err)
	}
	counting.mu.Lock()
	crashes = append(crashes[:len(crashes):len(crashes)], mem.CrashClone(vfs.CrashOptions{}))
	counting.mu.Unlock()
	var sawDir int
	for i, crashed := range crashes {
		if _, err := crashed.Stat("fsm/" + snapshotName(1)); err == nil {
			sawDir++
		}
		g, err := OpenFSM("fsm", &FSMOptions{DB: &bloomkv.Options{FS: crashed}})
		if err != nil {
			t.Fatalf("crash %d of %d: %v", i, len(crashes), err)
		}
		sameState(t, fmt.Sprintf("crash %d", i), fsmState(t, g), model)
		if g.AppliedIndex() != 100 {
			t.Fatalf("crash %d: AppliedIndex %d, want 100", i, g.AppliedIndex())
		}
		if err := g.Close(); err != nil {
			t.Fatal(err)
		}
		if names, _ := crashed.List("fsm"); len(names) != 2 {
			t.Fatalf("crash %d: reopened FSM directory holds %v, want STATE and one state", i, names)
		}
	}
	t.Logf("%d crash points, %d with a checkpoint directory", len(crashes), sawDir)
	if sawDir < len(crashes)/2 {
		t.Fatalf("only %d of %d crashes left a checkpoint directory: the crash points miss the checkpoint", sawDir, len(crashes))
	}
	snap.Release()
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}

	// A process that ends between Snapshot and Release, on a real disk.
	dir := t.TempDir()
	f = openFSM(t, dir, nil)
	applyAll(t, f, 1, AppendSet(nil, []byte("a"), []byte("1")))
	if _, err := f.Snapshot(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if names, _ := vfs.Default.List(dir); len(names) != 3 {
		t.Fatalf("before reopening, the FSM directory holds %v, want STATE, a state and a checkpoint", names)
	}
	f = openFSM(t, dir, nil)
	sameState(t, "reopened", fsmState(t, f), map[string]string{"a": "1"})
	if names, _ := vfs.Default.List(dir); len(names) != 2 {
		t.Fatalf("after reopening, the FSM directory holds %v, want STATE and one state", names)
	}
}

// crashingFS takes, while on, the file system a crash would leave before
// each file it creates, links or syncs.
// Background flushes and compactions call it too, hence the atomic and the
// lock.
type crashingFS struct {
	vfs.FS
	mem     *vfs.MemFS
	on      atomic.Bool
	mu      sync.Mutex
	crashes *[]*vfs.MemFS
}

func (c *crashingFS) crash() {
	if c.on.Load() {
		clone := c.mem.CrashClone(vfs.CrashOptions{})
		c.mu.Lock()
		*c.crashes = append(*c.crashes, clone)
		c.mu.Unlock()
	}
}

func (c *crashingFS) Create(name string) (vfs.File, error) { c.crash(); return c.FS.Create(name) }
func (c *crashingFS) SyncDir(dir string) error             { c.crash(); return c.FS.SyncDir(dir) }
func (c *crashingFS) MkdirAll(dir string) error            { c.crash(); return c.FS.MkdirAll(dir) }
func (c *crashingFS) Rename(a, b string) error             { c.crash(); return c.FS.Rename(a, b) }

// TestOpenFSMForeignSnapshotDir: a directory named as a snapshot's
// checkpoint that holds anything a checkpoint does not is not the FSM's to
// remove: OpenFSM refuses the directory and changes nothing.
func TestOpenFSMForeignSnapshotDir(t *testing.T) {
	cases := map[string]func(t *testing.T, path string){
		"a foreign file": func(t *testing.T, path string) {
			mustMkdir(t, path)
			mustWrite(t, path+"/holiday.jpg")
		},
		"a foreign file beside DB files": func(t *testing.T, path string) {
			mustMkdir(t, path)
			mustWrite(t, path+"/000001.sst")
			mustWrite(t, path+"/notes.txt")
		},
		"a directory named as a table": func(t *testing.T, path string) {
			mustMkdir(t, path+"/000005.sst")
		},
		"a file, not a directory": func(t *testing.T, path string) {
			mustWrite(t, path)
		},
	}
	for name, setup := range cases {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			f := openFSM(t, dir, nil)
			applyAll(t, f, 1, AppendSet(nil, []byte("a"), []byte("1")))
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			setup(t, dir+"/"+snapshotName(7))
			before := tree(t, dir)
			if g, err := OpenFSM(dir, nil); err == nil {
				_ = g.Close()
				t.Fatal("OpenFSM took a directory holding a foreign one named as a checkpoint")
			} else {
				t.Log(err)
			}
			if after := tree(t, dir); !maps.Equal(after, before) {
				t.Fatalf("OpenFSM changed the directory: before %v, after %v", before, after)
			}
		})
	}
}

func mustMkdir(t *testing.T, path string) {
	t.Helper()
	if err := vfs.Default.MkdirAll(path); err != nil {
		t.Fatal(err)
	}
}

func mustWrite(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, []byte("someone else's"), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tree lists every path under dir with its size, "dir" for directories.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		if d.IsDir() {
			out[path] = "dir"
		} else {
			out[path] = fmt.Sprint(info.Size())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// BenchmarkFSMSnapshot measures Snapshot, which raft calls on its FSM
// goroutine, on a state of 50,000 pairs: the checkpoint's cost, which grows
// with the unflushed WALs, not with the state.
func BenchmarkFSMSnapshot(b *testing.B) {
	f, err := OpenFSM(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	index := uint64(0)
	apply := func(cmd []byte) {
		index++
		if r := f.Apply(&raft.Log{Index: index, Type: raft.LogCommand, Data: cmd}); r != nil {
			b.Fatal(r)
		}
	}
	for i := range 50_000 {
		apply(AppendSet(nil, fmt.Appendf(nil, "key%08d", i), make([]byte, 100)))
	}
	for b.Loop() {
		snap, err := f.Snapshot()
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		snap.Release()
		apply(AppendSet(nil, []byte("x"), []byte("y")))
		b.StartTimer()
	}
}

// TestFSMReleaseForeignFile: a checkpoint directory that came to hold
// something no checkpoint holds between Snapshot and Release is no longer
// provably the FSM's: Release leaves it, and the foreign file, untouched.
func TestFSMReleaseForeignFile(t *testing.T) {
	dir := t.TempDir()
	f := openFSM(t, dir, nil)
	defer f.Close()
	applyAll(t, f, 1, AppendSet(nil, []byte("a"), []byte("1")))
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	ckpt := filepath.Join(dir, snapshotName(1))
	mustWrite(t, ckpt+"/notes.txt")
	before := tree(t, ckpt)
	snap.Release()
	if after := tree(t, ckpt); !maps.Equal(after, before) {
		t.Fatalf("Release changed a directory holding a foreign file: before %v, after %v", before, after)
	}
}

// TestOpenFSMForeignStateDir: a leftover directory named as a state that
// holds a file bloomkv never writes is not the FSM's to remove: OpenFSM
// refuses the directory and the file stays; so does Restore, which would
// build its new state there.
func TestOpenFSMForeignStateDir(t *testing.T) {
	dir := t.TempDir()
	f := openFSM(t, dir, nil)
	applyAll(t, f, 1, AppendSet(nil, []byte("a"), []byte("1")))
	snap, err := f.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	var sink memSink
	if err := snap.Persist(&sink); err != nil {
		t.Fatal(err)
	}
	snap.Release()
	next := filepath.Join(dir, stateName(2)) // Restore's next state
	mustMkdir(t, next)
	mustWrite(t, next+"/notes.txt")
	if err := f.Restore(readCloser(sink.stream())); err == nil {
		t.Fatal("Restore built its state in a directory holding a foreign file")
	} else {
		t.Log(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if g, err := OpenFSM(dir, nil); err == nil {
		_ = g.Close()
		t.Fatal("OpenFSM took a directory holding a foreign leftover state directory")
	} else {
		t.Log(err)
	}
	if _, err := os.Stat(next + "/notes.txt"); err != nil {
		t.Fatalf("the foreign file is gone: %v", err)
	}
}
