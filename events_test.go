package bloomkv

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv/vfs"
)

// eventRecorder keeps every event an EventListener receives, as lines.
type eventRecorder struct {
	mu     sync.Mutex
	events []string
}

func (r *eventRecorder) add(format string, args ...any) {
	r.mu.Lock()
	r.events = append(r.events, fmt.Sprintf(format, args...))
	r.mu.Unlock()
}

func (r *eventRecorder) count(prefix string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.events {
		if strings.HasPrefix(e, prefix) {
			n++
		}
	}
	return n
}

func (r *eventRecorder) listener() *EventListener {
	return &EventListener{
		BackgroundError: func(i BackgroundErrorInfo) { r.add("background-error %s %v", i.Op, i.Err) },
		Recovered:       func(i RecoveryInfo) { r.add("recovered %s", i.Op) },
		FlushBegin:      func(i FlushInfo) { r.add("flush-begin %d", i.JobID) },
		FlushEnd:        func(i FlushInfo) { r.add("flush-end %d %06d %d %v", i.JobID, i.Output.FileNum, i.Output.Size, i.Err) },
		CompactionBegin: func(i CompactionInfo) {
			r.add("compaction-begin %d L%d->L%d %d", i.JobID, i.Level, i.OutputLevel, len(i.Inputs))
		},
		CompactionEnd: func(i CompactionInfo) {
			r.add("compaction-end %d L%d->L%d %d %d %v", i.JobID, i.Level, i.OutputLevel, len(i.Inputs), len(i.Outputs), i.Err)
		},
		WriteStallBegin: func(i WriteStallBeginInfo) { r.add("stall-begin %s", i.Reason) },
		WriteStallEnd:   func() { r.add("stall-end") },
		TableCreated:    func(i TableCreateInfo) { r.add("table-created %s %s", i.Reason, i.Path) },
		TableDeleted:    func(i TableDeleteInfo) { r.add("table-deleted %s %v", i.Path, i.Err) },
		WALCreated:      func(i WALCreateInfo) { r.add("wal-created %s", i.Path) },
		WALDeleted:      func(i WALDeleteInfo) { r.add("wal-deleted %s %v", i.Path, i.Err) },
		ManifestCreated: func(i ManifestCreateInfo) { r.add("manifest-created %s", i.Path) },
	}
}

// TestEventListener drives a DB through flushes, compactions, a write stall
// and a background error, and checks each event against what the directory
// and the metrics say happened; and that the Logger gets the lines.
func TestEventListener(t *testing.T) {
	mem := vfs.NewMem()
	// gate, while set, holds every table creation, so that flushes wait
	// and writes stall behind them.
	var gateMu sync.Mutex
	var gate chan struct{}
	failSync := false
	inj := vfs.NewInjecting(mem, func(op vfs.Op) bool {
		gateMu.Lock()
		g, fail := gate, failSync && op.Kind == vfs.OpSync && strings.HasSuffix(op.Name, ".sst")
		if fail {
			failSync = false
		}
		gateMu.Unlock()
		if g != nil && op.Kind == vfs.OpCreate && strings.HasSuffix(op.Name, ".sst") {
			<-g
		}
		return fail
	})
	var rec eventRecorder
	var logBuf bytes.Buffer
	var logMu sync.Mutex
	logger := slog.New(slog.NewTextHandler(&lockedWriter{w: &logBuf, mu: &logMu}, &slog.HandlerOptions{Level: slog.LevelDebug}))
	opts := &Options{FS: inj, MemtableSize: 64 << 10, L0CompactionTrigger: 2, EventListener: rec.listener(), Logger: logger}
	d, err := Open("db", opts)
	if err != nil {
		t.Fatal(err)
	}
	if rec.count("manifest-created") != 1 || rec.count("wal-created") != 1 {
		t.Errorf("Open: events %v; want one manifest and one WAL created", rec.events)
	}
	w := newBGWorkload()
	for round := range 3 {
		if err := w.write(d, round, 0, 200); err != nil {
			t.Fatal(err)
		}
		if err := d.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	if err := d.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	d.deleter.wait() // the deletions the compaction queued are reported
	m := d.Metrics()
	if got := rec.count("flush-end"); got != int(m.Flushes) || got < 3 {
		t.Errorf("%d flush-end events; metrics count %d flushes", got, m.Flushes)
	}
	if rec.count("flush-begin") != rec.count("flush-end") {
		t.Errorf("%d flush-begin events, %d flush-end", rec.count("flush-begin"), rec.count("flush-end"))
	}
	if got := rec.count("compaction-end"); got == 0 || got != rec.count("compaction-begin") {
		t.Errorf("%d compaction-end events, %d begin; want as many, at least one", got, rec.count("compaction-begin"))
	}
	if rec.count("table-created flush") < 3 || rec.count("table-created compaction") == 0 {
		t.Errorf("table-created events: %d flush, %d compaction", rec.count("table-created flush"), rec.count("table-created compaction"))
	}
	// Every table created and not deleted is in the directory.
	names, _ := mem.List("db")
	live := map[string]bool{}
	for _, n := range names {
		live["db/"+n] = true
	}
	rec.mu.Lock()
	for _, e := range rec.events {
		var kind, path string
		fmt.Sscanf(e, "%s", &kind)
		switch kind {
		case "table-created":
			path = strings.Fields(e)[2]
			deleted := false
			for _, e2 := range rec.events {
				deleted = deleted || strings.HasPrefix(e2, "table-deleted "+path+" <nil>")
			}
			if live[path] == deleted {
				t.Errorf("table %s: in the directory %v, deleted event %v", path, live[path], deleted)
			}
		case "wal-deleted":
			path = strings.Fields(e)[1]
			if live[path] {
				t.Errorf("WAL %s reported deleted, but it is in the directory", path)
			}
		}
	}
	rec.mu.Unlock()
	if rec.count("table-deleted") == 0 || rec.count("wal-deleted") == 0 {
		t.Errorf("no table or WAL deleted: %v", rec.events)
	}

	// A write stall: flushes held at the gate, the memtables fill.
	gateMu.Lock()
	gate = make(chan struct{})
	gateMu.Unlock()
	done := make(chan error)
	go func() { done <- w.write(d, 5, 0, 2000) }()
	for rec.count("stall-begin memtables full") == 0 {
		select {
		case err := <-done:
			t.Fatalf("the writes finished without a stall: %v", err)
		default:
		}
		time.Sleep(time.Millisecond)
	}
	gateMu.Lock()
	close(gate)
	gate = nil
	gateMu.Unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if rec.count("stall-end") == 0 {
		t.Error("no stall-end event after the stall")
	}

	// A background error, retried, then recovered. The failing sync must
	// meet the flush, not a compaction the stall left running.
	d.waitForCompactions(t)
	gateMu.Lock()
	failSync = true
	gateMu.Unlock()
	if err := w.write(d, 6, 0, 100); err != nil {
		t.Fatal(err)
	}
	if err := d.Flush(); err == nil {
		t.Error("Flush with a failing table sync: nil error")
	}
	if err := untilNoError(d.Flush); err != nil {
		t.Fatal(err)
	}
	if rec.count("background-error flush") != 1 || rec.count("recovered flush") != 1 {
		t.Errorf("%d flush errors, %d flush recoveries; want 1 and 1", rec.count("background-error flush"), rec.count("recovered flush"))
	}
	if err := w.check(d); err != nil {
		t.Fatal(err)
	}
	d.Close()

	logMu.Lock()
	out := logBuf.String()
	logMu.Unlock()
	for _, want := range []string{"bloomkv: flushed", "bloomkv: compacted", "bloomkv: write stall", "bloomkv: background error", "bloomkv: table created", "bloomkv: WAL created", "bloomkv: manifest created"} {
		if !strings.Contains(out, want) {
			t.Errorf("the log has no %q line", want)
		}
	}
}

// lockedWriter serializes writes to w: the DB logs from several goroutines.
type lockedWriter struct {
	w  *bytes.Buffer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
