package main

// The documentation's code, checked: every Go block of the repository's
// Markdown files builds, and every console walk prints what it shows.

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/bloomkv/bloomkv/internal/race"
)

// repoRoot is the repository's root, as an absolute path (tests change
// directory).
var repoRoot = func() string {
	dir, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		panic(err)
	}
	return dir
}()

// mdBlock is one fenced block of a Markdown file.
type mdBlock struct {
	file  string // relative to repoRoot
	line  int    // the line of the opening fence, from 1
	info  string // the fence's info string: "go", "console", …
	given string // a "<!-- go: given PARAMS -->" line just before the fence, PARAMS only
	body  string
}

func (b mdBlock) String() string { return fmt.Sprintf("%s:%d", b.file, b.line) }

// givenRE matches the comment that names the variables a Go fragment
// uses without declaring them, as a parameter list: they stand for what
// the reader's program has at that point.
var givenRE = regexp.MustCompile(`^<!-- go: given (.+) -->$`)

// markdownBlocks returns the fenced blocks of every Markdown file in the
// repository, in file order.
func markdownBlocks(t *testing.T) []mdBlock {
	t.Helper()
	var blocks []mdBlock
	err := filepath.WalkDir(repoRoot, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) && path != repoRoot {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".md") {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, path)
		blocks = append(blocks, parseBlocks(rel, string(data))...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return blocks
}

// parseBlocks returns the fenced blocks of one Markdown file; a fence is a
// line that begins with three backquotes.
func parseBlocks(file, text string) []mdBlock {
	var (
		blocks []mdBlock
		cur    *mdBlock
		body   strings.Builder
		prev   string
	)
	sc := bufio.NewScanner(strings.NewReader(text))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &mdBlock{file: file, line: n, info: strings.TrimSpace(line[3:])}
			if m := givenRE.FindStringSubmatch(prev); m != nil {
				cur.given = m[1]
			}
			body.Reset()
		case cur != nil && strings.HasPrefix(line, "```"):
			cur.body = body.String()
			blocks = append(blocks, *cur)
			cur = nil
		case cur != nil:
			body.WriteString(line + "\n")
		}
		prev = line
	}
	return blocks
}

// fragmentImports maps the package names a Go fragment may use to their
// import paths; a fragment imports those it names.
var fragmentImports = map[string]string{
	"bloomkv":     "github.com/bloomkv/bloomkv",
	"bloom":       "github.com/bloomkv/bloomkv/bloom",
	"redisbloom":  "github.com/bloomkv/bloomkv/bloom/redisbloom",
	"fuse":        "github.com/bloomkv/bloomkv/fuse",
	"ribbon":      "github.com/bloomkv/bloomkv/ribbon",
	"rangefilter": "github.com/bloomkv/bloomkv/rangefilter",
	"vfs":         "github.com/bloomkv/bloomkv/vfs",
	"web":         "github.com/bloomkv/bloomkv/web",
	"raftstore":   "github.com/bloomkv/bloomkv/raftstore",
	"client":      "github.com/bloomkv/bloomkv/raftstore/client",
	"raft":        "github.com/hashicorp/raft",
	"redis":       "github.com/redis/go-redis/v9",
	"bytes":       "bytes",
	"context":     "context",
	"errors":      "errors",
	"fmt":         "fmt",
	"http":        "net/http",
	"log":         "log",
	"os":          "os",
	"slog":        "log/slog",
	"strings":     "strings",
	"time":        "time",
}

var qualifiedRE = regexp.MustCompile(`\b([a-z][a-z0-9]*)\.[A-Za-z_]`)

// goSource returns the Go file a block stands for: the block itself when
// it is a whole file, else the block as the body of a function of its
// given parameters, in a file that imports the packages it names.
func goSource(b mdBlock, pkg string) string {
	if strings.HasPrefix(b.body, "package ") || strings.Contains(b.body, "\npackage ") {
		return b.body
	}
	names := map[string]bool{}
	for _, m := range qualifiedRE.FindAllStringSubmatch(b.given+"\n"+b.body, -1) {
		if _, ok := fragmentImports[m[1]]; ok {
			names[m[1]] = true
		}
	}
	var imports []string
	for n := range names {
		imports = append(imports, fmt.Sprintf("%q", fragmentImports[n]))
	}
	sort.Strings(imports)
	return fmt.Sprintf("package %s\n\nimport (\n\t%s\n)\n\n// %s\nfunc _(%s) {\n%s}\n",
		pkg, strings.Join(imports, "\n\t"), b, b.given, b.body)
}

// moduleDir returns the module a Go source builds in: raftstore's when it
// imports raft or raftstore, the root module's otherwise.
func moduleDir(src string) string {
	if strings.Contains(src, `"github.com/hashicorp/raft"`) || strings.Contains(src, `"github.com/bloomkv/bloomkv/raftstore`) {
		return filepath.Join(repoRoot, "raftstore")
	}
	return repoRoot
}

// snippetName turns a block's place into a package directory name.
func snippetName(b mdBlock) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			return r
		}
		if r >= 'A' && r <= 'Z' {
			return r + 'a' - 'A'
		}
		return '_'
	}, fmt.Sprintf("%s_%d", b.file, b.line))
}

// goBuild builds the given Go files, keyed by their path inside dir's
// module (which need not exist: an overlay supplies them), with the go
// command's flags before the packages, built as this test binary was
// (race.GoFlags).
func goBuild(t *testing.T, dir string, files map[string]string, flags ...string) error {
	t.Helper()
	tmp := t.TempDir()
	overlay := map[string]map[string]string{"Replace": {}}
	pkgs := map[string]bool{}
	i := 0
	for path, src := range files {
		real := filepath.Join(tmp, fmt.Sprintf("%d.go", i))
		i++
		if err := os.WriteFile(real, []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		overlay["Replace"][filepath.Join(dir, path)] = real
		pkgs["./"+filepath.Dir(path)] = true
	}
	data, _ := json.Marshal(overlay)
	overlayFile := filepath.Join(tmp, "overlay.json")
	if err := os.WriteFile(overlayFile, data, 0o644); err != nil {
		t.Fatal(err)
	}
	args := append(append([]string{"build", "-overlay", overlayFile}, race.GoFlags()...), flags...)
	for p := range pkgs {
		args = append(args, p)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return nil
}

// TestDocsGoBlocksBuild builds every Go block of the repository's Markdown
// files: a whole file as its own package, a fragment as the body of a
// function (its free variables declared by a "<!-- go: given … -->" line
// before it). A block that does not compile fails the test with its place
// and the source built.
func TestDocsGoBlocksBuild(t *testing.T) {
	byModule := map[string]map[string]string{}
	var sources []string
	for _, b := range markdownBlocks(t) {
		if b.info != "go" {
			continue
		}
		name := snippetName(b)
		src := goSource(b, name)
		path := filepath.Join("internal", "docsnippets", name, "snippet.go")
		dir := moduleDir(src)
		if byModule[dir] == nil {
			byModule[dir] = map[string]string{}
		}
		byModule[dir][path] = src
		sources = append(sources, fmt.Sprintf("%s (%s):\n%s", b, path, src))
	}
	if len(sources) == 0 {
		t.Fatal("no Go block found in the Markdown files")
	}
	for dir, files := range byModule {
		if err := goBuild(t, dir, files, "-o", os.DevNull); err != nil {
			t.Errorf("%v\nthe blocks, as built:\n%s", err, strings.Join(sources, "\n"))
		}
	}
}

// TestDocsConsoleWalks runs every console block of the repository's
// Markdown files — lines "$ COMMAND" each followed by the output it
// prints — and compares each command's output with the block's, in a
// fresh directory per file. A command is "go run ." (the last whole
// program in a Go block above it in the file, built and run) or
// "bloomkv ARGS" (this tool, run in the process); any other command
// fails the test, so that a walk shown as a console block is a checked one.
func TestDocsConsoleWalks(t *testing.T) {
	blocks := markdownBlocks(t)
	walked := 0
	var program *mdBlock
	dirs := map[string]string{}
	for i, b := range blocks {
		if b.info == "go" && strings.HasPrefix(b.body, "package main") {
			program = &blocks[i]
		}
		if b.info != "console" {
			continue
		}
		walked++
		dir, ok := dirs[b.file]
		if !ok {
			dir = t.TempDir()
			dirs[b.file] = dir
		}
		t.Run(snippetName(b), func(t *testing.T) {
			t.Chdir(dir)
			for _, step := range consoleSteps(b.body) {
				got, err := runStep(t, step.command, program)
				if err != nil {
					t.Fatalf("%s: $ %s: %v", b, step.command, err)
				}
				if got != step.output {
					t.Fatalf("%s: $ %s printed\n%s\nwhere the block shows\n%s", b, step.command, got, step.output)
				}
			}
		})
	}
	if walked == 0 {
		t.Fatal("no console block found in the Markdown files")
	}
}

// consoleStep is one command of a console block and the output shown
// after it.
type consoleStep struct{ command, output string }

func consoleSteps(body string) []consoleStep {
	var steps []consoleStep
	for _, line := range strings.SplitAfter(body, "\n") {
		if cmd, ok := strings.CutPrefix(line, "$ "); ok {
			steps = append(steps, consoleStep{command: strings.TrimSpace(cmd)})
			continue
		}
		if len(steps) > 0 {
			steps[len(steps)-1].output += line
		}
	}
	return steps
}

// runStep runs one console command in the current directory and returns
// what it printed on standard output and standard error.
func runStep(t *testing.T, command string, program *mdBlock) (string, error) {
	t.Helper()
	args := strings.Fields(command)
	switch {
	case command == "go run .":
		if program == nil {
			return "", fmt.Errorf("no Go program above the walk")
		}
		bin := filepath.Join(t.TempDir(), "program")
		files := map[string]string{filepath.Join("internal", "docsnippets", "walk", "main.go"): program.body}
		if err := goBuild(t, repoRoot, files, "-o", bin); err != nil {
			return "", err
		}
		out, err := exec.Command(bin).CombinedOutput()
		return string(out), err
	case len(args) > 0 && args[0] == "bloomkv":
		var stdout, stderr bytes.Buffer
		if code := run(args[1:], &stdout, &stderr); code != 0 {
			return "", fmt.Errorf("exit %d: %s", code, stderr.String())
		}
		return stdout.String() + stderr.String(), nil
	}
	return "", fmt.Errorf("a console walk runs only \"go run .\" and \"bloomkv ARGS\"")
}
