package bloom

import (
	"errors"
	"fmt"
)

// ErrCorrupt is wrapped by every error that decoding a serialized filter
// returns: truncated input, a bad checksum, an unknown version, parameters
// that do not fit the payload, a filter of another kind than asked for, or
// one larger than this platform can hold (see MaxBits).
var ErrCorrupt = errors.New("bloom: corrupt filter encoding")

// ErrIncompatible is returned by Union when the two filters differ in size
// or number of probes, so that their bits do not mean the same items.
var ErrIncompatible = errors.New("bloom: incompatible filters")

// ErrNotPresent is returned by (*Counting).Remove for an item the filter says
// was never added: decrementing its counters would erase other items.
var ErrNotPresent = errors.New("bloom: item not in filter")

// ArgumentError reports a parameter that cannot build a filter: which
// argument, the value given, and why it is refused.
type ArgumentError struct {
	Arg    string // the parameter's name, e.g. "p"
	Value  any    // the value given
	Reason string // why it is refused
}

func (e *ArgumentError) Error() string {
	return fmt.Sprintf("bloom: invalid argument %s = %v: %s", e.Arg, e.Value, e.Reason)
}

func argError(arg string, value any, format string, args ...any) error {
	return &ArgumentError{Arg: arg, Value: value, Reason: fmt.Sprintf(format, args...)}
}

func corruptf(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

func incompatible(m1 uint64, k1 int, m2 uint64, k2 int) error {
	return fmt.Errorf("%w: %d bits and %d probes vs %d bits and %d probes", ErrIncompatible, m1, k1, m2, k2)
}
