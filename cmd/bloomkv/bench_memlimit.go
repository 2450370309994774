package main

import (
	"fmt"
	"io"
	"os"

	"github.com/bloomkv/bloomkv/internal/humanize"
	"github.com/bloomkv/bloomkv/internal/memcg"
)

// memcgEnv is set, to its group's directory, in the environment of the
// child that `bench -memlimit` runs in a memory cgroup: the child runs the
// workloads, where the parent made the group and runs nothing else.
const memcgEnv = "BLOOMKV_BENCH_MEMCG"

// runCapped runs bench with args again, as a child process inside a
// memory cgroup of limit bytes (package memcg) that it makes for it and
// removes after, and then prints what the group counted: its peak (the
// process and its page cache) and the processes its OOM killer killed.
// The child's output is stdout's; its errors go to this process's stderr.
func runCapped(args []string, stdout io.Writer, limit int64) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("-memlimit: %w", err)
	}
	g, err := memcg.New(limit)
	if err != nil {
		return fmt.Errorf("-memlimit: %w", err)
	}
	cmd := g.Command(exe, append([]string{"bench"}, args...)...)
	cmd.Env = append(os.Environ(), memcgEnv+"="+g.Dir)
	cmd.Stdout, cmd.Stderr = stdout, os.Stderr
	runErr := cmd.Run()
	s, statsErr := g.Stats()
	if err := g.Remove(); err != nil {
		return fmt.Errorf("-memlimit: %w", err)
	}
	if runErr != nil {
		_, err := g.Killed(runErr, s)
		return fmt.Errorf("-memlimit: the run in its memory cgroup: %w", err)
	}
	if statsErr != nil {
		return fmt.Errorf("-memlimit: %w", statsErr)
	}
	fmt.Fprintf(stdout, "memory cgroup (-memlimit): limit %s, peak %s (the process and its page cache)\n",
		humanize.Bytes(uint64(limit)), peak(s.Peak))
	return nil
}

// peak formats a group's peak, "not counted" where the kernel does not.
func peak(b int64) string {
	if b < 0 {
		return "not counted"
	}
	return humanize.Bytes(uint64(b))
}
