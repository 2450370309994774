package rangefilter

import (
	"errors"
	"fmt"
)

// ErrCorrupt is wrapped by every error that decoding a serialized filter
// returns because of the bytes themselves: truncated input, a bad checksum,
// an unknown version, a non-zero reserved byte or padding bit, or fields
// that do not describe a filter or do not fit the input. The message says
// what is wrong and, where it is one place, at which byte offset of the
// serialized filter.
var ErrCorrupt = errors.New("rangefilter: corrupt filter encoding")

// ErrEmpty is returned by (*Builder).Finish when no key was added: a table
// without keys needs no filter, since every range is empty in it.
var ErrEmpty = errors.New("rangefilter: no keys")

// ArgumentError reports a parameter or input that cannot build a filter:
// which argument, the value given, and why it is refused.
type ArgumentError struct {
	Arg    string // the parameter's name, e.g. "bitsPerKey"
	Value  any    // the value given
	Reason string // why it is refused
}

func (e *ArgumentError) Error() string {
	return fmt.Sprintf("rangefilter: invalid argument %s = %v: %s", e.Arg, e.Value, e.Reason)
}

func argError(arg string, value any, format string, args ...any) error {
	return &ArgumentError{Arg: arg, Value: value, Reason: fmt.Sprintf(format, args...)}
}

// corruptAt is the error for a damaged encoding whose fault lies at byte
// offset off of the serialized filter.
func corruptAt(off uint64, format string, args ...any) error {
	return fmt.Errorf("%w: at byte %d: %s", ErrCorrupt, off, fmt.Sprintf(format, args...))
}

// corruptf is the error for a damaged encoding whose fault has no one place.
func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}
