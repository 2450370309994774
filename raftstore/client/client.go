// Package client is a Go client of bloomkv-node's HTTP API (package node):
// it finds the leader (every response names it), retries a request that a
// node did not carry out on another node, and tells a write whose outcome
// is unknown (ErrUnknownOutcome) from one that failed.
//
//	c, _ := client.New([]string{"127.0.0.1:8001", "127.0.0.1:8002", "127.0.0.1:8003"}, nil)
//	err := c.Put(ctx, "greeting", []byte("hello"))
//	v, err := c.Get(ctx, "greeting") // linearizable
//	ok, err := c.CAS(ctx, "greeting", []byte("hello"), []byte("bye"))
package client

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/bloomkv/bloomkv/raftstore/api"
)

var (
	// ErrNotFound is wrapped by the error of a read of an absent key.
	ErrNotFound = errors.New("client: not found")
	// ErrUnknownOutcome is wrapped by the error of a write that may or may
	// not have been applied: the node lost its leadership, or the
	// connection, after taking it. Retrying it may apply it twice.
	ErrUnknownOutcome = errors.New("client: outcome unknown")
)

// APIError is an error answer of a node (api.Error) with its HTTP status.
type APIError struct {
	Status int
	Body   api.Error
}

func (e *APIError) Error() string {
	return fmt.Sprintf("bloomkv-node: %d %s: %s", e.Status, e.Body.Code, e.Body.Error)
}

// Is makes an APIError match ErrNotFound and ErrUnknownOutcome by its code.
func (e *APIError) Is(target error) bool {
	return target == ErrNotFound && e.Body.Code == api.CodeNotFound ||
		target == ErrUnknownOutcome && e.Body.Code == api.CodeUnknownOutcome
}

// Options configure a Client; the zero value is the default.
type Options struct {
	// Timeout bounds one HTTP request (default 10s).
	Timeout time.Duration
	// RetryFor bounds how long a request is tried on one node after
	// another while they answer that they could not carry it out — no
	// leader yet, during an election (default 5s, a few election timeouts).
	RetryFor time.Duration
	// Backoff is the pause before trying again after every node was tried
	// once (default 50ms).
	Backoff time.Duration
	// NoRedirect sends every request to the nodes in the order given, never
	// straight to the leader the answers name: the node forwards it (one
	// hop more). For a client that must go through one address (a load
	// balancer), or that spreads the forwarding over the nodes.
	NoRedirect bool
}

// Client sends requests to the nodes of one cluster. It is safe for
// concurrent use.
type Client struct {
	nodes []string
	opts  Options
	hc    *http.Client

	mu     sync.Mutex
	leader string // the last leader a node named
}

// New returns a client of the cluster whose nodes' HTTP addresses are
// nodes (host:port); opts may be nil.
func New(nodes []string, opts *Options) (*Client, error) {
	if len(nodes) == 0 {
		return nil, errors.New("client: no node addresses")
	}
	c := &Client{nodes: append([]string(nil), nodes...)}
	if opts != nil {
		c.opts = *opts
	}
	if c.opts.Timeout == 0 {
		c.opts.Timeout = 10 * time.Second
	}
	if c.opts.RetryFor == 0 {
		c.opts.RetryFor = 5 * time.Second
	}
	if c.opts.Backoff == 0 {
		c.opts.Backoff = 50 * time.Millisecond
	}
	c.hc = &http.Client{Timeout: c.opts.Timeout}
	return c, nil
}

// Leader returns the HTTP address of the leader a node last named, or "".
func (c *Client) Leader() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.leader
}

// target returns the node to try at the given attempt: the known leader
// first (unless NoRedirect), then the nodes in turn.
func (c *Client) target(attempt int) string {
	if l := c.Leader(); l != "" && attempt%2 == 0 && !c.opts.NoRedirect {
		return l
	}
	return c.nodes[attempt%len(c.nodes)]
}

// do sends a request, retrying on another node while none carries it out,
// and returns the response's body on a 2xx status.
func (c *Client) do(ctx context.Context, method, path string, body []byte, write bool) ([]byte, http.Header, error) {
	var last error
	deadline := time.Now().Add(c.opts.RetryFor)
	attempt := 0
	for ; attempt == 0 || time.Now().Before(deadline); attempt++ {
		if attempt > 0 && attempt%len(c.nodes) == 0 {
			select {
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			case <-time.After(c.opts.Backoff):
			}
		}
		addr := c.target(attempt)
		req, err := http.NewRequestWithContext(ctx, method, "http://"+addr+path, bytes.NewReader(body))
		if err != nil {
			return nil, nil, err
		}
		if body != nil {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := c.hc.Do(req)
		if err != nil {
			var op *net.OpError
			if write && !(errors.As(err, &op) && op.Op == "dial") {
				// Sent, perhaps taken: a write must not be sent again.
				return nil, nil, fmt.Errorf("%w: %s %s: %w", ErrUnknownOutcome, method, addr, err)
			}
			last = err
			c.setLeader("")
			continue
		}
		data, err := io.ReadAll(resp.Body)
		_ = resp.Body.Close()
		if l := resp.Header.Get(api.HeaderLeader); l != "" {
			c.setLeader(l)
		}
		if err != nil {
			if write {
				return nil, nil, fmt.Errorf("%w: %s %s: reading the answer: %w", ErrUnknownOutcome, method, addr, err)
			}
			last = err
			continue
		}
		if resp.StatusCode/100 == 2 {
			return data, resp.Header, nil
		}
		apiErr := &APIError{Status: resp.StatusCode}
		if err := json.Unmarshal(data, &apiErr.Body); err != nil {
			apiErr.Body = api.Error{Error: string(data)}
		}
		switch apiErr.Body.Code {
		case api.CodeNotLeader, api.CodeUnavailable:
			last = apiErr // not carried out: another node may
			continue
		}
		return nil, nil, apiErr
	}
	return nil, nil, fmt.Errorf("client: %s %s: no node carried it out in %d attempts over %v: %w", method, path, attempt, c.opts.RetryFor, last)
}

func (c *Client) setLeader(l string) {
	c.mu.Lock()
	c.leader = l
	c.mu.Unlock()
}

func kvPath(key string) string { return "/kv/" + url.PathEscape(key) }

// Put sets key to value.
func (c *Client) Put(ctx context.Context, key string, value []byte) error {
	if value == nil {
		value = []byte{}
	}
	_, _, err := c.do(ctx, http.MethodPut, kvPath(key), value, true)
	return err
}

// Delete deletes key.
func (c *Client) Delete(ctx context.Context, key string) error {
	_, _, err := c.do(ctx, http.MethodDelete, kvPath(key), nil, true)
	return err
}

// Get returns key's value, read linearizably through the leader, or an
// error wrapping ErrNotFound.
func (c *Client) Get(ctx context.Context, key string) ([]byte, error) {
	v, _, err := c.do(ctx, http.MethodGet, kvPath(key), nil, false)
	return v, err
}

// GetStale returns key's value from the first node that answers, from its
// local state, which may be behind the leader's.
func (c *Client) GetStale(ctx context.Context, key string) ([]byte, error) {
	v, _, err := c.do(ctx, http.MethodGet, kvPath(key)+"?stale=true", nil, false)
	return v, err
}

// CAS sets key to value if it holds expected, and reports whether it did.
// A nil expected asks for key to be absent; a nil value deletes key.
func (c *Client) CAS(ctx context.Context, key string, expected, value []byte) (bool, error) {
	req := api.CASRequest{Key: b64(key), Base64: true}
	if expected != nil {
		s := b64(string(expected))
		req.Expected = &s
	}
	if value != nil {
		s := b64(string(value))
		req.Value = &s
	}
	body, err := json.Marshal(req)
	if err != nil {
		return false, err
	}
	data, _, err := c.do(ctx, http.MethodPost, "/cas", body, true)
	if err != nil {
		return false, err
	}
	var resp api.CASResponse
	if err := json.Unmarshal(data, &resp); err != nil {
		return false, fmt.Errorf("%w: the answer %q: %w", ErrUnknownOutcome, data, err)
	}
	return resp.OK, nil
}

// Op is one operation of a Batch: a put of Value to Key, or, with Delete, a
// delete of Key.
type Op struct {
	Key    string
	Value  []byte
	Delete bool
}

// Batch applies ops atomically, in order.
func (c *Client) Batch(ctx context.Context, ops ...Op) error {
	var req api.BatchRequest
	for _, op := range ops {
		o := api.BatchOp{Op: "put", Entry: api.Entry{Key: b64(op.Key), Base64: true}}
		if op.Delete {
			o.Op = "delete"
		} else {
			v := b64(string(op.Value))
			o.Value = &v
		}
		req.Ops = append(req.Ops, o)
	}
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	_, _, err = c.do(ctx, http.MethodPost, "/batch", body, true)
	return err
}

// KV is a key and its value.
type KV struct {
	Key   string
	Value []byte
}

// Scan returns, linearizably, the pairs with keys in [lo, hi) in key order
// (hi "" for no upper bound), at most limit of them (0 for the node's
// default, 100), and whether more follow.
func (c *Client) Scan(ctx context.Context, lo, hi string, limit int) ([]KV, bool, error) {
	q := url.Values{"lo": {b64(lo)}, "base64": {"true"}}
	if hi != "" {
		q.Set("hi", b64(hi))
	}
	if limit > 0 {
		q.Set("limit", strconv.Itoa(limit))
	}
	data, _, err := c.do(ctx, http.MethodGet, "/scan?"+q.Encode(), nil, false)
	if err != nil {
		return nil, false, err
	}
	var resp api.ScanResponse
	if err := json.Unmarshal(data, &resp); err != nil {
		return nil, false, fmt.Errorf("client: scan: the answer: %w", err)
	}
	kvs := make([]KV, 0, len(resp.Entries))
	for _, e := range resp.Entries {
		kv, err := decodeEntry(e)
		if err != nil {
			return nil, false, err
		}
		kvs = append(kvs, kv)
	}
	return kvs, resp.More, nil
}

func decodeEntry(e api.Entry) (KV, error) {
	kv := KV{Key: e.Key}
	if e.Value != nil {
		kv.Value = []byte(*e.Value)
	}
	if !e.Base64 {
		return kv, nil
	}
	k, err := base64.StdEncoding.DecodeString(e.Key)
	if err == nil && e.Value != nil {
		kv.Value, err = base64.StdEncoding.DecodeString(*e.Value)
	}
	if err != nil {
		return KV{}, fmt.Errorf("client: scan: an entry's base64: %w", err)
	}
	kv.Key = string(k)
	return kv, nil
}

// Status returns the status of the node at addr (one of the cluster's or
// another).
func (c *Client) Status(ctx context.Context, addr string) (api.Status, error) {
	var st api.Status
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/status", nil)
	if err != nil {
		return st, err
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("client: status of %s: %s", addr, resp.Status)
	}
	return st, json.NewDecoder(resp.Body).Decode(&st)
}

// Join adds the node id, whose raft transport is at raftAddr, to the
// cluster as a voter.
func (c *Client) Join(ctx context.Context, id, raftAddr string) error {
	body, err := json.Marshal(api.JoinRequest{ID: id, RaftAddr: raftAddr})
	if err != nil {
		return err
	}
	_, _, err = c.do(ctx, http.MethodPost, "/join", body, true)
	return err
}

// Remove removes the node id from the cluster.
func (c *Client) Remove(ctx context.Context, id string) error {
	_, _, err := c.do(ctx, http.MethodDelete, "/nodes/"+url.PathEscape(id), nil, true)
	return err
}

func b64(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
