package procstat

import "time"

// Usage is this process's CPU time and peak resident set so far.
type Usage struct {
	User, System time.Duration
	MaxRSS       int64 // bytes: the most resident memory the process has had
}

// CPU returns the user and system time together.
func (u Usage) CPU() time.Duration { return u.User + u.System }
