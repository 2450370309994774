package bytealg

import (
	"math/rand/v2"
	"testing"
)

// TestCommonPrefix checks the word-at-a-time CommonPrefix against a byte
// loop: the cases where the first difference falls in each byte of a word,
// in the tail shorter than a word, or nowhere, and random pairs that share
// random prefixes.
func TestCommonPrefix(t *testing.T) {
	oracle := func(a, b []byte) int {
		n := 0
		for n < len(a) && n < len(b) && a[n] == b[n] {
			n++
		}
		return n
	}
	for _, tc := range []struct{ a, b string }{
		{"", ""},
		{"", "a"},
		{"abc", "abc"},
		{"abc", "abd"},
		{"abcdefgh", "abcdefgh"},
		{"abcdefgh", "abcdefgx"},
		{"abcdefgh", "xbcdefgh"},
		{"abcdefghi", "abcdefgh"},
		{"abcdefghijklmnop", "abcdefghijklmnoq"},
		{"abcdefghijklmnopq", "abcdefghijklmnopr"},
		{"0000000001234567\x01\x00\x00\x00\x00\x00\x00\x00", "0000000001234568\x01\x00\x00\x00\x00\x00\x00\x00"},
	} {
		for _, p := range [][2]string{{tc.a, tc.b}, {tc.b, tc.a}} {
			if got, want := CommonPrefix([]byte(p[0]), []byte(p[1])), oracle([]byte(p[0]), []byte(p[1])); got != want {
				t.Errorf("CommonPrefix(%q, %q) = %d, want %d", p[0], p[1], got, want)
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 10000 {
		a := make([]byte, r.IntN(40))
		for i := range a {
			a[i] = byte(r.IntN(3)) // few symbols: long shared prefixes
		}
		b := append([]byte(nil), a[:r.IntN(len(a)+1)]...)
		for range r.IntN(20) {
			b = append(b, byte(r.IntN(3)))
		}
		if got, want := CommonPrefix(a, b), oracle(a, b); got != want {
			t.Fatalf("CommonPrefix(%v, %v) = %d, want %d", a, b, got, want)
		}
	}
}
