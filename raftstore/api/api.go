// Package api holds the types of bloomkv-node's HTTP API (package node),
// shared by the node and its Go client (package client), which so need not
// import raft.
//
//	PUT    /kv/{key}            body: the value          → WriteResponse
//	DELETE /kv/{key}                                     → WriteResponse
//	GET    /kv/{key}[?stale=true]                        → the value's bytes (header Bloomkv-Read)
//	POST   /batch               BatchRequest             → WriteResponse
//	POST   /cas                 CASRequest               → CASResponse
//	GET    /scan?lo=&hi=&limit=[&stale=true][&base64=true] → ScanResponse
//	POST   /join                JoinRequest              → WriteResponse
//	DELETE /nodes/{id}                                   → WriteResponse
//	GET    /status                                       → Status
//
// Every error is an Error in JSON with an HTTP status: 400 bad_request,
// 413 too_large, 404 not_found, 503 not_leader / unavailable /
// unknown_outcome, 500 unavailable (a read) or unknown_outcome (a write)
// when the node's own storage failed.
package api

import "github.com/bloomkv/bloomkv"

// The headers of the API's responses.
const (
	// HeaderLeader carries the HTTP address of the leader as the answering
	// node knows it (absent when it knows none).
	HeaderLeader = "Bloomkv-Leader"
	// HeaderRead says how a read was served: "linearizable" or "stale".
	HeaderRead = "Bloomkv-Read"
	// HeaderForwarded marks a request a follower forwarded to the leader,
	// which must not forward it again.
	HeaderForwarded = "Bloomkv-Forwarded"
)

// The codes of the API's JSON errors (Error.Code).
const (
	CodeBadRequest     = "bad_request"     // the request is malformed; nothing was done
	CodeTooLarge       = "too_large"       // the body is over the limit; nothing was done
	CodeNotFound       = "not_found"       // the key is absent
	CodeNotLeader      = "not_leader"      // no leader could take the request; nothing was done
	CodeUnknownOutcome = "unknown_outcome" // the write may or may not be applied
	CodeUnavailable    = "unavailable"     // a read could not be served; nothing was done
)

// Error is the JSON body of every error response.
type Error struct {
	Error  string `json:"error"`
	Code   string `json:"code"`
	Leader string `json:"leader,omitempty"` // the leader's HTTP address, if known
}

// Entry is a key and its value in JSON bodies. Key and Value are the bytes
// themselves when both are valid UTF-8, and their standard base64 encoding
// with Base64 set otherwise (in requests too, as the client chooses).
type Entry struct {
	Key    string  `json:"key"`
	Value  *string `json:"value,omitempty"`
	Base64 bool    `json:"base64,omitempty"`
}

// BatchOp is one operation of a POST /batch: Op "put" (with Value) or
// "delete", Key and Value encoded as in Entry.
type BatchOp struct {
	Op string `json:"op"`
	Entry
}

// BatchRequest is the body of POST /batch: its ops apply atomically, in
// order.
type BatchRequest struct {
	Ops []BatchOp `json:"ops"`
}

// CASRequest is the body of POST /cas: set Key to Value (delete it if Value
// is null) if it holds Expected (is absent if Expected is null). Key,
// Expected and Value are encoded as in Entry.
type CASRequest struct {
	Key      string  `json:"key"`
	Expected *string `json:"expected"`
	Value    *string `json:"value"`
	Base64   bool    `json:"base64,omitempty"`
}

// WriteResponse is the body of a successful write; Index is its raft log
// index.
type WriteResponse struct {
	Index uint64 `json:"index"`
}

// CASResponse is the body of POST /cas: OK says whether the condition held
// and the value was set.
type CASResponse struct {
	OK    bool   `json:"ok"`
	Index uint64 `json:"index"`
}

// ScanResponse is the body of GET /scan. More says the limit cut the scan
// short: the next scan starts after the last key.
type ScanResponse struct {
	Entries []Entry `json:"entries"`
	More    bool    `json:"more"`
	Read    string  `json:"read"`
}

// JoinRequest is the body of POST /join.
type JoinRequest struct {
	ID       string `json:"id"`
	RaftAddr string `json:"raft_addr"`
}

// Server is one server of the raft configuration in a Status.
type Server struct {
	ID       string `json:"id"`
	RaftAddr string `json:"raft_addr"`
	Suffrage string `json:"suffrage"`
}

// Status is the body of GET /status.
type Status struct {
	ID           string          `json:"id"`
	State        string          `json:"state"`
	Term         uint64          `json:"term"`
	Leader       string          `json:"leader"` // its HTTP address, "" if unknown
	LeaderID     string          `json:"leader_id"`
	AppliedIndex uint64          `json:"applied_index"` // the state's
	CommitIndex  uint64          `json:"commit_index"`
	LastIndex    uint64          `json:"last_index"`
	Servers      []Server        `json:"servers"`
	Metrics      bloomkv.Metrics `json:"metrics"`
}
