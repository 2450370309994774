package main

// web: the pages of package web on a local HTTP server.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/web"
)

// webConfig is what `bloomkv web` serves, from its flags.
type webConfig struct {
	addr string
	dir  string // -db: the database to show, opened read-only
	demo bool   // -demo: an in-process database filled by a writer
	rate int    // -demo: writes per second
}

// runWeb serves the filter playground and calculator, and the tree of the
// database in -db or of a demo one, until SIGINT or SIGTERM.
func runWeb(args []string, stdout io.Writer) error {
	fs := newFlagSet("web", "[flags]")
	var cfg webConfig
	fs.StringVar(&cfg.addr, "addr", "127.0.0.1:8080", "address to listen on; the default serves this machine only")
	fs.StringVar(&cfg.dir, "db", "", "show the tree of the database in `DIR`, opened read-only")
	fs.BoolVar(&cfg.demo, "demo", false, "show the tree of a demo database in a temporary directory, filled by a writer so that flushes and compactions happen")
	fs.IntVar(&cfg.rate, "rate", 400, "-demo: writes per second (and as many lookups), in [1, 100000]")
	if err := parse(fs, args); err != nil {
		return err
	}
	if cfg.dir != "" && cfg.demo {
		return usageError{errors.New("-db and -demo exclude each other: show a database, or the demo one")}
	}
	if cfg.rate < 1 || cfg.rate > 100_000 {
		return usageError{fmt.Errorf("-rate %d: want writes per second in [1, 100000]", cfg.rate)}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return serveWeb(ctx, cfg, stdout, nil)
}

// serveWeb serves cfg until ctx is done, then shuts the server down (the
// requests in flight may finish), stops the demo writer and closes the
// database. ready, if not nil, is called with the listening address once
// requests are accepted.
func serveWeb(ctx context.Context, cfg webConfig, stdout io.Writer, ready func(net.Addr)) (err error) {
	var db *bloomkv.DB
	var opts web.Options
	switch {
	case cfg.dir != "":
		if db, err = openDB(cfg.dir, readDB); err != nil {
			return err
		}
		defer closeDB(db, &err)
	case cfg.demo:
		// d is assigned, not declared here: a := would shadow the named
		// result err, and the deferred stop's error would be lost.
		var d *demo
		if d, err = startDemo(cfg.rate); err != nil {
			return err
		}
		defer func() {
			if cerr := d.stop(); err == nil {
				err = cerr
			}
		}()
		db, opts.Events = d.db, d.events
	}

	ln, err := net.Listen("tcp", cfg.addr)
	if err != nil {
		return err
	}
	srv := &http.Server{
		Handler:           web.Handler(db, &opts),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		WriteTimeout:      30 * time.Second,
		MaxHeaderBytes:    64 << 10,
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	what := "the filter pages"
	switch {
	case cfg.dir != "":
		what = "the filter pages and the tree of " + cfg.dir + " (read-only)"
	case cfg.demo:
		what = fmt.Sprintf("the filter pages and the tree of a demo database (%d writes/s)", cfg.rate)
	}
	fmt.Fprintf(stdout, "bloomkv web: serving %s at http://%s/ — Ctrl-C stops\n", what, ln.Addr())
	if ready != nil {
		ready(ln.Addr())
	}
	select {
	case err := <-served:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return fmt.Errorf("shutting the server down: %w", err)
	}
	<-served // http.ErrServerClosed
	fmt.Fprintln(stdout, "bloomkv web: stopped")
	return nil
}

func closeDB(db *bloomkv.DB, err *error) {
	if cerr := db.Close(); *err == nil && cerr != nil {
		*err = dbError(cerr)
	}
}

// demo is the -demo database: a small tree in a temporary directory, and a
// writer filling it at a gentle rate.
type demo struct {
	dir    string
	db     *bloomkv.DB
	events *web.EventLog
	done   chan struct{}
	wg     sync.WaitGroup
	err    error // the writer's, once done
}

// The demo's shape: a small memtable and small tables and levels, so that
// a few hundred writes a second flush every second or two, compact L0
// every few seconds and fill L1 to L3 within minutes.
const (
	demoKeys        = 100_000
	demoValueBytes  = 80
	demoMemtable    = 64 << 10
	demoTableSize   = 64 << 10
	demoBaseLevel   = 256 << 10
	demoMultiplier  = 4
	demoTicksPerSec = 50
)

// startDemo opens the demo database and starts its writer.
func startDemo(rate int) (*demo, error) {
	dir, err := os.MkdirTemp("", "bloomkv-demo-")
	if err != nil {
		return nil, err
	}
	d := &demo{dir: dir, events: web.NewEventLog(0), done: make(chan struct{})}
	d.db, err = bloomkv.Open(dir, &bloomkv.Options{
		MemtableSize:    demoMemtable,
		TargetFileSize:  demoTableSize,
		BaseLevelSize:   demoBaseLevel,
		LevelMultiplier: demoMultiplier,
		LevelSizing:     bloomkv.StaticLevelSizing,
		EventListener:   d.events.Listener(nil),
		// The events go to the page; only trouble goes to the terminal.
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		os.RemoveAll(dir)
		return nil, dbError(err)
	}
	d.wg.Add(1)
	go d.write(rate)
	return d, nil
}

// demoKey is the demo's i-th key; a lookup of demoKey(i)+"x" sorts
// between two keys of the tables and is never written, so it exercises
// the filters of every table whose range holds it.
func demoKey(i int) []byte { return fmt.Appendf(nil, "user%06d", i) }

// write runs the writer until stop: each tick a share of rate writes
// (one in twenty a delete) over demoKeys keys, and as many lookups, half
// of keys that may be present, half of keys never written.
func (d *demo) write(rate int) {
	defer d.wg.Done()
	rng := rand.New(rand.NewPCG(1, 2))
	tick := time.NewTicker(time.Second / demoTicksPerSec)
	defer tick.Stop()
	value := make([]byte, demoValueBytes)
	var owed float64
	for {
		select {
		case <-d.done:
			return
		case <-tick.C:
		}
		owed += float64(rate) / demoTicksPerSec
		for ; owed >= 1; owed-- {
			i := rng.IntN(demoKeys)
			var err error
			if rng.IntN(20) == 0 {
				err = d.db.Delete(demoKey(i), bloomkv.NoSync)
			} else {
				for j := range value {
					value[j] = 'a' + byte(rng.IntN(26))
				}
				err = d.db.Put(demoKey(i), value, bloomkv.NoSync)
			}
			if err == nil {
				key := demoKey(rng.IntN(demoKeys))
				if rng.IntN(2) == 0 {
					key = append(key, 'x')
				}
				if _, err = d.db.Get(key); errors.Is(err, bloomkv.ErrNotFound) {
					err = nil
				}
			}
			if err != nil {
				d.err = fmt.Errorf("demo writer: %w", err)
				return
			}
		}
	}
}

// stop stops the writer, closes the database and removes its directory.
func (d *demo) stop() error {
	close(d.done)
	d.wg.Wait()
	err := d.err
	if cerr := d.db.Close(); err == nil && cerr != nil {
		err = dbError(cerr)
	}
	if rerr := os.RemoveAll(d.dir); err == nil {
		err = rerr
	}
	return err
}
