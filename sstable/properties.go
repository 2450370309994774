package sstable

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"strings"
	"time"

	"github.com/bloomkv/bloomkv/bloom"
	"github.com/bloomkv/bloomkv/fuse"
	"github.com/bloomkv/bloomkv/internal/base"
	"github.com/bloomkv/bloomkv/internal/compress"
	"github.com/bloomkv/bloomkv/ribbon"
)

// Properties describe a table. The writer computes them; the reader keeps
// them in memory. They are stored as a block of name → value entries, sorted
// by name, so a newer writer can add properties an older reader skips.
type Properties struct {
	Entries       uint64 // entries, tombstones included
	Tombstones    uint64 // entries of KindDelete
	RawKeyBytes   uint64 // sum of the user keys' lengths
	RawValueBytes uint64 // sum of the values' lengths
	DataBlocks    uint64
	DataBytes     uint64 // stored bytes of the data blocks, trailers included
	// BlockAlign is the page an aligned table's data blocks are fitted to
	// (WriterOptions.BlockAlign), 0 in a table not aligned; DataPadding
	// is the zero bytes written between its data blocks so that none
	// that fits in a page crosses one (not in DataBytes).
	BlockAlign  uint64
	DataPadding uint64
	// IndexBytes is the index's stored bytes: in a table whose index is
	// partitioned, the partitions' and the top level's. IndexPartitions is
	// the number of partitions, 0 in a table whose index is one block
	// (always, below format version 4).
	IndexBytes      uint64
	IndexPartitions uint64
	FilterFamily    FilterFamily // NoFilter when the table has none
	FilterBytes     uint64       // 0 when the table has no filter
	FilterKeys      uint64       // distinct hashes in the filter: user keys, and prefixes under FilterPrefix
	FilterBitsPer   float64      // the filter's bits per key, as its BitsPerKey says
	FilterProbes    uint64       // a Bloom filter's probes per key
	FilterFPBits    uint64       // a fuse or Ribbon filter's fingerprint (result) bits
	FilterPrefix    string       // the PrefixExtractor's Name, if the filter holds prefixes
	Compression     Compression  // the writer's option; blocks may be stored uncompressed
	SmallestSeqNum  SeqNum
	LargestSeqNum   SeqNum
	// Smallest and Largest bound the table's keys: its first and last
	// entries, widened to the range tombstones' extents (see
	// Writer.SetRangeDels), so their user keys bound, inclusively, every
	// key the table holds or deletes.
	Smallest InternalKey
	Largest  InternalKey
	// RangeDels counts the range tombstones, one per fragment and seqnum,
	// and RangeDelBlock locates their block; both zero in a table without
	// (always, in a table of format version 1).
	RangeDels     uint64
	RangeDelBlock BlockHandle
	// RangeFilterFamily, RangeFilterBlock, RangeFilterKeys and
	// RangeFilterBitsPer describe the table's range filter
	// (WriterOptions.RangeFilterBits): its family, its block, the
	// distinct user keys it was built from and its bits per key; all
	// zero in a table without (always, below format version 3).
	RangeFilterFamily  RangeFilterFamily
	RangeFilterBlock   BlockHandle
	RangeFilterKeys    uint64
	RangeFilterBitsPer float64
	// ExpiringEntries counts the entries with an expiry (KindSetTTL,
	// KindSetBlobTTL), and EarliestExpiry is the earliest of their
	// expiries, in Unix nanoseconds: what a DB asks to find the tables
	// holding versions whose time-to-live has ended. Both are zero, and
	// not stored, in a table without such entries (always, in a table
	// written before the kinds existed).
	ExpiringEntries uint64
	EarliestExpiry  int64
	// PagedFilterBlocks, PagedFilterProbes and PagedFilterBitsPer
	// describe the table's paged filter (WriterOptions.PagedFilterBits): a
	// Bloom filter of its 64-byte blocks, its probes per key and its bits
	// per key; all zero, and not stored, in a table without.
	PagedFilterBlocks  uint64
	PagedFilterProbes  uint64
	PagedFilterBitsPer float64
}

// propertyCodec names a property and says how to encode and decode it.
type propertyCodec struct {
	name   string
	encode func(p *Properties) []byte
	decode func(p *Properties, v []byte) bool
	// omit, if not nil, leaves the property out of a table it says
	// lacks it, whose properties block is then as it was before the
	// property existed.
	omit func(p *Properties) bool
}

func uintProperty(name string, field func(p *Properties) *uint64) propertyCodec {
	return propertyCodec{
		name:   name,
		encode: func(p *Properties) []byte { return binary.AppendUvarint(nil, *field(p)) },
		decode: func(p *Properties, v []byte) bool {
			x, n := binary.Uvarint(v)
			*field(p) = x
			return n == len(v) && n > 0
		},
	}
}

// float64Property is a property holding a float64, as its IEEE 754 bits,
// little-endian.
func float64Property(name string, field func(p *Properties) *float64) propertyCodec {
	return propertyCodec{
		name:   name,
		encode: func(p *Properties) []byte { return binary.LittleEndian.AppendUint64(nil, math.Float64bits(*field(p))) },
		decode: func(p *Properties, v []byte) bool {
			if len(v) != 8 {
				return false
			}
			*field(p) = math.Float64frombits(binary.LittleEndian.Uint64(v))
			return true
		},
	}
}

func stringProperty(name string, field func(p *Properties) *string) propertyCodec {
	return propertyCodec{
		name:   name,
		encode: func(p *Properties) []byte { return []byte(*field(p)) },
		decode: func(p *Properties, v []byte) bool {
			*field(p) = string(v)
			return true
		},
	}
}

func keyProperty(name string, field func(p *Properties) *InternalKey) propertyCodec {
	return propertyCodec{
		name:   name,
		encode: func(p *Properties) []byte { return field(p).Append(nil) },
		decode: func(p *Properties, v []byte) bool {
			k, ok := base.DecodeInternalKey(bytes.Clone(v))
			*field(p) = k
			return ok
		},
	}
}

// propertyCodecs lists every property in name order, the order they are
// stored in.
var propertyCodecs = func() []propertyCodec {
	seq := func(f func(p *Properties) *SeqNum) func(p *Properties) *uint64 {
		return func(p *Properties) *uint64 { return (*uint64)(f(p)) }
	}
	codecs := []propertyCodec{
		uintProperty("bloomkv.entries", func(p *Properties) *uint64 { return &p.Entries }),
		uintProperty("bloomkv.tombstones", func(p *Properties) *uint64 { return &p.Tombstones }),
		uintProperty("bloomkv.raw.key.bytes", func(p *Properties) *uint64 { return &p.RawKeyBytes }),
		uintProperty("bloomkv.raw.value.bytes", func(p *Properties) *uint64 { return &p.RawValueBytes }),
		uintProperty("bloomkv.data.blocks", func(p *Properties) *uint64 { return &p.DataBlocks }),
		uintProperty("bloomkv.data.bytes", func(p *Properties) *uint64 { return &p.DataBytes }),
		uintProperty("bloomkv.data.padding", func(p *Properties) *uint64 { return &p.DataPadding }),
		uintProperty("bloomkv.block.align", func(p *Properties) *uint64 { return &p.BlockAlign }),
		uintProperty("bloomkv.index.bytes", func(p *Properties) *uint64 { return &p.IndexBytes }),
		uintProperty("bloomkv.filter.bytes", func(p *Properties) *uint64 { return &p.FilterBytes }),
		uintProperty("bloomkv.filter.keys", func(p *Properties) *uint64 { return &p.FilterKeys }),
		uintProperty("bloomkv.filter.probes", func(p *Properties) *uint64 { return &p.FilterProbes }),
		uintProperty("bloomkv.filter.fingerprint.bits", func(p *Properties) *uint64 { return &p.FilterFPBits }),
		stringProperty("bloomkv.filter.prefix", func(p *Properties) *string { return &p.FilterPrefix }),
		{
			// Absent from tables written before families were recorded:
			// decodeProperties then says Bloom for a table with a filter.
			name:   "bloomkv.filter.family",
			encode: func(p *Properties) []byte { return []byte{byte(p.FilterFamily)} },
			decode: func(p *Properties, v []byte) bool {
				if len(v) != 1 {
					return false
				}
				p.FilterFamily = FilterFamily(v[0])
				return true
			},
		},
		uintProperty("bloomkv.seqnum.smallest", seq(func(p *Properties) *SeqNum { return &p.SmallestSeqNum })),
		uintProperty("bloomkv.seqnum.largest", seq(func(p *Properties) *SeqNum { return &p.LargestSeqNum })),
		keyProperty("bloomkv.key.smallest", func(p *Properties) *InternalKey { return &p.Smallest }),
		keyProperty("bloomkv.key.largest", func(p *Properties) *InternalKey { return &p.Largest }),
		float64Property("bloomkv.filter.bits.per.key", func(p *Properties) *float64 { return &p.FilterBitsPer }),
		uintProperty("bloomkv.rangedel.count", func(p *Properties) *uint64 { return &p.RangeDels }),
		{
			name:   "bloomkv.rangedel.block",
			encode: func(p *Properties) []byte { return p.RangeDelBlock.appendVarint(nil) },
			decode: func(p *Properties, v []byte) bool {
				h, ok := decodeHandle(v)
				p.RangeDelBlock = h
				return ok
			},
		},
		{
			name:   "bloomkv.compression",
			encode: func(p *Properties) []byte { return []byte{byte(p.Compression.codec())} },
			decode: func(p *Properties, v []byte) bool {
				if len(v) != 1 {
					return false
				}
				p.Compression = compressionOf(compress.Codec(v[0]))
				return true
			},
		},
	}
	codecs = append(codecs, rangeFilterProperties...)
	noExpiry := func(p *Properties) bool { return p.ExpiringEntries == 0 }
	partitions := uintProperty("bloomkv.index.partitions", func(p *Properties) *uint64 { return &p.IndexPartitions })
	partitions.omit = func(p *Properties) bool { return p.IndexPartitions == 0 }
	codecs = append(codecs, partitions,
		propertyCodec{
			name:   "bloomkv.expiring.entries",
			encode: func(p *Properties) []byte { return binary.AppendUvarint(nil, p.ExpiringEntries) },
			decode: func(p *Properties, v []byte) bool {
				x, n := binary.Uvarint(v)
				p.ExpiringEntries = x
				return n == len(v) && n > 0
			},
			omit: noExpiry,
		},
		propertyCodec{
			name:   "bloomkv.expiry.earliest", // int64 LE, as in an entry
			encode: func(p *Properties) []byte { return base.AppendExpiry(nil, p.EarliestExpiry) },
			decode: func(p *Properties, v []byte) bool {
				e, rest, ok := base.SplitExpiry(v)
				p.EarliestExpiry = e
				return ok && len(rest) == 0
			},
			omit: noExpiry,
		})
	noPaged := func(p *Properties) bool { return p.PagedFilterBlocks == 0 }
	for _, c := range []propertyCodec{
		uintProperty("bloomkv.pagedfilter.blocks", func(p *Properties) *uint64 { return &p.PagedFilterBlocks }),
		uintProperty("bloomkv.pagedfilter.probes", func(p *Properties) *uint64 { return &p.PagedFilterProbes }),
		float64Property("bloomkv.pagedfilter.bits.per.key", func(p *Properties) *float64 { return &p.PagedFilterBitsPer }),
	} {
		c.omit = noPaged
		codecs = append(codecs, c)
	}
	sort.Slice(codecs, func(i, j int) bool { return codecs[i].name < codecs[j].name })
	return codecs
}()

// encodeProperties returns the properties block's contents.
func encodeProperties(p *Properties) []byte {
	w := blockWriter{restartInterval: 1}
	for _, c := range propertyCodecs {
		if c.omit == nil || !c.omit(p) {
			w.add([]byte(c.name), c.encode(p))
		}
	}
	return w.finish()
}

// decodeProperties parses a properties block; it returns errBlock wrapped
// with the property at fault.
func decodeProperties(block []byte) (Properties, error) {
	var p Properties
	var it blockIter
	if err := it.init(block, bytes.Compare); err != nil {
		return p, err
	}
	byName := make(map[string]propertyCodec, len(propertyCodecs))
	for _, c := range propertyCodecs {
		byName[c.name] = c
	}
	family := false
	for ok := it.first(); ok; ok = it.nextEntry() {
		if c, known := byName[string(it.key)]; known && !c.decode(&p, it.value) {
			return p, fmt.Errorf("%w: property %s", errBlock, c.name)
		}
		family = family || string(it.key) == "bloomkv.filter.family"
	}
	if !family && p.FilterBytes > 0 {
		p.FilterFamily = BloomFamily
	}
	return p, it.err
}

// setFilter records the filter a writer built: family, its stored length,
// and what it says of itself.
func (p *Properties) setFilter(family FilterFamily, f Filter, length uint64) {
	p.FilterFamily = family
	p.FilterBytes = length
	p.FilterKeys = f.Keys()
	p.FilterBitsPer = f.BitsPerKey()
	switch f := f.(type) {
	case *bloom.Blocked:
		p.FilterProbes = uint64(f.Probes())
	case *fuse.Filter:
		p.FilterFPBits = uint64(f.Bits())
	case *ribbon.Filter:
		p.FilterFPBits = uint64(f.Bits())
	}
}

// String renders the properties one per line, for tools.
func (p Properties) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "entries %d (tombstones %d)\n", p.Entries, p.Tombstones)
	if p.ExpiringEntries > 0 {
		fmt.Fprintf(&b, "entries with an expiry: %d, the earliest %s\n", p.ExpiringEntries, time.Unix(0, p.EarliestExpiry).UTC().Format(time.RFC3339Nano))
	}
	fmt.Fprintf(&b, "raw bytes: keys %d, values %d\n", p.RawKeyBytes, p.RawValueBytes)
	fmt.Fprintf(&b, "data: %d blocks, %d bytes, %v\n", p.DataBlocks, p.DataBytes, p.Compression)
	if p.BlockAlign > 0 {
		fmt.Fprintf(&b, "blocks aligned to %d-byte pages: %d bytes of padding\n", p.BlockAlign, p.DataPadding)
	}
	if p.IndexPartitions > 0 {
		fmt.Fprintf(&b, "index: %d bytes in %d partitions and a top level\n", p.IndexBytes, p.IndexPartitions)
	} else {
		fmt.Fprintf(&b, "index: %d bytes\n", p.IndexBytes)
	}
	if p.FilterBytes > 0 {
		fmt.Fprintf(&b, "filter: %v, %d bytes, %d keys, %.2f bits/key", p.FilterFamily, p.FilterBytes, p.FilterKeys, p.FilterBitsPer)
		switch p.FilterFamily {
		case BloomFamily:
			fmt.Fprintf(&b, ", %d probes", p.FilterProbes)
		case FuseFamily, RibbonFamily:
			fmt.Fprintf(&b, ", %d-bit fingerprints", p.FilterFPBits)
		}
		if p.FilterPrefix != "" {
			fmt.Fprintf(&b, ", prefixes by %q", p.FilterPrefix)
		}
		fmt.Fprintln(&b)
	} else {
		fmt.Fprintln(&b, "filter: none")
	}
	if p.PagedFilterBlocks > 0 {
		pages := "pages"
		if pagesOf(p.PagedFilterBlocks) == 1 {
			pages = "page"
		}
		fmt.Fprintf(&b, "paged filter: bloom, %d blocks in %d %s, %.2f bits/key, %d probes\n",
			p.PagedFilterBlocks, pagesOf(p.PagedFilterBlocks), pages, p.PagedFilterBitsPer, p.PagedFilterProbes)
	}
	fmt.Fprintf(&b, "seqnums: %d–%d\n", p.SmallestSeqNum, p.LargestSeqNum)
	fmt.Fprintf(&b, "keys: %v – %v\n", p.Smallest, p.Largest)
	if p.RangeDels > 0 {
		fmt.Fprintf(&b, "range tombstones: %d, %d bytes\n", p.RangeDels, p.RangeDelBlock.Length)
	}
	b.WriteString(p.rangeFilterString())
	return b.String()
}
