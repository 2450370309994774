package freeport

import (
	"net"
	"strconv"
	"testing"
)

// TestLoopbackOutsideEphemeralRange checks that the ports Loopback gives
// lie below the kernel's ephemeral range and can be listened on while the
// earlier ones stay held.
func TestLoopbackOutsideEphemeralRange(t *testing.T) {
	hi := ephemeralLow()
	held := map[int]net.Listener{}
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for range 50 {
		port := Loopback(t)
		if port < lowestPort || port >= hi {
			t.Fatalf("port %d outside [%d, %d)", port, lowestPort, hi)
		}
		if held[port] != nil {
			t.Fatalf("port %d given while a listener holds it", port)
		}
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Fatalf("listening on the port given, %d: %v", port, err)
		}
		held[port] = l
	}
	if a := Addr(t); len(a) <= len("127.0.0.1:") || a[:len("127.0.0.1:")] != "127.0.0.1:" {
		t.Errorf("Addr = %q, want 127.0.0.1:port", a)
	}
}
