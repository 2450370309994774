package node

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
	"strconv"
	"unicode/utf8"

	"github.com/hashicorp/raft"

	"github.com/bloomkv/bloomkv"
	"github.com/bloomkv/bloomkv/raftstore"
	"github.com/bloomkv/bloomkv/raftstore/api"
)

const (
	defaultScanLimit = 100
	maxScanLimit     = 10000
)

func (n *Node) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("PUT /kv/{key...}", n.write(n.putCmd))
	mux.HandleFunc("DELETE /kv/{key...}", n.write(n.deleteCmd))
	mux.HandleFunc("POST /batch", n.write(n.batchCmd))
	mux.HandleFunc("POST /cas", n.write(n.casCmd))
	mux.HandleFunc("GET /kv/{key...}", n.read(n.get))
	mux.HandleFunc("GET /scan", n.read(n.scan))
	mux.HandleFunc("POST /join", n.write(n.joinCmd))
	mux.HandleFunc("DELETE /nodes/{id}", n.write(n.removeCmd))
	mux.HandleFunc("GET /status", n.status)
	return mux
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func (n *Node) fail(w http.ResponseWriter, status int, code string, err error) {
	writeJSON(w, status, api.Error{Error: err.Error(), Code: code, Leader: w.Header().Get(api.HeaderLeader)})
}

// body reads a request's body up to Config.MaxBodySize.
func (n *Node) body(w http.ResponseWriter, r *http.Request) ([]byte, bool) {
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, n.cfg.MaxBodySize))
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		n.fail(w, http.StatusRequestEntityTooLarge, api.CodeTooLarge, fmt.Errorf("body over %d bytes", tooBig.Limit))
		return nil, false
	case err != nil:
		n.fail(w, http.StatusBadRequest, api.CodeBadRequest, fmt.Errorf("reading the body: %w", err))
		return nil, false
	}
	return b, true
}

func decodeJSON(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("JSON body: %w", err)
	}
	if d.More() {
		return errors.New("JSON body: more than one value")
	}
	return nil
}

// decodeBytes returns s, or what it encodes in base64 if b64.
func decodeBytes(what, s string, b64 bool) ([]byte, error) {
	if !b64 {
		return []byte(s), nil
	}
	v, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("%s: not standard base64: %w", what, err)
	}
	return v, nil
}

// entry encodes a key and value as an Entry; a nil value is left out.
func entry(k, v []byte) api.Entry {
	e := api.Entry{Key: string(k)}
	if !utf8.Valid(k) || v != nil && !utf8.Valid(v) {
		e.Key, e.Base64 = base64.StdEncoding.EncodeToString(k), true
	}
	if v != nil {
		s := string(v)
		if e.Base64 {
			s = base64.StdEncoding.EncodeToString(v)
		}
		e.Value = &s
	}
	return e
}

// A command builder turns a write request into a raft command, or a
// request to change the membership (apply set), or an error for a bad
// request.
type command struct {
	cmd   []byte
	apply func() (uint64, error) // a membership change, instead of cmd
	cas   bool
}

func (n *Node) putCmd(r *http.Request, body []byte) (command, error) {
	return command{cmd: raftstore.AppendSet(nil, []byte(r.PathValue("key")), body)}, nil
}

func (n *Node) deleteCmd(r *http.Request, _ []byte) (command, error) {
	return command{cmd: raftstore.AppendDelete(nil, []byte(r.PathValue("key")))}, nil
}

func (n *Node) batchCmd(_ *http.Request, body []byte) (command, error) {
	var req api.BatchRequest
	if err := decodeJSON(body, &req); err != nil {
		return command{}, err
	}
	if len(req.Ops) == 0 {
		return command{}, errors.New("ops: empty")
	}
	var cmd []byte
	for i, op := range req.Ops {
		k, err := decodeBytes(fmt.Sprintf("ops[%d].key", i), op.Key, op.Base64)
		if err != nil {
			return command{}, err
		}
		switch op.Op {
		case "put":
			if op.Value == nil {
				return command{}, fmt.Errorf("ops[%d]: put without a value", i)
			}
			v, err := decodeBytes(fmt.Sprintf("ops[%d].value", i), *op.Value, op.Base64)
			if err != nil {
				return command{}, err
			}
			cmd = raftstore.AppendSet(cmd, k, v)
		case "delete":
			if op.Value != nil {
				return command{}, fmt.Errorf("ops[%d]: delete with a value", i)
			}
			cmd = raftstore.AppendDelete(cmd, k)
		default:
			return command{}, fmt.Errorf("ops[%d].op: %q, want \"put\" or \"delete\"", i, op.Op)
		}
	}
	return command{cmd: cmd}, nil
}

func (n *Node) casCmd(_ *http.Request, body []byte) (command, error) {
	var req api.CASRequest
	if err := decodeJSON(body, &req); err != nil {
		return command{}, err
	}
	k, err := decodeBytes("key", req.Key, req.Base64)
	if err != nil {
		return command{}, err
	}
	var want []byte
	if req.Expected != nil {
		if want, err = decodeBytes("expected", *req.Expected, req.Base64); err != nil {
			return command{}, err
		}
		if want == nil {
			want = []byte{}
		}
	}
	cmd := raftstore.AppendCompare(nil, k, want)
	if req.Value == nil {
		cmd = raftstore.AppendDelete(cmd, k)
	} else {
		v, err := decodeBytes("value", *req.Value, req.Base64)
		if err != nil {
			return command{}, err
		}
		cmd = raftstore.AppendSet(cmd, k, v)
	}
	return command{cmd: cmd, cas: true}, nil
}

func (n *Node) joinCmd(_ *http.Request, body []byte) (command, error) {
	var req api.JoinRequest
	if err := decodeJSON(body, &req); err != nil {
		return command{}, err
	}
	if req.ID == "" || req.RaftAddr == "" {
		return command{}, errors.New("join: id and raft_addr are required")
	}
	return command{apply: func() (uint64, error) {
		f := n.r.AddVoter(raft.ServerID(req.ID), raft.ServerAddress(req.RaftAddr), 0, n.cfg.ApplyTimeout)
		err := f.Error() // before Index, which raft sets until then
		return f.Index(), err
	}}, nil
}

func (n *Node) removeCmd(r *http.Request, _ []byte) (command, error) {
	id := r.PathValue("id")
	return command{apply: func() (uint64, error) {
		f := n.r.RemoveServer(raft.ServerID(id), 0, n.cfg.ApplyTimeout)
		err := f.Error() // before Index, which raft sets until then
		return f.Index(), err
	}}, nil
}

// setLeader puts the leader's HTTP address, if known, in the response's
// headers.
func (n *Node) setLeader(w http.ResponseWriter) string {
	l := n.leaderHTTP()
	if l != "" {
		w.Header().Set(api.HeaderLeader, l)
	}
	return l
}

// write serves a write: the leader applies it through raft; a follower
// forwards it to the leader, once.
func (n *Node) write(build func(*http.Request, []byte) (command, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		leader := n.setLeader(w)
		body, ok := n.body(w, r)
		if !ok {
			return
		}
		c, err := build(r, body)
		if err == nil && c.cmd != nil {
			err = raftstore.CheckCommand(c.cmd)
		}
		if err != nil {
			n.fail(w, http.StatusBadRequest, api.CodeBadRequest, err)
			return
		}
		if n.r.State() != raft.Leader {
			n.forward(w, r, body, leader)
			return
		}
		var index uint64
		var resp any
		if c.apply != nil {
			index, err = c.apply()
		} else {
			f := n.r.Apply(c.cmd, n.cfg.ApplyTimeout)
			err = f.Error()
			index, resp = f.Index(), f.Response()
		}
		switch {
		case errors.Is(err, raft.ErrNotLeader) || errors.Is(err, raft.ErrEnqueueTimeout):
			// Nothing was appended: another node may take it.
			n.fail(w, http.StatusServiceUnavailable, api.CodeNotLeader, err)
		case err != nil:
			n.fail(w, http.StatusServiceUnavailable, api.CodeUnknownOutcome, err)
		case c.cas && (resp == nil || resp == raftstore.ErrCompareFailed):
			writeJSON(w, http.StatusOK, api.CASResponse{OK: resp == nil, Index: index})
		case resp != nil:
			// Committed, but the checks above leave only a failed write of
			// the leader's state DB for the FSM's error: the other nodes
			// apply it, this one stops applying (see FSM.ApplyBatch).
			n.fail(w, http.StatusInternalServerError, api.CodeUnknownOutcome, fmt.Errorf("committed at index %d, but the leader's state failed: %v", index, resp))
		default:
			writeJSON(w, http.StatusOK, api.WriteResponse{Index: index})
		}
	}
}

// forward sends a request to the leader and copies its answer, or answers
// not_leader when there is none to send it to, or it was forwarded already.
func (n *Node) forward(w http.ResponseWriter, r *http.Request, body []byte, leader string) {
	if leader == "" || leader == n.cfg.HTTPAdvertise || r.Header.Get(api.HeaderForwarded) != "" {
		n.fail(w, http.StatusServiceUnavailable, api.CodeNotLeader, errors.New("this node is not the leader and knows of no other"))
		return
	}
	req, err := http.NewRequestWithContext(r.Context(), r.Method, "http://"+leader+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		n.fail(w, http.StatusInternalServerError, api.CodeBadRequest, err)
		return
	}
	req.Header.Set(api.HeaderForwarded, n.cfg.ID)
	req.Header.Set("Content-Type", r.Header.Get("Content-Type"))
	resp, err := n.fwd.Do(req)
	if err != nil {
		// A write the leader may have taken has an unknown outcome; one
		// never sent (the leader's port refused it) is not_leader.
		var op *net.OpError
		code := api.CodeUnknownOutcome
		switch {
		case r.Method == http.MethodGet:
			code = api.CodeUnavailable
		case errors.As(err, &op) && op.Op == "dial":
			code = api.CodeNotLeader
		}
		n.fail(w, http.StatusServiceUnavailable, code, fmt.Errorf("forwarding to the leader %s: %w", leader, err))
		return
	}
	defer resp.Body.Close()
	for _, h := range []string{"Content-Type", api.HeaderRead} {
		if v := resp.Header.Get(h); v != "" {
			w.Header().Set(h, v)
		}
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// read serves a read: stale=true answers from the local state; otherwise
// the leader answers after readIndex, and a follower forwards it.
func (n *Node) read(serve func(http.ResponseWriter, *http.Request, string)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		leader := n.setLeader(w)
		stale, err := boolParam(r, "stale")
		if err != nil {
			n.fail(w, http.StatusBadRequest, api.CodeBadRequest, err)
			return
		}
		if stale {
			serve(w, r, "stale")
			return
		}
		if !unsafeLocalReads && n.r.State() != raft.Leader {
			n.forward(w, r, nil, leader)
			return
		}
		ctx, cancel := context.WithTimeout(r.Context(), n.cfg.ApplyTimeout)
		defer cancel()
		if err := n.readIndex(ctx); err != nil {
			n.fail(w, http.StatusServiceUnavailable, api.CodeUnavailable, fmt.Errorf("confirming leadership: %w", err))
			return
		}
		serve(w, r, "linearizable")
	}
}

func boolParam(r *http.Request, name string) (bool, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return false, fmt.Errorf("%s=%q: want true or false", name, s)
	}
	return b, nil
}

// get answers GET /kv/{key} with the value's bytes as the body.
func (n *Node) get(w http.ResponseWriter, r *http.Request, how string) {
	w.Header().Set(api.HeaderRead, how)
	key := r.PathValue("key")
	v, err := n.fsm.Get([]byte(key))
	switch {
	case errors.Is(err, bloomkv.ErrNotFound):
		n.fail(w, http.StatusNotFound, api.CodeNotFound, fmt.Errorf("key %q not found", key))
	case err != nil:
		n.fail(w, http.StatusInternalServerError, api.CodeUnavailable, err)
	default:
		w.Header().Set("Content-Type", "application/octet-stream")
		_, _ = w.Write(v)
	}
}

// scan answers GET /scan?lo=&hi=&limit=: the entries in [lo, hi) in key
// order (hi empty: no upper bound), at most limit of them.
func (n *Node) scan(w http.ResponseWriter, r *http.Request, how string) {
	w.Header().Set(api.HeaderRead, how)
	q := r.URL.Query()
	b64, err := boolParam(r, "base64")
	var lo, hi []byte
	if err == nil {
		lo, err = decodeBytes("lo", q.Get("lo"), b64)
	}
	if err == nil && q.Get("hi") != "" {
		hi, err = decodeBytes("hi", q.Get("hi"), b64)
	}
	limit := defaultScanLimit
	if err == nil && q.Get("limit") != "" {
		limit, err = strconv.Atoi(q.Get("limit"))
		if err != nil || limit < 1 || limit > maxScanLimit {
			err = fmt.Errorf("limit=%q: want an integer in [1, %d]", q.Get("limit"), maxScanLimit)
		}
	}
	if err != nil {
		n.fail(w, http.StatusBadRequest, api.CodeBadRequest, err)
		return
	}
	resp := api.ScanResponse{Entries: []api.Entry{}, Read: how}
	errLimit := errors.New("limit")
	err = n.fsm.Scan(lo, hi, func(k, v []byte) error {
		if len(resp.Entries) == limit {
			resp.More = true
			return errLimit
		}
		resp.Entries = append(resp.Entries, entry(k, v))
		return nil
	})
	if err != nil && err != errLimit {
		n.fail(w, http.StatusInternalServerError, api.CodeUnavailable, err)
		return
	}
	writeJSON(w, http.StatusOK, resp)
}

// status answers GET /status from this node's view.
func (n *Node) status(w http.ResponseWriter, _ *http.Request) {
	leaderAddr, leaderID := n.r.LeaderWithID()
	st := api.Status{
		ID:           n.cfg.ID,
		State:        n.r.State().String(),
		Term:         n.r.CurrentTerm(),
		LeaderID:     string(leaderID),
		AppliedIndex: n.fsm.AppliedIndex(),
		CommitIndex:  n.r.CommitIndex(),
		LastIndex:    n.r.LastIndex(),
		Servers:      []api.Server{},
	}
	if leaderAddr != "" {
		st.Leader = n.leaderHTTP()
	}
	if f := n.r.GetConfiguration(); f.Error() == nil {
		for _, s := range f.Configuration().Servers {
			st.Servers = append(st.Servers, api.Server{ID: string(s.ID), RaftAddr: string(s.Address), Suffrage: s.Suffrage.String()})
		}
	}
	m, err := n.fsm.Metrics()
	if err != nil {
		n.fail(w, http.StatusServiceUnavailable, api.CodeUnavailable, err)
		return
	}
	st.Metrics = m
	writeJSON(w, http.StatusOK, st)
}
