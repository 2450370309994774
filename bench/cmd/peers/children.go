package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/bloomkv/bloomkv/bench/peers"
)

// benchModule is the module of this command, which buildChildren builds
// from the current directory: the go command must find this module there.
const benchModule = "github.com/bloomkv/bloomkv/bench"

// binary is an executable that engines' children run.
type binary struct {
	// Path is where it was: gone after the run (a temporary file, or the
	// runner's executable), so not recorded.
	Path string `json:"-"`
	// Size is its size in bytes.
	Size int64
	// Shared: it is the runner's own executable, every engine linked in
	// (-shared-binary), not one built with the child's engine alone.
	Shared bool
}

// sharedBinary returns this executable as the binary of every engine's
// child (-shared-binary).
func sharedBinary(es []peers.Engine) (map[string]*binary, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("-shared-binary: %w", err)
	}
	fi, err := os.Stat(exe)
	if err != nil {
		return nil, fmt.Errorf("-shared-binary: %w", err)
	}
	b := &binary{Path: exe, Size: fi.Size(), Shared: true}
	bins := make(map[string]*binary)
	for _, e := range es {
		bins[e.Name] = b
	}
	return bins, nil
}

// buildChildren builds into dir the binary each engine's child runs: this
// command, built by the go command on PATH with tags peers_single and
// peers_ENGINE, so that it links in that engine's adapter and not the
// others' (package peers' Build tags). It builds every one before any
// engine runs, so that a failed build stops the run before it starts, and
// reports each binary's size on stderr.
func buildChildren(es []peers.Engine, dir string, stderr io.Writer) (map[string]*binary, error) {
	const how = "run from the bench module's directory, or pass -shared-binary"
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("building each engine's child needs the go command: %w (or pass -shared-binary)", err)
	}
	// The go command builds the package path in the module (or workspace)
	// of the current directory, which must then be this command's.
	out, err := exec.Command(goCmd, "list", "-m").CombinedOutput()
	if err != nil || !slices.Contains(strings.Fields(string(out)), benchModule) {
		wd, _ := os.Getwd()
		said := strings.TrimSpace(string(out))
		if said == "" && err != nil {
			said = err.Error()
		}
		return nil, fmt.Errorf("building each engine's child: the current directory %s is not in module %s (go list -m: %s): %s", wd, benchModule, said, how)
	}
	bins := make(map[string]*binary)
	for _, e := range es {
		if bins[e.Name] != nil {
			continue // -engines named it twice
		}
		start := time.Now()
		path := filepath.Join(dir, "peers-"+e.Name)
		tags := "peers_single,peers_" + e.Name
		cmd := exec.Command(goCmd, "build", "-tags", tags, "-o", path, benchModule+"/cmd/peers")
		if out, err := cmd.CombinedOutput(); err != nil {
			return nil, fmt.Errorf("building %s's child: go build -tags %s: %w\n%s", e.Name, tags, err, out)
		}
		fi, err := os.Stat(path)
		if err != nil {
			return nil, fmt.Errorf("building %s's child: %w", e.Name, err)
		}
		bins[e.Name] = &binary{Path: path, Size: fi.Size()}
		fmt.Fprintf(stderr, "built %s's child (go build -tags %s): %s B (%.1f MiB) in %s\n",
			e.Name, tags, fmtCount(int(fi.Size())), mib(fi.Size()), time.Since(start).Round(time.Millisecond))
	}
	return bins, nil
}

// binariesNote is the peak RSS note's sentence on the binaries the runs'
// children ran and their sizes; "" if the runs do not say (a peers.json
// written before they were recorded).
func binariesNote(runs []engineRun) string {
	var sizes []string
	for _, r := range runs {
		if r.Binary == nil {
			return ""
		}
		if r.Binary.Shared {
			return fmt.Sprintf("\n Each child ran the runner's own binary, every engine linked in (-shared-binary): %s B.", fmtCount(int(r.Binary.Size)))
		}
		sizes = append(sizes, fmt.Sprintf("%s %s B", r.Name, fmtCount(int(r.Binary.Size))))
	}
	return "\n Each child ran a binary built with its engine's adapter alone: " + strings.Join(sizes, ", ") + "."
}
