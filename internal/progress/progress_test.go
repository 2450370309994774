package progress

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// syncBuffer is a bytes.Buffer safe for the spinner's goroutine.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestBar draws a bar and a spinner into a buffer and checks that each
// shows its label, the bar its count (it is cleared at the end), and that a nil Bar (bars off) is
// safe to use.
func TestBar(t *testing.T) {
	var out syncBuffer
	b := newOn(&out, "fillrandom", 1000)
	b.Set(500)
	time.Sleep(150 * time.Millisecond) // past the throttle
	b.Set(1000)
	b.Done()
	if s := out.String(); !strings.Contains(s, "fillrandom") || !strings.Contains(s, "500/1000") {
		t.Errorf("bar drew %q", s)
	}
	var spun syncBuffer
	sp := newOn(&spun, "settle", 0)
	time.Sleep(450 * time.Millisecond)
	sp.Done()
	if s := spun.String(); !strings.Contains(s, "settle") {
		t.Errorf("spinner drew %q", s)
	}
	var none *Bar
	none.Set(1)
	none.Done()
	if none.Func() != nil {
		t.Error("a nil Bar's Func is not nil")
	}
}
