//go:build !unix

package main

import "os"

// maxRSS returns 0: this system's process state has no peak RSS.
func maxRSS(*os.ProcessState) int64 { return 0 }
