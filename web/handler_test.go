package web

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// do serves one request and returns the status and the body, checking that
// an API answer is JSON (with a non-empty "error" on failure) and never
// carries a stack trace.
func do(t *testing.T, h http.Handler, method, target, body string) (int, []byte) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, r)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	out := rec.Body.Bytes()
	if strings.Contains(string(out), "goroutine ") || strings.Contains(string(out), ".go:") {
		t.Errorf("%s %s: the answer shows code: %.300s", method, target, out)
	}
	if strings.HasPrefix(target, "/api/") {
		if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
			t.Errorf("%s %s: Content-Type %q, want application/json", method, target, ct)
		}
		if rec.Code != http.StatusOK {
			var e struct{ Error string }
			if err := json.Unmarshal(out, &e); err != nil || e.Error == "" {
				t.Errorf("%s %s: status %d with body %q, want a JSON error", method, target, rec.Code, out)
			}
		}
	}
	return rec.Code, out
}

// get serves a GET of an API endpoint that must succeed and decodes it.
func get[T any](t *testing.T, h http.Handler, target string) T {
	t.Helper()
	var v T
	code, body := do(t, h, "GET", target, "")
	if code != http.StatusOK {
		t.Fatalf("GET %s: status %d: %s", target, code, body)
	}
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("GET %s: %v", target, err)
	}
	return v
}

// refusal is one request the handler must refuse, and how.
type refusal struct {
	method, target, body string
	status               int
	want                 string // in the error message
}

func checkRefusals(t *testing.T, h http.Handler, cases []refusal) {
	t.Helper()
	for _, c := range cases {
		name := c.method + " " + c.target
		if len(c.body) < 80 {
			name += " " + c.body
		}
		t.Run(name, func(t *testing.T) {
			code, body := do(t, h, c.method, c.target, c.body)
			if code != c.status {
				t.Fatalf("status %d, want %d: %s", code, c.status, body)
			}
			var e struct{ Error string }
			json.Unmarshal(body, &e)
			if !strings.Contains(e.Error, c.want) {
				t.Errorf("error %q, want it to say %q", e.Error, c.want)
			}
			// The pages show the error to the user: it speaks of the
			// request's fields, not of the server's Go.
			for _, goTerm := range []string{"Go struct", "json:", "invalid character", "Request.", "uint64", "bloom.", "encoding/hex", "strconv."} {
				if strings.Contains(e.Error, goTerm) {
					t.Errorf("error %q speaks Go (%q)", e.Error, goTerm)
				}
			}
		})
	}
}

// TestPages checks that every page and static file is served with its
// content type and the security headers, that no path reaches past the
// embedded files, and that unknown endpoints are JSON 404s.
func TestPages(t *testing.T) {
	h := FilterHandler()
	for _, c := range []struct{ path, ctype, contains string }{
		{"/", "text/html", "Filter playground"},
		{"/playground", "text/html", `id="bits"`},
		{"/calc", "text/html", `id="chart"`},
		{"/tree", "text/html", `id="levels"`},
		{"/static/style.css", "text/css", "svg.bits"},
		{"/static/common.js", "text/javascript", "function api("},
		{"/static/playground.js", "text/javascript", "api/playground"},
		{"/static/calc.js", "text/javascript", "api/calc"},
		{"/static/tree.js", "text/javascript", "api/explain"},
	} {
		req := httptest.NewRequest("GET", c.path, nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), c.ctype) ||
			!strings.Contains(rec.Body.String(), c.contains) {
			t.Errorf("GET %s: %d %q, want 200 %s holding %q", c.path, rec.Code, rec.Header().Get("Content-Type"), c.ctype, c.contains)
		}
		if rec.Header().Get("Content-Security-Policy") == "" || rec.Header().Get("X-Content-Type-Options") != "nosniff" {
			t.Errorf("GET %s: no security headers", c.path)
		}
	}
	for _, path := range []string{"/static/../handler.go", "/static/%2e%2e/handler.go", "/handler.go", "/static/nope.js", "/playground/x", "/etc/passwd"} {
		req := httptest.NewRequest("GET", path, nil)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code == http.StatusOK || strings.Contains(rec.Body.String(), "package web") {
			t.Errorf("GET %s: %d, %.100q: want no file", path, rec.Code, rec.Body.String())
		}
	}
	checkRefusals(t, h, []refusal{
		{"GET", "/api/nope", "", http.StatusNotFound, "no endpoint"},
		{"GET", "/api/tree", "", http.StatusNotFound, "no database"},
		{"GET", "/api/explain?key=a", "", http.StatusNotFound, "no database"},
		{"POST", "/api/tree", "", http.StatusMethodNotAllowed, "use GET"},
	})
}
