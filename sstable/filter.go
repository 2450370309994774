package sstable

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// FilterFamily is the algorithm of a table's filter. Its value is stored in
// the table's properties (bloomkv.filter.family), and the reader picks the
// decoder by it, so tables of different families coexist in one DB and
// across reopens. A table written before families were recorded holds a
// Bloom filter.
type FilterFamily uint8

// The filter families.
const (
	// NoFilter: the table has no filter; every lookup in its key range
	// reads a data block.
	NoFilter FilterFamily = 0
	// BloomFamily is the cache-line-blocked Bloom filter (bloom.Blocked);
	// FilterSpec.Bits is its bits per key, in [1, bloom.MaxBitsPerKey].
	BloomFamily FilterFamily = 1
	// FuseFamily is the binary fuse filter (package fuse); FilterSpec.Bits
	// is its fingerprint width, an integer in [fuse.MinBits,
	// fuse.MaxBits]: a false-positive rate of 2^-Bits at about 1.125·Bits
	// bits per key.
	FuseFamily FilterFamily = 2
	// RibbonFamily is the Standard Ribbon filter (package ribbon);
	// FilterSpec.Bits is its result width, an integer in [ribbon.MinBits,
	// ribbon.MaxBits]: a false-positive rate of 2^-Bits at 1.03·Bits to
	// 1.05·Bits bits per key from 10^4 to 10^6 keys.
	RibbonFamily FilterFamily = 3
)

// String returns the family's name as tools print it: "none", "bloom",
// "fuse", "ribbon".
func (f FilterFamily) String() string {
	if f == NoFilter {
		return "none"
	}
	if c := codecOf(f); c != nil {
		return c.name()
	}
	return fmt.Sprintf("family(%d)", uint8(f))
}

// ParseFilterFamily returns the family named s ("none", "bloom", "fuse",
// "ribbon").
func ParseFilterFamily(s string) (FilterFamily, error) {
	if s == "none" {
		return NoFilter, nil
	}
	for f, c := range filterCodecs {
		if c != nil && c.name() == s {
			return FilterFamily(f), nil
		}
	}
	return 0, fmt.Errorf("unknown filter family %q (want none, bloom, fuse or ribbon)", s)
}

// FilterSpec chooses a table's filter: its family and the family's one
// parameter, Bits — bits per key for Bloom, the fingerprint width for fuse,
// the result width for ribbon.
// The zero value is no filter.
type FilterSpec struct {
	Family FilterFamily
	Bits   float64
}

// Bloom returns the spec of a Bloom filter of bitsPerKey bits per key.
func Bloom(bitsPerKey float64) FilterSpec { return FilterSpec{Family: BloomFamily, Bits: bitsPerKey} }

// Fuse returns the spec of a binary fuse filter with fingerprints of bits
// bits.
func Fuse(bits int) FilterSpec { return FilterSpec{Family: FuseFamily, Bits: float64(bits)} }

// Ribbon returns the spec of a Standard Ribbon filter with results of bits
// bits.
func Ribbon(bits int) FilterSpec { return FilterSpec{Family: RibbonFamily, Bits: float64(bits)} }

// ParseFilterSpec parses a spec as tools take it: "none", or a family and
// its parameter, "bloom:10", "fuse:8", "ribbon:8". The spec is checked.
func ParseFilterSpec(s string) (FilterSpec, error) {
	if s == "none" {
		return FilterSpec{}, nil
	}
	name, param, ok := strings.Cut(s, ":")
	if !ok {
		return FilterSpec{}, fmt.Errorf("filter %q: want none, bloom:BITS_PER_KEY, fuse:FINGERPRINT_BITS or ribbon:RESULT_BITS", s)
	}
	family, err := ParseFilterFamily(name)
	if err != nil {
		return FilterSpec{}, err
	}
	bits, err := strconv.ParseFloat(param, 64)
	if err != nil {
		return FilterSpec{}, fmt.Errorf("filter %q: parameter %q is not a number", s, param)
	}
	spec := FilterSpec{Family: family, Bits: bits}
	if err := spec.Check(); err != nil {
		return FilterSpec{}, fmt.Errorf("filter %q: %w", s, err)
	}
	return spec, nil
}

// Check reports whether the spec can be built: a known family and a
// parameter in its range.
func (s FilterSpec) Check() error {
	if s.Family == NoFilter {
		if s.Bits != 0 {
			return fmt.Errorf("no filter, but Bits = %v", s.Bits)
		}
		return nil
	}
	c := codecOf(s.Family)
	if c == nil {
		return fmt.Errorf("unknown filter family %d", uint8(s.Family))
	}
	return c.check(s.Bits)
}

// String renders the spec as tools print it, e.g. "bloom 10 bits/key",
// "fuse 8-bit", "ribbon 8-bit".
func (s FilterSpec) String() string {
	switch s.Family {
	case NoFilter:
		return "none"
	case FuseFamily:
		return fmt.Sprintf("fuse %g-bit", s.Bits)
	case RibbonFamily:
		return fmt.Sprintf("ribbon %g-bit", s.Bits)
	case BloomFamily:
		return fmt.Sprintf("bloom %g bits/key", s.Bits)
	}
	return fmt.Sprintf("%v %g", s.Family, s.Bits)
}

// ExpectedFalsePositiveRate is the false-positive rate a filter of the spec
// has, from its family's formula; 1 for no filter.
func (s FilterSpec) ExpectedFalsePositiveRate() float64 {
	if c := codecOf(s.Family); c != nil {
		return c.falsePositiveRate(s.Bits)
	}
	return 1
}

// BitsPerKey is the memory a filter of the spec over n distinct keys
// takes, in bits per key, from its family's size formula (a fuse or
// Ribbon filter costs more per key for small n); 0 for no filter.
func (s FilterSpec) BitsPerKey(n int) float64 {
	if c := codecOf(s.Family); c != nil && n > 0 {
		return c.bitsPerKey(s.Bits, n)
	}
	return 0
}

// StandIn returns the filter a table gets in place of s where s's family
// cannot be built over the table's keys, or costs more than this stand-in
// (see errFilterFallback): for fuse and ribbon, the Bloom filter of the
// same false-positive rate with the fewest bits per key, to a tenth
// (within bloom.MaxBitsPerKey, which reaches 2^−32 only approximately).
// It is s itself for a family that never falls back.
func (s FilterSpec) StandIn() FilterSpec {
	if (s.Family != FuseFamily && s.Family != RibbonFamily) || s.Check() != nil {
		return s
	}
	return Bloom(rateStandInBits(int(s.Bits)))
}

// Filter is a table's decoded filter, held in memory for the table's life.
// MayContainHash is called on every lookup the table's key range does not
// rule out: a false answer is never wrong (the filter holds the hash of
// every distinct user key in the table); a true one is wrong at the
// filter's false-positive rate. *bloom.Blocked, *fuse.Filter and
// *ribbon.Filter are the built-in ones.
type Filter interface {
	MayContainHash(h uint64) bool
	Keys() uint64                       // distinct hashes the filter holds
	SizeBytes() int                     // bytes of the filter's payload
	BitsPerKey() float64                // payload bits per key
	ExpectedFalsePositiveRate() float64 // from the filter's formula
}

// A filterCodec builds and decodes the filters of one family. A family is
// one file: its codec, and its entry in filterCodecs.
type filterCodec interface {
	name() string
	// check reports whether bits is a valid parameter of the family.
	check(bits float64) error
	// build returns the encoded filter over hashes, the hashes of the
	// table's distinct user keys (at least one). errFilterFallback asks
	// the writer for a Bloom filter of the same false-positive rate
	// instead.
	build(hashes []uint64, bits float64) (encoded []byte, f Filter, err error)
	// decode decodes an encoded filter, its payload in memory from alloc
	// (pinned by the reader for the table's life).
	decode(block []byte, alloc func(words int) []uint64) (Filter, error)
	// falsePositiveRate and bitsPerKey are the family's formulas, for
	// planning a filter without building it.
	falsePositiveRate(bits float64) float64
	bitsPerKey(bits float64, n int) float64
}

// filterCodecs are the known families, indexed by FilterFamily.
var filterCodecs = [...]filterCodec{
	BloomFamily:  bloomCodec{},
	FuseFamily:   fuseCodec{},
	RibbonFamily: ribbonCodec{},
}

// codecOf returns family f's codec, nil if there is none.
func codecOf(f FilterFamily) filterCodec {
	if int(f) < len(filterCodecs) {
		return filterCodecs[f]
	}
	return nil
}

// errFilterFallback is a codec's answer when it cannot build its filter
// over a set (a fuse or Ribbon filter's construction can fail; tiny sets
// cost it more than a Bloom filter does): the writer builds a Bloom filter of the
// same false-positive rate instead, and records that family.
var errFilterFallback = errors.New("sstable: filter falls back to bloom")

// buildFilter builds the filter of spec over hashes, falling back to a
// Bloom filter of the same false-positive rate where spec's family cannot
// be built. It returns the family actually built.
func buildFilter(spec FilterSpec, hashes []uint64) (FilterFamily, []byte, Filter, error) {
	c := codecOf(spec.Family)
	encoded, f, err := c.build(hashes, spec.Bits)
	if !errors.Is(err, errFilterFallback) {
		return spec.Family, encoded, f, err
	}
	standIn := spec.StandIn()
	encoded, f, err = bloomCodec{}.build(hashes, standIn.Bits)
	return BloomFamily, encoded, f, err
}
