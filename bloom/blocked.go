package bloom

import (
	"io"
	"math"
	"sync/atomic"
	"unsafe"
)

// A blocked filter's block: one 64-byte cache line.
const (
	blockBits  = 512
	blockWords = blockBits / 64
	// probeBits is the width of one probe's bit field: log2(blockBits).
	probeBits = 9
	// probesPerHash is how many probe fields one 64-bit hash supplies.
	probesPerHash = 64 / probeBits
)

// Blocked is a cache-line-blocked Bloom filter (Putze, Sanders and Singler,
// 2007): an item's hash picks one 512-bit block, and all k probes of the
// item fall inside it, so a lookup touches one cache line — one memory
// access where a classic filter makes up to k. The price is a slightly
// higher false-positive rate at the same memory, because blocks fill
// unevenly; BlockedFalsePositiveRate gives it, and BlockedProbes the k
// that minimizes it.
//
// The block is chosen from the high bits of the hash (by reduce), and the
// k probe positions are consecutive 9-bit fields of remix(hash), and past
// seven probes of remix(remix(hash)) and so on (see probeSeq). Fields of a remixed hash are independent of each
// other and of the block choice; double hashing inside a block is not (it
// measures about 1.13% at 10 bits/key where the formula predicts 0.957%).
//
// A table whose filter family is Bloom carries a Blocked filter over its
// user keys. A Blocked is
// safe for concurrent use in the same way as a Classic.
//
// INVARIANT: blocks is aligned to 64 bytes and holds numBlocks·8 words;
// block b is blocks[8b : 8b+8].
type Blocked struct {
	blocks    []uint64
	numBlocks uint64
	k         int
	keys      atomic.Uint64 // items added, counted with repeats
}

// NewBlocked returns an empty blocked filter sized for n items at
// bitsPerKey bits each, with the probe count BlockedProbes(bitsPerKey).
//
// An n below 0, a bitsPerKey outside [1, MaxBitsPerKey], or a filter above
// MaxBits or too large for the platform (past about 2^34 bits on a 32-bit
// one) returns an *ArgumentError naming the argument.
func NewBlocked(n int, bitsPerKey float64) (*Blocked, error) {
	numBlocks, err := blockedSize(n, bitsPerKey, platformMaxInt)
	if err != nil {
		return nil, err
	}
	return &Blocked{
		blocks:    alignedWords(int(numBlocks * blockWords)),
		numBlocks: numBlocks,
		k:         BlockedProbes(bitsPerKey),
	}, nil
}

// blockedSize returns the number of blocks of a blocked filter for n items
// at bitsPerKey bits each, on a platform whose largest int is maxInt, so
// that NewBlocked can convert its word count to an int.
func blockedSize(n int, bitsPerKey float64, maxInt uint64) (uint64, error) {
	if n < 0 {
		return 0, argError("n", n, "expected items must not be negative")
	}
	if err := CheckBitsPerKey(bitsPerKey); err != nil {
		return 0, err
	}
	// At most 2^63 items of 64 bits need 2^60 blocks: the float64 converts
	// to a uint64 without overflow.
	numBlocks := max(1, uint64(math.Ceil(float64(n)*bitsPerKey/blockBits)))
	if numBlocks > MaxBits/blockBits {
		return 0, argError("n", n, "at %v bits/key the filter needs more than the maximum %d bits", bitsPerKey, uint64(MaxBits))
	}
	if err := checkFits("n", n, numBlocks*blockWords, maxInt); err != nil {
		return 0, err
	}
	return numBlocks, nil
}

// CheckBitsPerKey returns an *ArgumentError for a bits per key no blocked
// filter can have: NaN, or outside [1, MaxBitsPerKey]. It is the one
// statement of that range. NewBlocked applies it, and the layers that take
// a bits per key long before they build a filter (a DB's Options, an
// SSTable writer's options, the command-line tool) call it to refuse the
// value early rather than restate the range.
func CheckBitsPerKey(bitsPerKey float64) error {
	if math.IsNaN(bitsPerKey) || bitsPerKey < 1 || bitsPerKey > MaxBitsPerKey {
		return argError("bitsPerKey", bitsPerKey, "must be in [1, %d]", MaxBitsPerKey)
	}
	return nil
}

// BuildBlocked returns a blocked filter of the items whose Hash values are
// hashes, at bitsPerKey bits each. An SSTable writer collects its keys'
// hashes while it writes and builds the filter once, at the end.
func BuildBlocked(hashes []uint64, bitsPerKey float64) (*Blocked, error) {
	f, err := NewBlocked(len(hashes), bitsPerKey)
	if err != nil {
		return nil, err
	}
	// Nobody else can see f yet: set bits without atomics.
	for _, h := range hashes {
		blk, p := f.block(h)
		for range f.k {
			bit := p.next()
			blk[bit/64] |= 1 << (bit % 64)
		}
	}
	f.keys.Store(uint64(len(hashes)))
	return f, nil
}

// block returns the block of hash h and the sequence of its probes.
func (f *Blocked) block(h uint64) (*[blockWords]uint64, probeSeq) {
	g := remix(h)
	return f.blockAt(reduce(h, f.numBlocks)), probeSeq{bits: g, seed: g}
}

// blockAt returns block b < numBlocks. It does its own address arithmetic:
// slicing f.blocks costs two bounds checks, a tenth of a lookup's time,
// that reduce already makes unnecessary.
func (f *Blocked) blockAt(b uint64) *[blockWords]uint64 {
	// INVARIANT: b < numBlocks and len(blocks) == numBlocks·blockWords.
	return (*[blockWords]uint64)(unsafe.Add(unsafe.Pointer(unsafe.SliceData(f.blocks)), b*blockWords*8))
}

// probeSeq yields an item's probe positions inside its block: consecutive
// 9-bit fields of seed, then of remix(seed), remix(remix(seed)), … — every
// field from fresh, fully mixed bits.
type probeSeq struct {
	bits, seed uint64
	used       int // fields taken from bits
}

// next returns the next probe's bit index in [0, 512).
func (p *probeSeq) next() uint64 {
	if p.used == probesPerHash {
		p.seed = remix(p.seed)
		p.bits, p.used = p.seed, 0
	}
	bit := p.bits % blockBits
	p.bits >>= probeBits
	p.used++
	return bit
}

// Add inserts item.
func (f *Blocked) Add(item []byte) { f.AddHash(Hash(item)) }

// AddHash inserts the item whose Hash is h.
func (f *Blocked) AddHash(h uint64) {
	blk, p := f.block(h)
	for range f.k {
		bit := p.next()
		w, mask := &blk[bit/64], uint64(1)<<(bit%64)
		if atomic.LoadUint64(w)&mask == 0 {
			atomic.OrUint64(w, mask)
		}
	}
	f.keys.Add(1)
}

// MayContain reports whether item may have been added. False means it
// certainly was not.
func (f *Blocked) MayContain(item []byte) bool { return f.MayContainHash(Hash(item)) }

// MayContainHash is MayContain for the item whose Hash is h.
//
// It collects the probes' missing bits and tests once, at the end. An early
// return at the first clear bit is a branch the CPU cannot predict for
// absent items (they leave after a random number of probes); each
// misprediction costs more than the remaining probes into a cache line
// already loaded, and stops the next lookup's load from overlapping. Up to
// seven probes — every bits-per-key up to 12 — come from one remixed hash,
// unrolled, so a lookup is short enough for the next one's memory access to
// start while this one waits for its cache line.
func (f *Blocked) MayContainHash(h uint64) bool {
	if f.k > probesPerHash {
		return f.mayContainManyProbes(h)
	}
	blk, g := f.blockAt(reduce(h, f.numBlocks)), remix(h)
	var missing uint64
	switch f.k { // probe i is the 9-bit field g>>(9i); see probeSeq
	case 7:
		missing |= missingBit(blk, g>>54)
		fallthrough
	case 6:
		missing |= missingBit(blk, g>>45)
		fallthrough
	case 5:
		missing |= missingBit(blk, g>>36)
		fallthrough
	case 4:
		missing |= missingBit(blk, g>>27)
		fallthrough
	case 3:
		missing |= missingBit(blk, g>>18)
		fallthrough
	case 2:
		missing |= missingBit(blk, g>>9)
		fallthrough
	default:
		missing |= missingBit(blk, g)
	}
	return missing == 0
}

// missingBit returns the mask of the probe whose bit index is the low 9
// bits of field if that bit is clear in blk, else 0.
func missingBit(blk *[blockWords]uint64, field uint64) uint64 {
	return ^atomic.LoadUint64(&blk[field>>6%blockWords]) & (1 << (field % 64))
}

// mayContainManyProbes is MayContainHash for more probes than one remixed
// hash supplies (above 12 bits per key).
func (f *Blocked) mayContainManyProbes(h uint64) bool {
	blk, p := f.block(h)
	var missing uint64
	for range f.k {
		bit := p.next()
		missing |= ^atomic.LoadUint64(&blk[bit/64]) & (1 << (bit % 64))
	}
	return missing == 0
}

// Bits returns the filter's size in bits, a multiple of 512.
func (f *Blocked) Bits() uint64 { return f.numBlocks * blockBits }

// Probes returns k, the number of bits set per item, all in one block.
func (f *Blocked) Probes() int { return f.k }

// Keys returns the number of items added (repeats counted).
func (f *Blocked) Keys() uint64 { return f.keys.Load() }

// SizeBytes returns the memory the bits occupy.
func (f *Blocked) SizeBytes() int { return len(f.blocks) * 8 }

// BitsPerKey returns the bits per item added, or +Inf for an empty filter.
func (f *Blocked) BitsPerKey() float64 { return float64(f.Bits()) / float64(f.Keys()) }

// LoadFactor returns the fraction of bits set. Blocks fill unevenly, but on
// average a blocked filter of n items is about as full as a classic filter
// of the same bits and probes, 1 − e^(−kn/m): a little less, since an
// item's k probes within one 512-bit block coincide more often than k
// probes over all m bits.
func (f *Blocked) LoadFactor() float64 { return float64(popCount(f.blocks)) / float64(f.Bits()) }

// FillRatio is LoadFactor, under the name it had first.
func (f *Blocked) FillRatio() float64 { return f.LoadFactor() }

// ExpectedFalsePositiveRate is BlockedFalsePositiveRate at the filter's
// bits per key and probes: the rate to expect for items never added.
func (f *Blocked) ExpectedFalsePositiveRate() float64 {
	if f.Keys() == 0 {
		return 0
	}
	return BlockedFalsePositiveRate(f.BitsPerKey(), f.k)
}

// MarshalBinary encodes the filter in the format the package doc draws.
func (f *Blocked) MarshalBinary() ([]byte, error) { return marshal(f.header(), f.blocks), nil }

// WriteTo writes the encoding MarshalBinary returns to w.
func (f *Blocked) WriteTo(w io.Writer) (int64, error) { return encode(w, f.header(), f.blocks) }

// UnmarshalBinary replaces f with the filter encoded in data. Damaged,
// truncated or other-kind input returns an error wrapping ErrCorrupt.
func (f *Blocked) UnmarshalBinary(data []byte) error {
	h, words, err := decode(data, KindBlocked)
	return f.set(h, words, err)
}

// UnmarshalBinaryInto is UnmarshalBinary keeping the filter's bits in
// memory the caller provides, for a program that holds filters outside the
// Go heap or in an arena: once data's header and size are checked, alloc is
// called with the number of 64-bit words needed and must return a slice of
// exactly that length, best starting on a 64-byte boundary (a block is then
// one cache line). The filter uses that memory for its life; freeing it is
// the caller's business, and f must not be used afterwards.
func (f *Blocked) UnmarshalBinaryInto(data []byte, alloc func(words int) []uint64) error {
	h, words, err := decodeInto(data, KindBlocked, alloc)
	return f.set(h, words, err)
}

// ReadFrom replaces f with the filter encoded at the start of r, reading no
// byte past it.
func (f *Blocked) ReadFrom(r io.Reader) (int64, error) {
	h, words, n, err := readFrom(r, KindBlocked)
	return n, f.set(h, words, err)
}

func (f *Blocked) header() header {
	return header{kind: KindBlocked, k: f.k, m: f.Bits(), n: f.Keys()}
}

func (f *Blocked) set(h header, words []uint64, err error) error {
	if err != nil {
		return err
	}
	f.blocks, f.numBlocks, f.k = words, h.m/blockBits, h.k
	f.keys.Store(h.n)
	return nil
}

// alignedWords returns n zeroed words starting on a 64-byte boundary, so a
// blocked filter's block is exactly one cache line.
func alignedWords(n int) []uint64 {
	s := make([]uint64, n+blockWords-1)
	off := 0
	for uintptr(unsafe.Pointer(unsafe.SliceData(s[off:])))%64 != 0 {
		off++
	}
	return s[off : off+n : off+n]
}
