package fuse

import (
	"errors"
	"fmt"
)

// ErrCorruption is wrapped by every error that decoding a serialized filter
// returns because of the bytes themselves: truncated input, a bad checksum,
// an unknown version or kind, a non-zero reserved byte or padding bit, or
// parameters that do not describe a filter or do not fit the payload. The
// message says what is wrong and, where it is one place, at which byte
// offset of the serialized filter.
var ErrCorruption = errors.New("fuse: corrupt filter encoding")

// ErrEmpty is returned by Build for an empty set of hashes: a binary fuse
// filter of no keys does not exist. A table without keys needs no filter
// (every lookup is a miss), or its writer falls back to a Bloom filter.
// MarshalBinary and AppendBinary return it for a zero Filter.
var ErrEmpty = errors.New("fuse: no keys")

// ErrBuild is wrapped by the error Build returns when the construction
// fails after all the attempts the library makes (each with a new seed).
// With duplicates removed that is far less likely than a hardware fault,
// but it is not impossible by construction; callers fall back to a Bloom
// filter.
var ErrBuild = errors.New("fuse: construction failed")

// ArgumentError reports a parameter that cannot build or decode a filter:
// which argument, the value given, and why it is refused.
type ArgumentError struct {
	Arg    string // the parameter's name, e.g. "bits"
	Value  any    // the value given
	Reason string // why it is refused
}

func (e *ArgumentError) Error() string {
	return fmt.Sprintf("fuse: invalid argument %s = %v: %s", e.Arg, e.Value, e.Reason)
}

func argError(arg string, value any, format string, args ...any) error {
	return &ArgumentError{Arg: arg, Value: value, Reason: fmt.Sprintf(format, args...)}
}
