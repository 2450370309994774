package node

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/raft"
)

// askHTTP is the first byte of a connection to the raft port that asks for
// the node's HTTP address instead of carrying raft's RPCs. raft's own
// connections start with an RPC type, a small number (0–3 in
// hashicorp/raft v1.7), never 'H'.
const askHTTP = 'H'

// muxLayer is the raft transport's raft.StreamLayer: a TCP listener whose
// connections go to raft, except those opening with askHTTP, which it
// answers with the node's HTTP address (one line) and closes. So a node
// that knows the leader's raft address — all raft tells it — learns where
// to forward a client's request.
type muxLayer struct {
	ln        net.Listener
	advertise net.Addr
	httpAddr  string
	dial      func(addr string, timeout time.Duration) (net.Conn, error)

	conns     chan net.Conn
	closeOnce sync.Once
	closed    chan struct{}
}

var _ raft.StreamLayer = (*muxLayer)(nil)

func newMuxLayer(ln net.Listener, advertise net.Addr, httpAddr string, dial func(string, time.Duration) (net.Conn, error)) *muxLayer {
	m := &muxLayer{ln: ln, advertise: advertise, httpAddr: httpAddr, dial: dial,
		conns: make(chan net.Conn), closed: make(chan struct{})}
	go m.serve()
	return m
}

func (m *muxLayer) serve() {
	for {
		c, err := m.ln.Accept()
		if err != nil {
			m.Close()
			return
		}
		go m.route(c)
	}
}

// route reads a connection's first byte and answers it or hands it to raft.
func (m *muxLayer) route(c net.Conn) {
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	var first [1]byte
	if _, err := c.Read(first[:]); err != nil {
		_ = c.Close()
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	if first[0] == askHTTP {
		_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
		_, _ = fmt.Fprintf(c, "%s\n", m.httpAddr)
		_ = c.Close()
		return
	}
	select {
	case m.conns <- &prefixConn{Conn: c, first: first[0], unread: true}:
	case <-m.closed:
		_ = c.Close()
	}
}

func (m *muxLayer) Accept() (net.Conn, error) {
	select {
	case c := <-m.conns:
		return c, nil
	case <-m.closed:
		return nil, net.ErrClosed
	}
}

func (m *muxLayer) Close() error {
	var err error
	m.closeOnce.Do(func() {
		close(m.closed)
		err = m.ln.Close()
	})
	return err
}

func (m *muxLayer) Addr() net.Addr { return m.advertise }

func (m *muxLayer) Dial(addr raft.ServerAddress, timeout time.Duration) (net.Conn, error) {
	return m.dial(string(addr), timeout)
}

// askHTTPAddr asks the node whose raft transport is at raftAddr for its
// HTTP address.
func (m *muxLayer) askHTTPAddr(raftAddr string, timeout time.Duration) (string, error) {
	c, err := m.dial(raftAddr, timeout)
	if err != nil {
		return "", err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte{askHTTP}); err != nil {
		return "", err
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		return "", err
	}
	addr := strings.TrimSuffix(line, "\n")
	if addr == "" {
		return "", errors.New("empty HTTP address")
	}
	return addr, nil
}

// prefixConn is a connection whose first byte was read by route: Read
// returns it first.
type prefixConn struct {
	net.Conn
	first  byte
	unread bool
}

func (p *prefixConn) Read(b []byte) (int, error) {
	if p.unread && len(b) > 0 {
		p.unread = false
		b[0] = p.first
		return 1, nil
	}
	return p.Conn.Read(b)
}
