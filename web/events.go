package web

import (
	"sync"
	"time"

	"github.com/bloomkv/bloomkv"
)

// EventLog keeps a DB's most recent flushes and compactions for the tree
// page. Create it before opening the DB and make its Listener the DB's
// EventListener:
//
//	events := web.NewEventLog(0)
//	db, err := bloomkv.Open(dir, &bloomkv.Options{EventListener: events.Listener(nil)})
//	...
//	http.Handle("/debug/bloomkv/", http.StripPrefix("/debug/bloomkv", web.Handler(db, &web.Options{Events: events})))
//
// An EventLog is safe for concurrent use.
type EventLog struct {
	mu     sync.Mutex
	events []Event // the most recent, oldest first; at most capacity
	cap    int
	next   uint64 // the Seq of the next event
}

// DefaultEventLogSize is the number of events an EventLog keeps by
// default.
const DefaultEventLogSize = 200

// NewEventLog returns a log keeping the last capacity events, or
// DefaultEventLogSize for a capacity below 1.
func NewEventLog(capacity int) *EventLog {
	if capacity < 1 {
		capacity = DefaultEventLogSize
	}
	return &EventLog{cap: capacity, next: 1}
}

// Event is a finished flush or compaction.
type Event struct {
	// Seq numbers the log's events from 1, in the order they finished.
	Seq  uint64    `json:"seq"`
	Time time.Time `json:"time"`
	// Kind is "flush" or "compaction".
	Kind  string `json:"kind"`
	JobID int    `json:"job"`
	// Level and OutputLevel are a compaction's input and output levels; a
	// flush writes L0.
	Level       int          `json:"level"`
	OutputLevel int          `json:"outputLevel"`
	Inputs      []EventTable `json:"inputs"`
	Outputs     []EventTable `json:"outputs"`
	TrivialMove bool         `json:"trivialMove"`
	DurationMS  float64      `json:"durationMs"`
	// Err is why it failed, "" when it succeeded.
	Err string `json:"error,omitempty"`
}

// EventTable is a table an event read or wrote.
type EventTable struct {
	FileNum uint64 `json:"fileNum"`
	Level   int    `json:"level"`
	Size    uint64 `json:"size"`
}

// Listener returns an EventListener that records flushes and compactions
// in the log and passes every event on to next's callbacks; next may be
// nil.
func (l *EventLog) Listener(next *bloomkv.EventListener) *bloomkv.EventListener {
	if next == nil {
		next = &bloomkv.EventListener{}
	}
	el := *next
	el.FlushEnd = func(info bloomkv.FlushInfo) {
		e := Event{Kind: "flush", JobID: info.JobID, DurationMS: ms(info.Duration), Err: errString(info.Err)}
		if info.Output.FileNum != 0 {
			e.Outputs = []EventTable{eventTable(info.Output)}
		}
		l.add(e)
		if next.FlushEnd != nil {
			next.FlushEnd(info)
		}
	}
	el.CompactionEnd = func(info bloomkv.CompactionInfo) {
		e := Event{Kind: "compaction", JobID: info.JobID, Level: info.Level, OutputLevel: info.OutputLevel,
			TrivialMove: info.TrivialMove, DurationMS: ms(info.Duration), Err: errString(info.Err)}
		for _, t := range info.Inputs {
			e.Inputs = append(e.Inputs, eventTable(t))
		}
		for _, t := range info.Outputs {
			e.Outputs = append(e.Outputs, eventTable(t))
		}
		l.add(e)
		if next.CompactionEnd != nil {
			next.CompactionEnd(info)
		}
	}
	return &el
}

func eventTable(t bloomkv.TableInfo) EventTable {
	return EventTable{FileNum: t.FileNum, Level: t.Level, Size: t.Size}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func (l *EventLog) add(e Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e.Seq, e.Time = l.next, time.Now()
	l.next++
	if len(l.events) == l.cap {
		l.events = append(l.events[:0], l.events[1:]...)
	}
	l.events = append(l.events, e)
}

// Since returns the events kept whose Seq is above after, oldest first,
// and the Seq of the latest event (0 before any).
func (l *EventLog) Since(after uint64) ([]Event, uint64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []Event
	for _, e := range l.events {
		if e.Seq > after {
			out = append(out, e)
		}
	}
	return out, l.next - 1
}
