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

// Prefetcher is a File that can ask the system to start reading a range
// of it into the page cache and return before the read completes
// (posix_fadvise(2) with POSIX_FADV_WILLNEED on Linux). A caller about to
// read many scattered blocks asks for all of them first: the device then
// has every read queued at once, however few threads the caller reads
// them with — a Go program with GOMAXPROCS 2 has only about two blocking
// reads in flight at a time, since a thread blocked in a read holds its P
// until the runtime takes it back.
//
// Like RandomAdviser it is optional, and only advice.
type Prefetcher interface {
	Prefetch(off, n int64) error
}

// Prefetch calls f's Prefetch, if it has one.
func Prefetch(f File, off, n int64) error {
	if p, ok := f.(Prefetcher); ok {
		return p.Prefetch(off, n)
	}
	return nil
}
