package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bloomkv/bloomkv"
)

func TestWebErrors(t *testing.T) {
	empty := t.TempDir()
	for _, tc := range []struct {
		args     []string
		code     int
		mentions string
	}{
		{[]string{"web", "-db", empty, "-demo"}, 2, "-db and -demo exclude each other"},
		{[]string{"web", "-demo", "-rate", "0"}, 2, "-rate 0"},
		{[]string{"web", "-demo", "-rate", "100001"}, 2, "-rate 100001"},
		{[]string{"web", "extra"}, 2, "unexpected arguments"},
		{[]string{"web", "-db", empty}, 1, "holds no bloomkv database"},
		{[]string{"web", "-db", filepath.Join(empty, "missing")}, 1, "holds no bloomkv database"},
		{[]string{"web", "-addr", "127.0.0.1:99999"}, 1, "invalid port"},
	} {
		var stdout, stderr bytes.Buffer
		code := run(tc.args, &stdout, &stderr)
		if code != tc.code || !strings.Contains(stderr.String(), tc.mentions) {
			t.Errorf("%q: exit %d, stderr %q; want exit %d mentioning %q", tc.args, code, stderr.String(), tc.code, tc.mentions)
		}
	}
}

// snapshotDir returns every file of dir with its contents.
func snapshotDir(t *testing.T, dir string) map[string]string {
	t.Helper()
	files := map[string]string{}
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		files[path] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// TestWebReadOnly serves a database with -db, uses every endpoint, and
// checks that the directory is unchanged byte for byte once the server
// has shut down, and that the database was there to see.
func TestWebReadOnly(t *testing.T) {
	dir := t.TempDir()
	db, err := bloomkv.Open(dir, &bloomkv.Options{MemtableSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3000 {
		if err := db.Put([]byte(fmt.Sprintf("key%05d", i)), bytes.Repeat([]byte("v"), 50), bloomkv.NoSync); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.Close(); err != nil { // leaves the last writes in the WAL
		t.Fatal(err)
	}
	before := snapshotDir(t, dir)

	base, stop := startWeb(t, webConfig{addr: "127.0.0.1:0", dir: dir})
	{
		var tree struct {
			Levels []struct{ Tables []struct{ Entries uint64 } }
		}
		getJSON(t, base+"api/tree", &tree)
		var tables int
		for _, l := range tree.Levels {
			tables += len(l.Tables)
		}
		if tables == 0 {
			t.Errorf("the tree of %s shows no tables", dir)
		}
		var tr struct{ Found bool }
		getJSON(t, base+"api/explain?key=key02999", &tr)
		if !tr.Found {
			t.Error("explain key02999: not found")
		}
		resp, err := http.Post(base+"api/playground", "application/json", strings.NewReader(`{"m":64,"k":3,"words":["a"]}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("playground: %s", resp.Status)
		}
	}
	stop() // and the DB closed
	after := snapshotDir(t, dir)
	if len(after) != len(before) {
		t.Errorf("%d files after serving, %d before", len(after), len(before))
	}
	for path, b := range before {
		if after[path] != b {
			t.Errorf("%s changed", path)
		}
	}
}

func getJSON(t *testing.T, url string, v any) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %s: %s", url, resp.Status, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
}

// TestDemo runs the demo database until it has flushed and compacted, and
// checks that stopping it closes the database and removes its directory.
func TestDemo(t *testing.T) {
	d, err := startDemo(5000)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for m := d.db.Metrics(); m.Flushes == 0 || m.Compactions == 0; m = d.db.Metrics() {
		if time.Now().After(deadline) {
			t.Fatalf("after a minute: %d flushes, %d compactions", m.Flushes, m.Compactions)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := d.stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(d.dir); !os.IsNotExist(err) {
		t.Errorf("the demo's directory %s: %v, want it removed", d.dir, err)
	}
	if _, err := d.db.Get([]byte("user000001")); err != bloomkv.ErrClosed {
		t.Errorf("Get after stop: %v, want ErrClosed", err)
	}
}

// TestWebSIGINT runs `bloomkv web` and interrupts it as Ctrl-C does: the
// server shuts down and the command returns 0.
func TestWebSIGINT(t *testing.T) {
	r, w := io.Pipe()
	code := make(chan int, 1)
	var stderr bytes.Buffer
	go func() {
		code <- run([]string{"web", "-addr", "127.0.0.1:0"}, w, &stderr)
		w.Close()
	}()
	lines := bufio.NewScanner(r)
	if !lines.Scan() {
		t.Fatalf("no output; stderr %q", stderr.String())
	}
	line := lines.Text()
	i := strings.Index(line, "http://")
	if i < 0 {
		t.Fatalf("no address in %q", line)
	}
	base := strings.Fields(line[i:])[0]
	resp, err := http.Get(base + "calc")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %scalc: %s", base, resp.Status)
	}
	if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	var rest []string
	for lines.Scan() {
		rest = append(rest, lines.Text())
	}
	select {
	case c := <-code:
		if c != 0 || !strings.Contains(strings.Join(rest, "\n"), "stopped") {
			t.Errorf("exit %d, output %q, stderr %q; want 0 and stopped", c, rest, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("bloomkv web still running 10 s after SIGINT")
	}
	if _, err := http.Get(base + "calc"); err == nil {
		t.Error("the server still answers after SIGINT")
	}
}
