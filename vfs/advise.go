package vfs

// RandomAdviser is a File that can tell the system it will be read at
// random offsets: after AdviseRandom the system reads from the device only
// what each read asks for, with no read-ahead. Lookups read single blocks
// of a few KiB; Linux reads ahead (up to 128 KiB by default) as soon as two
// reads look sequential — two lookups in adjacent blocks, a batch of
// lookups in key order — and those bytes cost the device time that other
// reads wait for. Sequential readers of such a file then read large
// chunks themselves.
//
// It is optional, and only advice: a File without it reads as the system
// likes, and an error from it changes nothing. The OS file has it on Linux
// (posix_fadvise(2) with POSIX_FADV_RANDOM, for the whole open file);
// Counting and Injecting pass it through to the files they wrap.
type RandomAdviser interface {
	AdviseRandom() error
}

// AdviseRandom calls f's AdviseRandom, if it has one.
func AdviseRandom(f File) error {
	if a, ok := f.(RandomAdviser); ok {
		return a.AdviseRandom()
	}
	return nil
}
