// Package node is bloomkv-node's server: one node of a bloomkv cluster
// replicated by hashicorp/raft, with raft's log in a raftstore.Store (or a
// LogStore of the caller's), the replicated state in a raftstore.FSM,
// raft's TCP transport on one address and the HTTP API of package api on
// another. It adds no consensus of its own: raft orders the writes, and
// the FSM applies them — compare-and-sets decided there — in that order on
// every node.
//
// Writes go through raft on the leader; a follower forwards a request to
// the leader once, having learnt its HTTP address from the leader's raft
// port: the transport's listener answers a connection whose first byte is
// 'H' with the node's HTTP address, and hands every other to raft.
//
// Reads are linearizable unless stale=true: the leader takes its commit
// index, confirms its leadership with a round of heartbeats
// (raft.VerifyLeader), and answers once its FSM has applied that index
// (see readIndex). A follower forwards them.
//
// The tests check it with porcupine over three node processes whose raft
// links pass through proxies that drop traffic on demand, while nodes are
// killed and restarted.
package node
