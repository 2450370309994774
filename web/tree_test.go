package web

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/sstable"
	"github.com/bloomkv/bloomkv/vfs"
	"github.com/klauspost/compress/s2"
)

// treeDB opens a DB on a MemFS holding keys k00000…k01999 (k00007
// deleted) and a binary key in L6 and an L0 table, with an EventLog, and
// looks up absent keys so that the filter counters move. Nothing runs in
// the background when it returns.
func treeDB(t *testing.T) (*bloomkv.DB, *EventLog) {
	t.Helper()
	events := NewEventLog(0)
	db, err := bloomkv.Open("db", &bloomkv.Options{FS: vfs.NewMem(), MemtableSize: 64 << 10, TargetFileSize: 16 << 10,
		ValueSeparation: bloomkv.ValueSeparation{MinSize: 1 << 10}, EventListener: events.Listener(nil)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for i := range 2000 {
		if err := db.Put(fmt.Appendf(nil, "k%05d", i), bytes.Repeat([]byte{'v'}, 60), bloomkv.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Put([]byte{0, 0xff, '\n'}, []byte("binary"), nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Compact(nil, nil); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"k00007", "k00100"} {
		if err := db.Delete([]byte(k), nil); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Put([]byte("k00100"), []byte("again"), nil); err != nil {
		t.Fatal(err)
	}
	// A value large enough for a blob file.
	if err := db.Put([]byte("k00200y"), bytes.Repeat([]byte{'L'}, 2000), nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	for i := range 3000 {
		db.Get(fmt.Appendf(nil, "k%05dx", i%2000)) // in range, never written
	}
	return db, events
}

// TestTree checks /api/tree against the DB's own Tables and Metrics, and
// its events against the flushes and compactions the DB ran.
func TestTree(t *testing.T) {
	db, events := treeDB(t)
	h := Handler(db, &Options{Events: events})
	r := get[treeResponse](t, h, "/api/tree")
	tables, err := db.Tables()
	if err != nil {
		t.Fatal(err)
	}
	m := db.Metrics()
	if len(r.Levels) != len(m.Levels) {
		t.Fatalf("%d levels, want %d", len(r.Levels), len(m.Levels))
	}
	var i int
	var l0, deep int
	for _, l := range r.Levels {
		ml := m.Levels[l.Level]
		if len(l.Tables) != ml.Tables || l.Bytes != ml.Bytes || l.FilterChecks != ml.FilterChecks ||
			l.FilterNegatives != ml.FilterNegatives || l.FalsePositives != ml.FalsePositives() ||
			l.MeasuredFPR != ml.FalsePositiveRate() || l.AbsentChecks != ml.FilterNegatives+ml.FalsePositives() {
			t.Errorf("L%d: %+v, want Metrics' %+v", l.Level, l, ml)
		}
		var weighted, size, bits, entries float64
		for _, tb := range l.Tables {
			bits += tb.BitsPerKey * float64(tb.Entries)
			entries += float64(tb.Entries)
			want := tables[i]
			i++
			if tb.FileNum != want.FileNum || want.Level != l.Level || tb.Size != want.Size || tb.Entries != want.Entries ||
				tb.Smallest != displayKey(want.Smallest) || tb.Largest != displayKey(want.Largest) ||
				tb.Name != fmt.Sprintf("L%d/%06d.sst", l.Level, want.FileNum) || tb.BitsPerKey != want.FilterBitsPerKey ||
				tb.PredictedFPR != want.Filter.ExpectedFalsePositiveRate() || !strings.HasPrefix(tb.Filter, "bloom ") || tb.Ingested != want.Ingested {
				t.Errorf("L%d table %+v, want %+v", l.Level, tb, want)
			}
			weighted += float64(tb.Size) * tb.PredictedFPR
			size += float64(tb.Size)
		}
		// A level's bits per key: its tables' filter bits over its keys.
		if entries > 0 && math.Abs(l.BitsPerKey-bits/entries) > 1e-9*l.BitsPerKey {
			t.Errorf("L%d: %v bits/key, want the tables' bits over their keys, %v", l.Level, l.BitsPerKey, bits/entries)
		}
		if size > 0 && l.PredictedFPR != weighted/size {
			t.Errorf("L%d: predicted rate %v, want the size-weighted %v", l.Level, l.PredictedFPR, weighted/size)
		}
		if l.Level == 0 {
			l0 += len(l.Tables)
		} else {
			deep += len(l.Tables)
			if l.FilterChecks > 0 && (l.AbsentChecks < 2000 || l.MeasuredFPR > 3*l.PredictedFPR+0.01) {
				t.Errorf("L%d: measured %v over %d absent keys, predicted %v", l.Level, l.MeasuredFPR, l.AbsentChecks, l.PredictedFPR)
			}
		}
	}
	blobs, err := db.BlobFiles()
	if err != nil || len(blobs) != 1 || len(r.Blobs) != 1 {
		t.Fatalf("blob files %+v (%v), drawn %+v; want one", blobs, err, r.Blobs)
	}
	// The blob file stores the value snappy-compressed (the DB's
	// compression), its live bytes the stored ones.
	stored := uint64(len(s2.EncodeSnappy(nil, bytes.Repeat([]byte{'L'}, 2000))))
	if b := r.Blobs[0]; b.FileNum != blobs[0].FileNum || b.Name != fmt.Sprintf("%06d.blob", b.FileNum) || b.Size != blobs[0].Size ||
		b.LiveBytes != stored || b.DeadShare != 0 {
		t.Errorf("blob file drawn %+v, want %+v with %d live bytes", b, blobs[0], stored)
	}
	if i != len(tables) || l0 != 1 || deep < 2 {
		t.Errorf("%d tables drawn of %d; %d in L0 and %d deeper, want 1 and several", i, len(tables), l0, deep)
	}
	if r.Flushes != m.Flushes || r.Compactions != m.Compactions || r.Writes != m.Writes || r.Gets != m.Gets || !r.EventsLogged {
		t.Errorf("counters %+v, want Metrics' flushes %d, compactions %d, writes %d, gets %d", r, m.Flushes, m.Compactions, m.Writes, m.Gets)
	}
	var flushes, compactions uint64
	for j, e := range r.Events {
		if e.Seq != uint64(j+1) || e.Err != "" {
			t.Errorf("event %d: %+v", j, e)
		}
		switch e.Kind {
		case "flush":
			flushes++
		case "compaction":
			compactions++
			if len(e.Outputs) == 0 || e.OutputLevel <= e.Level {
				t.Errorf("compaction %+v: no outputs, or not downwards", e)
			}
		}
	}
	if flushes != m.Flushes || compactions != m.Compactions || r.EventSeq != uint64(len(r.Events)) {
		t.Errorf("events: %d flushes, %d compactions, latest %d; want Metrics' %d, %d and %d", flushes, compactions, r.EventSeq, m.Flushes, m.Compactions, len(r.Events))
	}
	later := get[treeResponse](t, h, fmt.Sprintf("/api/tree?after=%d", r.EventSeq-1))
	if len(later.Events) != 1 || later.Events[0].Seq != r.EventSeq {
		t.Errorf("after %d: %+v, want the last event alone", r.EventSeq-1, later.Events)
	}
	if none := get[treeResponse](t, Handler(db, nil), "/api/tree"); none.EventsLogged || len(none.Events) != 0 {
		t.Errorf("without an EventLog: %+v", none)
	}
	checkRefusals(t, h, []refusal{
		{"GET", "/api/tree?after=-1", "", http.StatusBadRequest, "after"},
		{"GET", "/api/tree?after=x", "", http.StatusBadRequest, "after"},
		{"POST", "/api/tree", "{}", http.StatusMethodNotAllowed, "use GET"},
	})
}

// TestExplain checks /api/explain against DB.Explain of the same key, step
// by step, for keys found (one of them in a blob file), deleted, absent,
// written again and binary.
func TestExplain(t *testing.T) {
	db, _ := treeDB(t)
	h := Handler(db, nil)
	for _, c := range []struct {
		query          string
		key            []byte
		found, deleted bool
	}{
		{"key=k01234", []byte("k01234"), true, false},
		{"key=k00007", []byte("k00007"), true, true},
		{"key=k00100", []byte("k00100"), true, false},
		{"key=k00200y", []byte("k00200y"), true, false}, // its value in a blob file
		{"key=k00050x", []byte("k00050x"), false, false},
		{"key=zzz", []byte("zzz"), false, false},
		{"key=", []byte{}, false, false},
		{"key=00ff0a&hex=1", []byte{0, 0xff, '\n'}, true, false},
		{"key=" + url.QueryEscape("k0\x00"), []byte("k0\x00"), false, false},
	} {
		t.Run(c.query, func(t *testing.T) {
			db.Get(c.key) // the block cache warmed, so both reads below take their blocks from it
			got := get[traceResponse](t, h, "/api/explain?"+c.query)
			want, err := db.Explain(c.key)
			if err != nil {
				t.Fatal(err)
			}
			if got.Found != c.found || got.Deleted != c.deleted || got.Found != want.Found || got.Source != want.Source ||
				got.Key != displayKey(c.key) || got.Summary != want.Summary() || got.ValueBytes != len(want.Value) ||
				got.Value != displayKey(want.Value[:min(len(want.Value), MaxKeyBytes)]) || got.Error != "" {
				t.Errorf("trace %+v, want found %v deleted %v, as Explain's %+v", got, c.found, c.deleted, want)
			}
			if len(got.Steps) != len(want.Steps) {
				t.Fatalf("%d steps, want %d", len(got.Steps), len(want.Steps))
			}
			for i, s := range want.Steps {
				g := got.Steps[i]
				if g.Place != s.Place() || g.InRange != s.InRange || g.Filter != s.Filter.String() || g.Found != s.Found ||
					g.Deleted != s.Deleted || g.FalsePositive != s.FalsePositive() || g.BlocksFromCache != s.BlocksFromCache ||
					g.BlocksFromFile != s.BlocksFromFile || g.BytesRead != s.BytesRead || g.FileNum != s.FileNum ||
					(g.Kind == "blob") != (s.Kind == bloomkv.BlobStep) {
					t.Errorf("step %d: %+v, want %+v", i, g, s)
				}
			}
		})
	}
	long := strings.Repeat("k", MaxKeyBytes+1)
	checkRefusals(t, h, []refusal{
		{"GET", "/api/explain", "", http.StatusBadRequest, "key: missing"},
		{"GET", "/api/explain?key=zz&hex=1", "", http.StatusBadRequest, "not hexadecimal"},
		{"GET", "/api/explain?key=" + long, "", http.StatusBadRequest, "1025 bytes, more than the 1024"},
		{"GET", "/api/explain?hex=1&key=" + hex.EncodeToString([]byte(long)), "", http.StatusBadRequest, "more than the 1024"},
		{"POST", "/api/explain?key=a", "", http.StatusMethodNotAllowed, "use GET"},
	})
	// At the limit a key is looked up.
	if r := get[traceResponse](t, h, "/api/explain?key="+long[1:]); r.Found {
		t.Errorf("a %d-byte key never written: found", len(long)-1)
	}
}

// TestClosedDB checks that a closed DB's endpoints answer 503.
func TestClosedDB(t *testing.T) {
	db, _ := treeDB(t)
	h := Handler(db, nil)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	checkRefusals(t, h, []refusal{
		{"GET", "/api/tree", "", http.StatusServiceUnavailable, "closed"},
		{"GET", "/api/explain?key=a", "", http.StatusServiceUnavailable, "closed"},
	})
}

// TestTreeIngested checks that /api/tree marks the table DB.Ingest added,
// and only it.
func TestTreeIngested(t *testing.T) {
	fs := vfs.NewMem()
	db, err := bloomkv.Open("db", &bloomkv.Options{FS: fs})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Put([]byte("a"), []byte("1"), nil); err != nil {
		t.Fatal(err)
	}
	if err := db.Flush(); err != nil {
		t.Fatal(err)
	}
	f, err := fs.Create("load.sst")
	if err != nil {
		t.Fatal(err)
	}
	w, err := sstable.NewWriter(f, sstable.WriterOptions{Filter: sstable.Bloom(10)})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Add(sstable.MakeInternalKey([]byte("z"), 0, sstable.KindSet), []byte("26")); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if err := db.Ingest([]string{"load.sst"}); err != nil {
		t.Fatal(err)
	}
	r := get[treeResponse](t, Handler(db, nil), "/api/tree")
	var marked []string
	tables := 0
	for _, l := range r.Levels {
		for _, tb := range l.Tables {
			tables++
			if tb.Ingested {
				marked = append(marked, tb.Smallest+".."+tb.Largest)
			}
		}
	}
	if tables != 2 || len(marked) != 1 || marked[0] != "z..z" {
		t.Errorf("%d tables, ingested ones %v; want 2, [z..z]", tables, marked)
	}
}
