package web

import (
	"encoding/hex"
	"fmt"
	"net/http"
	"strconv"
	"unicode/utf8"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/sstable"
)

// treeTable is one table as the tree page draws it.
type treeTable struct {
	FileNum  uint64 `json:"fileNum"`
	Name     string `json:"name"` // "L2/000123.sst", as Explain's steps name it
	Size     uint64 `json:"size"`
	Entries  uint64 `json:"entries"`
	Smallest string `json:"smallest"` // displayKey of the bounds
	Largest  string `json:"largest"`
	// Filter is the filter's spec as tools print it ("bloom 10 bits/key");
	// BitsPerKey its memory per key; PredictedFPR its family's formula.
	Filter       string  `json:"filter"`
	BitsPerKey   float64 `json:"bitsPerKey"`
	PredictedFPR float64 `json:"predictedFPR"`
	// Ingested marks a table DB.Ingest added (LiveTable.Ingested).
	Ingested bool `json:"ingested"`
}

// treeLevel is one level: its tables, size, target and score, and what
// lookups did there (bloomkv.LevelMetrics).
type treeLevel struct {
	Level      int         `json:"level"`
	Tables     []treeTable `json:"tables"`
	Bytes      uint64      `json:"bytes"`
	TargetSize uint64      `json:"targetSize"`
	Score      float64     `json:"score"`
	BitsPerKey float64     `json:"bitsPerKey"`

	TableProbes     uint64 `json:"tableProbes"`
	FilterChecks    uint64 `json:"filterChecks"`
	FilterNegatives uint64 `json:"filterNegatives"`
	FilterPositives uint64 `json:"filterPositives"`
	TruePositives   uint64 `json:"truePositives"`
	FalsePositives  uint64 `json:"falsePositives"`
	BlocksFromFile  uint64 `json:"blocksFromFile"`
	BlocksFromCache uint64 `json:"blocksFromCache"`
	// AbsentChecks are the filter checks of keys the table lacked, the
	// denominator of MeasuredFPR; PredictedFPR is the level's tables'
	// formula rates weighted by their sizes (0 with no filtered table).
	AbsentChecks uint64  `json:"absentChecks"`
	MeasuredFPR  float64 `json:"measuredFPR"`
	PredictedFPR float64 `json:"predictedFPR"`
}

// treeBlob is one blob file as the tree page draws it.
type treeBlob struct {
	FileNum   uint64  `json:"fileNum"`
	Name      string  `json:"name"` // "000123.blob", as Explain's steps name it
	Size      uint64  `json:"size"`
	LiveBytes uint64  `json:"liveBytes"`
	DeadShare float64 `json:"deadShare"`
}

type treeResponse struct {
	Levels                []treeLevel `json:"levels"`
	Blobs                 []treeBlob  `json:"blobs"`
	BaseLevel             int         `json:"baseLevel"`
	Gets                  uint64      `json:"gets"`
	Writes                uint64      `json:"writes"`
	Flushes               uint64      `json:"flushes"`
	Compactions           uint64      `json:"compactions"`
	CompactionsInProgress int         `json:"compactionsInProgress"`
	MemtableBytes         int64       `json:"memtableBytes"`
	ImmutableMemtables    int         `json:"immutableMemtables"`
	FilterMemory          uint64      `json:"filterMemory"`
	WriteAmplification    float64     `json:"writeAmplification"`
	// EventsLogged says whether the handler has an EventLog; Events are its
	// events after the request's after, and EventSeq the latest's Seq.
	EventsLogged bool    `json:"eventsLogged"`
	Events       []Event `json:"events"`
	EventSeq     uint64  `json:"eventSeq"`
}

func (s *server) tree(r *http.Request) (any, error) {
	var after uint64
	if a := r.URL.Query().Get("after"); a != "" {
		var err error
		if after, err = strconv.ParseUint(a, 10, 64); err != nil {
			return nil, badRequest("after = %q: want an event sequence number", a)
		}
	}
	tables, err := s.db.Tables()
	if err != nil {
		return nil, err
	}
	blobs, err := s.db.BlobFiles()
	if err != nil {
		return nil, err
	}
	m := s.db.Metrics()
	resp := &treeResponse{BaseLevel: m.BaseLevel, Gets: m.Gets, Writes: m.Writes, Flushes: m.Flushes,
		Compactions: m.Compactions, CompactionsInProgress: m.CompactionsInProgress, MemtableBytes: m.MemtableBytes,
		ImmutableMemtables: m.ImmutableMemtables, FilterMemory: m.FilterMemory, WriteAmplification: m.WriteAmplification(),
		Levels: make([]treeLevel, len(m.Levels)), Blobs: []treeBlob{}}
	for _, b := range blobs {
		resp.Blobs = append(resp.Blobs, treeBlob{FileNum: b.FileNum, Name: fmt.Sprintf("%06d.blob", b.FileNum),
			Size: b.Size, LiveBytes: b.LiveBytes, DeadShare: b.DeadShare()})
	}
	for i, l := range m.Levels {
		resp.Levels[i] = treeLevel{Level: i, Bytes: l.Bytes, TargetSize: l.TargetSize, Score: l.Score,
			BitsPerKey: l.FilterBitsPerKey, TableProbes: l.TableProbes, FilterChecks: l.FilterChecks,
			FilterNegatives: l.FilterNegatives, FilterPositives: l.FilterPositives, TruePositives: l.TruePositives,
			FalsePositives: l.FalsePositives(), BlocksFromFile: l.BlocksFromFile, BlocksFromCache: l.BlocksFromCache,
			AbsentChecks: l.FilterNegatives + l.FalsePositives(), MeasuredFPR: l.FalsePositiveRate(), Tables: []treeTable{}}
	}
	// The tables and the metrics are two reads: a flush between them may
	// leave a level's table count in Metrics one off its list here, which
	// the next poll settles. The list is what the page draws.
	var weighted, filtered [len(m.Levels)]float64
	for _, t := range tables {
		rate := t.Filter.ExpectedFalsePositiveRate()
		resp.Levels[t.Level].Tables = append(resp.Levels[t.Level].Tables, treeTable{
			FileNum: t.FileNum, Name: tableName(t.Level, t.FileNum), Size: t.Size, Entries: t.Entries,
			Smallest: displayKey(t.Smallest), Largest: displayKey(t.Largest),
			Filter: filterName(t.Filter), BitsPerKey: t.FilterBitsPerKey, PredictedFPR: rate, Ingested: t.Ingested,
		})
		if t.Filter.Family != sstable.NoFilter {
			weighted[t.Level] += float64(t.Size) * rate
			filtered[t.Level] += float64(t.Size)
		}
	}
	for i := range resp.Levels {
		if filtered[i] > 0 {
			resp.Levels[i].PredictedFPR = weighted[i] / filtered[i]
		}
	}
	if s.events != nil {
		resp.EventsLogged = true
		resp.Events, resp.EventSeq = s.events.Since(after)
	}
	if resp.Events == nil {
		resp.Events = []Event{}
	}
	return resp, nil
}

// filterName names a table's filter as the page shows it: "bloom 10.4
// bits/key", "fuse 8-bit", "none".
func filterName(f bloomkv.FilterSpec) string {
	if f.Family == sstable.BloomFamily {
		return fmt.Sprintf("bloom %.1f bits/key", f.Bits)
	}
	return f.String()
}

// tableName names a table as TraceStep.Place does, so the page can match a
// trace's steps to the tables it draws.
func tableName(level int, fileNum uint64) string {
	return (&bloomkv.TraceStep{Kind: bloomkv.TableStep, Level: level, FileNum: fileNum}).Place()
}

// displayKey renders a key for the page: as it is when it is printable
// UTF-8, else as a Go-quoted string.
func displayKey(k []byte) string {
	if utf8.Valid(k) {
		s := string(k)
		if strconv.Quote(s) == `"`+s+`"` {
			return s
		}
	}
	return strconv.Quote(string(k))
}

// traceStep is one step of an explained lookup (bloomkv.TraceStep).
type traceStep struct {
	Kind     string `json:"kind"` // "memtable", "table", "blob", "level"
	Place    string `json:"place"`
	Level    int    `json:"level"`
	FileNum  uint64 `json:"fileNum,omitempty"`
	Tables   int    `json:"tables,omitempty"` // a level step's tables, none holding the key
	Smallest string `json:"smallest,omitempty"`
	Largest  string `json:"largest,omitempty"`
	InRange  bool   `json:"inRange"`
	// Filter is the verdict: "-" (not asked), "none", "absent", "maybe".
	Filter          string `json:"filter"`
	BlocksFromCache int    `json:"blocksFromCache"`
	BlocksFromFile  int    `json:"blocksFromFile"`
	BytesRead       int64  `json:"bytesRead"`
	Found           bool   `json:"found"`
	Deleted         bool   `json:"deleted"`
	FalsePositive   bool   `json:"falsePositive"`
	Err             string `json:"error,omitempty"`
}

type traceResponse struct {
	Key     string      `json:"key"`
	SeqNum  uint64      `json:"seqNum"`
	Steps   []traceStep `json:"steps"`
	Found   bool        `json:"found"`
	Deleted bool        `json:"deleted"`
	// Value is the found value's first MaxKeyBytes bytes, displayed as
	// keys are; ValueBytes its length.
	Value      string `json:"value"`
	ValueBytes int    `json:"valueBytes"`
	Source     string `json:"source"`
	Summary    string `json:"summary"`
	Error      string `json:"error,omitempty"`
}

func (s *server) explain(r *http.Request) (any, error) {
	q := r.URL.Query()
	if !q.Has("key") {
		return nil, badRequest("key: missing")
	}
	key := []byte(q.Get("key"))
	if q.Get("hex") == "1" {
		var err error
		if key, err = hex.DecodeString(string(key)); err != nil {
			return nil, badRequest("key %q is not hexadecimal: give pairs of the digits 0-9 and a-f, or uncheck hex", q.Get("key"))
		}
	}
	if len(key) > MaxKeyBytes {
		return nil, badRequest("key: %d bytes, more than the %d allowed", len(key), MaxKeyBytes)
	}
	t, err := s.db.Explain(key)
	if t == nil {
		return nil, err
	}
	resp := &traceResponse{Key: displayKey(t.Key), SeqNum: t.SeqNum, Found: t.Found, Deleted: t.Deleted,
		ValueBytes: len(t.Value), Value: displayKey(t.Value[:min(len(t.Value), MaxKeyBytes)]), Source: t.Source,
		Summary: t.Summary(), Error: errString(err), Steps: []traceStep{}}
	for i := range t.Steps {
		st := &t.Steps[i]
		out := traceStep{Place: st.Place(), Level: st.Level, FileNum: st.FileNum, Tables: st.Tables, InRange: st.InRange,
			Filter: st.Filter.String(), BlocksFromCache: st.BlocksFromCache, BlocksFromFile: st.BlocksFromFile,
			BytesRead: st.BytesRead, Found: st.Found, Deleted: st.Deleted, FalsePositive: st.FalsePositive(),
			Err: errString(st.Err)}
		switch st.Kind {
		case bloomkv.MemtableStep:
			out.Kind = "memtable"
		case bloomkv.TableStep:
			out.Kind = "table"
			out.Smallest, out.Largest = displayKey(st.Smallest), displayKey(st.Largest)
		case bloomkv.BlobStep:
			out.Kind = "blob"
		default:
			out.Kind = "level"
		}
		resp.Steps = append(resp.Steps, out)
	}
	return resp, nil
}
