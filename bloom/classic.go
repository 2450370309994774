package bloom

import (
	"io"
	"math"
	"math/bits"
	"sync/atomic"
)

// Classic is the textbook Bloom filter: m bits and k probes per item at
// positions chosen by double hashing (see ClassicLocations). It answers
// "definitely absent" or "maybe present", and never forgets an added item.
//
// A Classic is safe for concurrent use: Add, TestAndAdd, Union and every
// query may run at once from any number of goroutines. Bits are set with
// atomic OR on 64-bit words and read with atomic loads, so no lock is taken.
//
// INVARIANT: bit i of the filter is bit 63−(i mod 64) of words[i/64]
// (most significant first), so the words written big-endian are the bitmap
// Redis's SETBIT and BITFIELD address; bits at i ≥ m are always zero.
type Classic struct {
	m     uint64
	k     int
	n     uint64 // the expected items it was sized for; 0 if sized by bits
	words []uint64
}

// NewClassic returns an empty classic filter sized for n items at
// false-positive rate p (see ClassicParams for the formulas). Invalid
// arguments return an *ArgumentError naming the argument.
func NewClassic(n int, p float64) (*Classic, error) {
	m, k, err := sizeFor(KindClassic, n, p, 0, platformMaxInt)
	if err != nil {
		return nil, err
	}
	f := newClassic(m, k)
	f.n = uint64(n)
	return f, nil
}

// NewClassicSize returns an empty classic filter of m bits and k probes.
// An m above MaxBits or too large for the platform (past about 2^34 bits
// on a 32-bit one), or a k outside [1, MaxProbes], returns an
// *ArgumentError naming it.
func NewClassicSize(m uint64, k int) (*Classic, error) {
	if err := checkSize(KindClassic, m, k, 0, platformMaxInt); err != nil {
		return nil, err
	}
	return newClassic(m, k), nil
}

// checkSize validates the size m and probes k of a classic or counting
// filter (kind says which: m counts bits or counters of counterBits bits)
// for a platform whose largest int is maxInt, so that newClassic and
// newCounting can convert its word count to an int.
func checkSize(kind Kind, m uint64, k, counterBits int, maxInt uint64) error {
	if m < 1 || m > MaxBits {
		return argError("m", m, "size must be in [1, %d]", uint64(MaxBits))
	}
	if k < 1 || k > MaxProbes {
		return argError("k", k, "probes must be in [1, %d]", MaxProbes)
	}
	return checkFits("m", m, payloadWords(kind, m, counterBits), maxInt)
}

// newClassic allocates a classic filter whose m and k checkSize accepted.
func newClassic(m uint64, k int) *Classic {
	return &Classic{m: m, k: k, words: alignedWords(int(payloadWords(KindClassic, m, 0)))}
}

func bitMask(i uint64) uint64 { return 1 << (63 - i%64) }

// Add inserts item.
func (f *Classic) Add(item []byte) { f.AddHash(Hash(item)) }

// AddHash inserts the item whose Hash is h.
func (f *Classic) AddHash(h uint64) {
	h1, h2 := h, remix(h)
	for range f.k {
		i := reduce(h1, f.m)
		w, mask := &f.words[i/64], bitMask(i)
		// Skip the locked OR when the bit is already set: it is the common
		// case in a filling filter, and a plain load does not contend.
		if atomic.LoadUint64(w)&mask == 0 {
			atomic.OrUint64(w, mask)
		}
		h1 += h2
	}
}

// MayContain reports whether item may have been added. False means it
// certainly was not; true is wrong with the filter's false-positive rate.
func (f *Classic) MayContain(item []byte) bool { return f.MayContainHash(Hash(item)) }

// MayContainHash is MayContain for the item whose Hash is h.
func (f *Classic) MayContainHash(h uint64) bool {
	// Locals, because every atomic load makes the compiler reload fields.
	words, m := f.words, f.m
	h1, h2 := h, remix(h)
	probes := f.k
	// Load the first two probes' words before branching on either: an absent
	// item usually fails at one of them, at a point the CPU cannot predict,
	// and the two cache misses overlap instead of following each other.
	if probes >= 2 {
		i0, i1 := reduce(h1, m), reduce(h1+h2, m)
		if ^atomic.LoadUint64(&words[i0/64])&bitMask(i0)|^atomic.LoadUint64(&words[i1/64])&bitMask(i1) != 0 {
			return false
		}
		h1 += 2 * h2
		probes -= 2
	}
	for range probes {
		i := reduce(h1, m)
		if atomic.LoadUint64(&words[i/64])&bitMask(i) == 0 {
			return false
		}
		h1 += h2
	}
	return true
}

// TestAndAdd inserts item and reports whether it may have been present
// before. Two concurrent TestAndAdd calls of the same new item may both
// report false; each call's answer is true to the bits it saw.
func (f *Classic) TestAndAdd(item []byte) bool { return f.TestAndAddHash(Hash(item)) }

// TestAndAddHash is TestAndAdd for the item whose Hash is h.
func (f *Classic) TestAndAddHash(h uint64) bool {
	h1, h2 := h, remix(h)
	present := true
	for range f.k {
		i := reduce(h1, f.m)
		mask := bitMask(i)
		if atomic.OrUint64(&f.words[i/64], mask)&mask == 0 {
			present = false
		}
		h1 += h2
	}
	return present
}

// Union adds every item of other to f. Both filters must have the same size
// and probes, else it returns ErrIncompatible and changes nothing.
func (f *Classic) Union(other *Classic) error {
	if f.m != other.m || f.k != other.k {
		return incompatible(f.m, f.k, other.m, other.k)
	}
	for i := range f.words {
		if w := atomic.LoadUint64(&other.words[i]); w != 0 {
			atomic.OrUint64(&f.words[i], w)
		}
	}
	return nil
}

// Bits returns m, the number of bits.
func (f *Classic) Bits() uint64 { return f.m }

// Probes returns k, the number of bits set per item.
func (f *Classic) Probes() int { return f.k }

// SizeBytes returns the memory the bits occupy.
func (f *Classic) SizeBytes() int { return len(f.words) * 8 }

// BitsSet returns the number of bits set (X).
func (f *Classic) BitsSet() uint64 { return popCount(f.words) }

// LoadFactor returns the fraction of bits set, X/m. After n distinct items
// it is expected near 1 − e^(−kn/m): about one half for a filter sized by
// ClassicParams holding its n items (exactly half at the unrounded optimal
// k), more once it holds more. The false-positive rate is its k-th power
// (EstimatedFalsePositiveRate).
func (f *Classic) LoadFactor() float64 { return float64(f.BitsSet()) / float64(f.m) }

// EstimatedCount estimates the number of distinct items added from the
// bits set (Swamidass and Baldi, 2007): n ≈ −(m/k)·ln(1 − X/m). It returns
// +Inf when every bit is set.
func (f *Classic) EstimatedCount() float64 {
	return -float64(f.m) / float64(f.k) * math.Log1p(-float64(f.BitsSet())/float64(f.m))
}

// EstimatedFalsePositiveRate is the chance that an item never added tests
// positive now: (X/m)^k for X bits set.
func (f *Classic) EstimatedFalsePositiveRate() float64 {
	return math.Pow(f.LoadFactor(), float64(f.k))
}

// AppendBitmap appends the filter's m bits to dst as ⌈m/8⌉ bytes, bit i at
// byte i/8 under mask 0x80>>(i mod 8) — the order of Redis bitmaps.
func (f *Classic) AppendBitmap(dst []byte) []byte {
	n := int((f.m + 7) / 8)
	for i := 0; n > 0; i++ {
		w := atomic.LoadUint64(&f.words[i])
		for shift := 56; shift >= 0 && n > 0; shift -= 8 {
			dst = append(dst, byte(w>>shift))
			n--
		}
	}
	return dst
}

// NewClassicFromBitmap returns a classic filter of m bits and k probes whose
// bits are bitmap, in the order AppendBitmap writes. A bitmap shorter than
// ⌈m/8⌉ bytes is zero-extended (Redis returns a bitmap only as long as its
// highest set bit); a longer one, or one with bits set at or past m, is
// refused.
func NewClassicFromBitmap(m uint64, k int, bitmap []byte) (*Classic, error) {
	if err := checkSize(KindClassic, m, k, 0, platformMaxInt); err != nil {
		return nil, err
	}
	if uint64(len(bitmap)) > (m+7)/8 {
		return nil, argError("bitmap", len(bitmap), "%d bytes, longer than the %d bytes of %d bits", len(bitmap), (m+7)/8, m)
	}
	f := newClassic(m, k)
	for i, b := range bitmap {
		f.words[i/8] |= uint64(b) << (56 - 8*(i%8))
	}
	if err := checkPadding(f.words, m); err != nil {
		return nil, argError("bitmap", len(bitmap), "%v", err)
	}
	return f, nil
}

// checkPadding verifies that no bit at or beyond m is set.
func checkPadding(words []uint64, m uint64) error {
	if r := m % 64; r != 0 && words[len(words)-1]<<r != 0 {
		return corruptf("bits set past the filter's %d bits", m)
	}
	return nil
}

// MarshalBinary encodes the filter in the format the package doc draws.
// Items whose Add returned before the call are in the encoding.
func (f *Classic) MarshalBinary() ([]byte, error) { return marshal(f.header(), f.words), nil }

// WriteTo writes the encoding MarshalBinary returns to w.
func (f *Classic) WriteTo(w io.Writer) (int64, error) { return encode(w, f.header(), f.words) }

// UnmarshalBinary replaces f with the filter encoded in data. Damaged,
// truncated or other-kind input returns an error wrapping ErrCorrupt.
func (f *Classic) UnmarshalBinary(data []byte) error {
	h, words, err := decode(data, KindClassic)
	return f.set(h, words, err)
}

// ReadFrom replaces f with the filter encoded at the start of r, reading no
// byte past it. Errors are those of UnmarshalBinary, or r's.
func (f *Classic) ReadFrom(r io.Reader) (int64, error) {
	h, words, n, err := readFrom(r, KindClassic)
	return n, f.set(h, words, err)
}

func (f *Classic) header() header { return header{kind: KindClassic, k: f.k, m: f.m, n: f.n} }

func (f *Classic) set(h header, words []uint64, err error) error {
	if err == nil {
		err = checkPadding(words, h.m)
	}
	if err != nil {
		return err
	}
	*f = Classic{m: h.m, k: h.k, n: h.n, words: words}
	return nil
}

func popCount(words []uint64) uint64 {
	var n int
	for i := range words {
		n += bits.OnesCount64(atomic.LoadUint64(&words[i]))
	}
	return uint64(n)
}
