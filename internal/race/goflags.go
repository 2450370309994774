package race

// GoFlags returns the go command's flags that build packages as this
// binary was built: -race under the race detector, none without it. A test
// that runs the go command to build or list packages passes them, so that
// under -race it finds the race build `make test` made in the build cache
// instead of compiling every package again, plain (on a fresh machine, a
// minute of CPU for the public packages alone). What the test checks —
// export data, compile errors, a program's behaviour — is the same in both
// builds.
func GoFlags() []string {
	if Enabled {
		return []string{"-race"}
	}
	return nil
}
