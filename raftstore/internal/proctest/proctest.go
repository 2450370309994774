//go:build linux

// Package proctest starts the running test binary again as a child
// process, for the tests that need processes of their own (nodes to
// SIGKILL): the child's TestMain finds its variable in the environment and
// runs as the node instead of running the tests.
package proctest

import (
	"io"
	"os"
	"os/exec"
	"syscall"
	"testing"

	"github.com/bloomkv/bloomkv/internal/freeport"
)

// Start runs the test binary with no tests and env ("NAME=value") added to
// its environment, its stderr the parent's, killed if the parent dies,
// and returns it with pipes to its stdin and from its stdout.
func Start(env string) (*exec.Cmd, io.WriteCloser, io.ReadCloser, error) {
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env)
	cmd.Stderr = os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, nil, nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, nil, nil, err
	}
	return cmd, stdin, stdout, nil
}

// FreeAddr returns a loopback address whose port was free a moment ago,
// for a node process to listen on (and listen on again after a restart):
// a port below the kernel's ephemeral range (freeport.Addr), which no
// outgoing connection takes while the node is down.
func FreeAddr(t testing.TB) string {
	t.Helper()
	return freeport.Addr(t)
}
