// Package humanize renders quantities for people: byte counts in binary
// units with three significant digits, as the DB's metrics and the
// command-line tool print them.
package humanize

import "fmt"

// Bytes renders n bytes: "512 B", "1.14 MiB", "52.2 KiB", "105 KiB".
func Bytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	value, exp := float64(n)/unit, 0
	for value >= unit && exp < 5 {
		value /= unit
		exp++
	}
	prefix := "KMGTPE"[exp]
	switch {
	case value < 10:
		return fmt.Sprintf("%.2f %ciB", value, prefix)
	case value < 100:
		return fmt.Sprintf("%.1f %ciB", value, prefix)
	}
	return fmt.Sprintf("%.0f %ciB", value, prefix)
}
