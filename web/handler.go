package web

import (
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"

	"github.com/bloomkv/bloomkv"
)

// The limits on requests. A request past one is refused with a message
// naming it.
const (
	// MaxBodyBytes bounds a request body (the playground's).
	MaxBodyBytes = 128 << 10
	// MaxPlaygroundBits bounds the playground filter's m: a page draws every
	// bit.
	MaxPlaygroundBits = 4096
	// MaxPlaygroundProbes bounds its k.
	MaxPlaygroundProbes = 16
	// MaxWordBytes bounds a playground word.
	MaxWordBytes = 64
	// MaxWords bounds the words added to the playground filter, and
	// MaxChecks the words checked against it, per request.
	MaxWords  = 1000
	MaxChecks = 100
	// MaxKeyBytes bounds a key to explain.
	MaxKeyBytes = 1024
)

//go:embed static
var static embed.FS

// Options configure a Handler. The zero value, or nil, is the default.
type Options struct {
	// Events, if not nil, is the log of the DB's flushes and compactions
	// that the tree page lists: its Listener must be the DB's
	// Options.EventListener (see EventLog). Without it the page shows the
	// counters of Metrics and highlights new tables.
	Events *EventLog
	// Logger receives the errors the handler answers with a 500 status
	// (a failed read of the DB); nil means slog.Default().
	Logger *slog.Logger
}

// Handler returns the pages and API of the package doc for db, which the
// caller opened and closes; Handler never writes to it. With a nil db it
// serves the playground and the calculator, and the tree's endpoints answer
// 404 (FilterHandler).
func Handler(db *bloomkv.DB, opts *Options) http.Handler {
	s := &server{db: db}
	if opts != nil {
		s.events, s.log = opts.Events, opts.Logger
	}
	if s.log == nil {
		s.log = slog.Default()
	}
	files, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embedded tree is fixed at build time
	}
	mux := http.NewServeMux()
	page := func(name string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Cache-Control", "no-cache")
			http.ServeFileFS(w, r, files, name)
		}
	}
	mux.HandleFunc("GET /{$}", page("index.html"))
	mux.HandleFunc("GET /playground", page("playground.html"))
	mux.HandleFunc("GET /calc", page("calc.html"))
	mux.HandleFunc("GET /tree", page("tree.html"))
	mux.Handle("GET /static/", http.StripPrefix("/static/", http.FileServerFS(files)))
	mux.HandleFunc("/api/playground", s.only("POST", s.playground))
	mux.HandleFunc("/api/calc", s.only("GET", s.calc))
	mux.HandleFunc("/api/chart", s.only("GET", s.chart))
	mux.HandleFunc("/api/tree", s.only("GET", s.needDB(s.tree)))
	mux.HandleFunc("/api/explain", s.only("GET", s.needDB(s.explain)))
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, http.StatusNotFound, "no endpoint %s", r.URL.Path)
	})
	return securityHeaders(mux)
}

// FilterHandler returns the playground and the calculator alone: Handler
// without a DB.
func FilterHandler() http.Handler { return Handler(nil, nil) }

// server holds what the endpoints share.
type server struct {
	db     *bloomkv.DB
	events *EventLog
	log    *slog.Logger
}

// apiFunc is an endpoint: it returns the value to send as JSON, or an
// error; a *requestError sets the status, any other error is a 500.
type apiFunc func(r *http.Request) (any, error)

// requestError is a refused request: its status and the reason shown.
type requestError struct {
	status int
	msg    string
}

func (e *requestError) Error() string { return e.msg }

func badRequest(format string, args ...any) error {
	return &requestError{http.StatusBadRequest, fmt.Sprintf(format, args...)}
}

// only serves fn for the one method, answering others 405.
func (s *server) only(method string, fn apiFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if r.Method != method {
			w.Header().Set("Allow", method)
			writeError(w, http.StatusMethodNotAllowed, "%s %s: use %s", r.Method, r.URL.Path, method)
			return
		}
		v, err := fn(r)
		var re *requestError
		switch {
		case errors.As(err, &re):
			writeError(w, re.status, "%s", re.msg)
		case errors.Is(err, bloomkv.ErrClosed):
			writeError(w, http.StatusServiceUnavailable, "the database is closed")
		case err != nil:
			s.log.Error("bloomkv web", "path", r.URL.Path, "err", err)
			writeError(w, http.StatusInternalServerError, "%s: %v", r.URL.Path, err)
		default:
			writeJSON(w, http.StatusOK, v)
		}
	}
}

// needDB answers 404 when the handler has no DB.
func (s *server) needDB(fn apiFunc) apiFunc {
	return func(r *http.Request) (any, error) {
		if s.db == nil {
			return nil, &requestError{http.StatusNotFound, "no database: this server shows the filter pages only"}
		}
		return fn(r)
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status, b = http.StatusInternalServerError, []byte(`{"error":"encoding the answer failed"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	w.Write(append(b, '\n'))
}

func writeError(w http.ResponseWriter, status int, format string, args ...any) {
	writeJSON(w, status, map[string]string{"error": fmt.Sprintf(format, args...)})
}

// securityHeaders keeps the pages to their own origin's scripts and styles,
// out of other sites' frames, and their content types as sent.
func securityHeaders(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; frame-ancestors 'none'")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		h.ServeHTTP(w, r)
	})
}
