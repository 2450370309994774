//go:build !linux

package offheap

// canRelease reports whether releasePages gives pages back on this system.
const canRelease = false

// releasePages releases nothing on this system: it reports false.
func releasePages([]byte) bool { return false }
