// Package redistest starts real redis-server processes for tests: each on a
// free loopback port with a fresh data directory, killed at the test's
// cleanup (and by the kernel, on Linux, if the test binary dies first). A
// test that needs Redis fails — never skips — when redis-server is not
// installed; scripts/ensure-packages redis installs it.
package redistest

import (
	"bufio"
	"errors"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/bloomkv/bloomkv/internal/freeport"
)

// Server is a redis-server child process that one test starts on a free
// loopback port with a fresh data directory, and kills at its cleanup.
type Server struct {
	tb     testing.TB
	bin    string
	dir    string
	port   int
	args   []string // persistence options, after the fixed ones
	cmd    *exec.Cmd
	exited chan struct{} // closed when cmd has been waited for
}

// NoPersistence is the default: nothing written to disk.
var NoPersistence = []string{"--save", "", "--appendonly", "no"}

// Start starts redis-server with the given persistence options
// (NoPersistence if none) and waits until it answers PING. It fails the
// test — never skips it — when redis-server is not installed.
func Start(tb testing.TB, persistence ...string) *Server {
	tb.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		tb.Fatalf("redis-server not found: install Debian's redis-server package, e.g. run scripts/ensure-packages redis (%v)", err)
	}
	if len(persistence) == 0 {
		persistence = NoPersistence
	}
	s := &Server{tb: tb, bin: bin, dir: tb.TempDir(), args: persistence}
	tb.Cleanup(func() { s.Stop(syscall.SIGKILL) })
	// Another process may take the free port between our probe and Redis's
	// bind; then Redis exits and we try another port.
	for try := 0; ; try++ {
		s.port = FreePort(tb)
		if err := s.start(); err == nil {
			return s
		} else if try == 2 {
			tb.Fatalf("redis-server did not start: %v\n%s", err, s.Log())
		}
	}
}

// FreePort returns a loopback port nothing listened on a moment ago, below
// the ports the kernel gives outgoing connections (freeport.Loopback):
// where a server is to start, or an address a test wants to be unreachable.
func FreePort(tb testing.TB) int {
	tb.Helper()
	return freeport.Loopback(tb)
}

// start runs redis-server on s.port in s.dir and waits for PONG.
func (s *Server) start() error {
	args := append([]string{
		"--port", strconv.Itoa(s.port),
		"--bind", "127.0.0.1",
		"--dir", s.dir,
		"--daemonize", "no",
		"--logfile", "redis.log",
	}, s.args...)
	s.cmd = exec.Command(s.bin, args...)
	s.cmd.Dir = s.dir // so that relative files (log, cluster config) land there
	dieWithTest(s.cmd)
	if err := s.cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	s.exited = exited
	go func(cmd *exec.Cmd) { _ = cmd.Wait(); close(exited) }(s.cmd)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if ping(s.Addr()) {
			return nil
		}
		select {
		case <-exited:
			return errors.New("redis-server exited")
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			s.Stop(syscall.SIGKILL)
			return os.ErrDeadlineExceeded
		}
	}
}

// ping reports whether a server at addr answers PING with PONG (not, for
// example, LOADING while it reads its data back).
func ping(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}

// Port returns the server's loopback port.
func (s *Server) Port() int { return s.port }

// Addr returns the server's host:port.
func (s *Server) Addr() string { return "127.0.0.1:" + strconv.Itoa(s.port) }

// Stop sends sig to the server and waits for it to exit: SIGTERM shuts it
// down cleanly (saving an RDB if save points are set), SIGKILL is a crash.
func (s *Server) Stop(sig syscall.Signal) {
	if s.cmd == nil || s.cmd.Process == nil {
		return
	}
	select {
	case <-s.exited:
		return
	default:
	}
	_ = s.cmd.Process.Signal(sig)
	select {
	case <-s.exited:
	case <-time.After(10 * time.Second):
		_ = s.cmd.Process.Kill()
		<-s.exited
	}
}

// Restart stops the server with sig and starts it again on the same port
// and data directory.
func (s *Server) Restart(sig syscall.Signal) {
	s.tb.Helper()
	s.Stop(sig)
	if err := s.start(); err != nil {
		s.tb.Fatalf("redis-server did not restart: %v\n%s", err, s.Log())
	}
}

// Client returns a client of the server, closed at the test's cleanup.
func (s *Server) Client(opt ...func(*redis.Options)) *redis.Client {
	o := &redis.Options{Addr: s.Addr()}
	for _, f := range opt {
		f(o)
	}
	c := redis.NewClient(o)
	s.tb.Cleanup(func() { _ = c.Close() })
	return c
}

// Log returns the server's log, to explain a failure to start.
func (s *Server) Log() string {
	b, _ := os.ReadFile(s.dir + "/redis.log")
	return string(b)
}
