package murmur

import "testing"

// TestMix64 pins Mix64 to fmix64's values for three inputs, computed
// apart from this code (with Python's integers, from the reference
// algorithm): the fuse and Ribbon formats depend on them.
func TestMix64(t *testing.T) {
	for _, c := range []struct{ in, want uint64 }{
		{0, 0},
		{1, 0xb456bcfc34c2cb2c},
		{0xffffffffffffffff, 0x64b5720b4b825f21},
	} {
		if got := Mix64(c.in); got != c.want {
			t.Errorf("Mix64(%#x) = %#x, want %#x", c.in, got, c.want)
		}
	}
}
