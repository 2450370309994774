package filterframe

import (
	"encoding/binary"
	"errors"
	"strings"
	"testing"
)

var errTest = errors.New("test: corrupt")

var testFormat = &Format{Magic: "TEST", Version: 3, Kind: 7, KindName: "test kind", BitsName: "width",
	MinBits: 2, MaxBits: 9, ErrCorruption: errTest}

// TestFrame writes a header and a payload, reads them back, and damages
// each field the frame checks: every damage is an error wrapping the
// format's ErrCorruption that names the field's offset.
func TestFrame(t *testing.T) {
	h := Header{Bits: 5, Seed: 0x0123456789abcdef, Layout: 1<<40 | 17, Keys: 99, PayloadLength: 16}
	payload := []byte("0123456789abcdef")
	frame := testFormat.AppendHeader(nil, h)
	frame = append(frame, payload...)
	frame = binary.LittleEndian.AppendUint32(frame, Checksum(payload))
	if len(frame) != HeaderLen+len(payload)+ChecksumLen {
		t.Fatalf("frame of %d bytes, want %d", len(frame), HeaderLen+len(payload)+ChecksumLen)
	}
	got, err := testFormat.ParseHeader(frame)
	if err != nil || got != h {
		t.Fatalf("ParseHeader = %+v, %v, want %+v", got, err, h)
	}
	p, err := testFormat.Payload(frame, uint64(len(frame)), 2, 64)
	if err != nil || string(p) != string(payload) {
		t.Fatalf("Payload = %q, %v", p, err)
	}

	// reseal recomputes the header's checksum, so that the damage reaches
	// the check of the field itself.
	reseal := func(b []byte) []byte {
		binary.LittleEndian.PutUint32(b[OffHeaderCRC:], Checksum(b[:OffHeaderCRC]))
		return b
	}
	for _, tc := range []struct {
		name   string
		damage func([]byte) []byte
		want   string
	}{
		{"short", func(b []byte) []byte { return b[:HeaderLen-1] }, "47 bytes, shorter than the 48-byte header"},
		{"magic", func(b []byte) []byte { b[0] = 'X'; return b }, "at byte 0: magic"},
		{"header checksum", func(b []byte) []byte { b[OffSeed] ^= 1; return b }, "at byte 44: header checksum"},
		{"version", func(b []byte) []byte { b[OffVersion] = 4; return reseal(b) }, "at byte 4: format version 4"},
		{"kind", func(b []byte) []byte { b[OffKind] = 8; return reseal(b) }, "at byte 5: kind 8, want 7 (test kind)"},
		{"width low", func(b []byte) []byte { b[OffBits] = 1; return reseal(b) }, "at byte 6: width 1 bits, outside [2, 9]"},
		{"width high", func(b []byte) []byte { b[OffBits] = 10; return reseal(b) }, "at byte 6: width 10 bits"},
		{"reserved byte", func(b []byte) []byte { b[OffReserved1] = 1; return reseal(b) }, "at byte 7: reserved byte"},
		{"reserved bytes", func(b []byte) []byte { b[OffReserved2+3] = 1; return reseal(b) }, "at byte 40: reserved bytes"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := testFormat.ParseHeader(tc.damage(append([]byte(nil), frame...)))
			if !errors.Is(err, errTest) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("ParseHeader: %v, want an error wrapping %v saying %q", err, errTest, tc.want)
			}
		})
	}

	damaged := append([]byte(nil), frame...)
	damaged[HeaderLen+3] ^= 0x10
	if _, err := testFormat.Payload(damaged, uint64(len(damaged)), 2, 64); !errors.Is(err, errTest) || !strings.Contains(err.Error(), "at byte 64: payload checksum") {
		t.Fatalf("Payload of a damaged payload: %v", err)
	}
	if _, err := testFormat.Payload(frame[:len(frame)-1], uint64(len(frame)), 2, 64); !errors.Is(err, errTest) || !strings.Contains(err.Error(), "67 bytes, want 68 for 2 slots of 64 bits") {
		t.Fatalf("Payload of a short frame: %v", err)
	}
}
