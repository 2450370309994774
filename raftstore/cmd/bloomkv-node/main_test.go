package main

import (
	"bytes"
	"strings"
	"testing"
)

// TestRunBadFlags: bad command lines exit with status 2 and a message
// naming what is wrong, before anything starts.
func TestRunBadFlags(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"-id", "n1", "-dir", t.TempDir(), "-bootstrap", "n1"}, `"n1" is not id=raftaddr`},
		{[]string{"-id", "n1", "-dir", t.TempDir(), "-bootstrap", "n2=127.0.0.1:1"}, `does not list this node's -id "n1"`},
		{[]string{"-id", "n1", "extra"}, `unexpected argument "extra"`},
		{[]string{"-nosuchflag"}, "flag provided but not defined"},
	}
	for _, c := range cases {
		var stderr bytes.Buffer
		if code := run(c.args, &stderr); code != 2 || !strings.Contains(stderr.String(), c.want) {
			t.Errorf("run(%q) = %d, %q; want 2 and %q", c.args, code, stderr.String(), c.want)
		}
	}
}
