// Package progress shows the benchmarks' long phases on standard error
// with github.com/schollz/progressbar/v3: a bar with a count, the rate and
// the time left for a phase of known length, a spinner with the time spent
// for one of unknown length (a flush and compactions). Bars are drawn only
// when standard error is a terminal, so that a run redirected to a file or
// a pipe, and the tests, get no control sequences.
package progress

import (
	"io"
	"os"
	"time"

	"github.com/schollz/progressbar/v3"
)

// Enabled reports whether bars are drawn: standard error is a terminal.
var Enabled = func() bool {
	fi, err := os.Stderr.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}()

// Bar is one phase's progress. The zero of *Bar (nil) draws nothing, so a
// caller need not check Enabled.
type Bar struct {
	bar *progressbar.ProgressBar
}

// New starts the bar of a phase called label of total steps (0 or less:
// unknown, a spinner). It returns nil, which draws nothing, when bars are
// off.
func New(label string, total int) *Bar {
	if !Enabled {
		return nil
	}
	return newOn(os.Stderr, label, total)
}

func newOn(w io.Writer, label string, total int) *Bar {
	opts := []progressbar.Option{
		progressbar.OptionSetWriter(w),
		progressbar.OptionSetDescription(label),
		progressbar.OptionSetWidth(30),
		progressbar.OptionSetElapsedTime(true),
		progressbar.OptionThrottle(100 * time.Millisecond),
		progressbar.OptionClearOnFinish(),
	}
	if total > 0 {
		opts = append(opts, progressbar.OptionShowCount(), progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("ops"), progressbar.OptionSetPredictTime(true))
		return &Bar{bar: progressbar.NewOptions64(int64(total), opts...)}
	}
	// A spinner (max −1), which progressbar turns on a ticker of its own;
	// drawn blank first, so that the ticker finds it started.
	opts = append(opts, progressbar.OptionSpinnerType(14), progressbar.OptionSetRenderBlankState(true))
	return &Bar{bar: progressbar.NewOptions64(-1, opts...)}
}

// Set moves the bar to done steps.
func (b *Bar) Set(done int) {
	if b != nil {
		_ = b.bar.Set64(int64(done))
	}
}

// Func returns Set as a function, nil when b is nil: a workload's
// progress callback.
func (b *Bar) Func() func(int) {
	if b == nil {
		return nil
	}
	return b.Set
}

// Done finishes the bar and clears its line.
func (b *Bar) Done() {
	if b != nil {
		_ = b.bar.Finish()
		_ = b.bar.Clear()
	}
}
