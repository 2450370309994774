package base

import (
	"errors"
	"fmt"
)

// ErrCorruption is wrapped by every error that reports damaged on-disk data:
// a bad checksum, an impossible length, a truncated block. Test for it with
// errors.Is. The root package re-exports it as bloomkv.ErrCorruption.
var ErrCorruption = errors.New("bloomkv: corruption")

// CorruptionError locates damaged data: the file, the byte offset where the
// damaged unit (chunk, block, footer) starts, and what was wrong with it.
type CorruptionError struct {
	File   string
	Offset int64
	Reason string
}

// Corruptf returns a *CorruptionError for file at offset with a formatted
// reason. The result wraps ErrCorruption.
func Corruptf(file string, offset int64, format string, args ...any) error {
	return &CorruptionError{File: file, Offset: offset, Reason: fmt.Sprintf(format, args...)}
}

func (e *CorruptionError) Error() string {
	return fmt.Sprintf("bloomkv: corruption in %s at offset %d: %s", e.File, e.Offset, e.Reason)
}

// Unwrap makes errors.Is(err, ErrCorruption) true.
func (e *CorruptionError) Unwrap() error { return ErrCorruption }
