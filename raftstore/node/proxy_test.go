package node

import (
	"io"
	"net"
	"sync"
	"testing"
)

// proxy forwards the TCP connections it accepts on loopback to target,
// until blocked: then it closes those open and every new one at once, so
// that no byte passes — a network partition of the link it stands on.
type proxy struct {
	ln     net.Listener
	target string

	mu      sync.Mutex
	blocked bool
	conns   map[net.Conn]bool
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { _ = ln.Close(); p.setBlocked(true) })
	go p.serve()
	return p
}

func (p *proxy) addr() string { return p.ln.Addr().String() }

func (p *proxy) serve() {
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		go p.pipe(c)
	}
}

// track records c as open, or closes it and returns false when blocked.
func (p *proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.blocked {
		_ = c.Close()
		return false
	}
	p.conns[c] = true
	return true
}

func (p *proxy) pipe(in net.Conn) {
	if !p.track(in) {
		return
	}
	out, err := net.Dial("tcp", p.target)
	if err != nil {
		p.drop(in)
		return
	}
	if !p.track(out) {
		p.drop(in)
		return
	}
	done := make(chan struct{}, 2)
	copyConn := func(dst, src net.Conn) {
		_, _ = io.Copy(dst, src)
		done <- struct{}{}
	}
	go copyConn(out, in)
	go copyConn(in, out)
	<-done
	p.drop(in)
	p.drop(out)
}

func (p *proxy) drop(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	_ = c.Close()
}

func (p *proxy) setBlocked(b bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.blocked = b
	if b {
		for c := range p.conns {
			_ = c.Close()
			delete(p.conns, c)
		}
	}
}
