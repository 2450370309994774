// Package freeport picks loopback TCP ports for servers a test or a
// benchmark starts — a redis-server, raft nodes — which bind a port chosen
// before they start (a cluster's members must know each other's), and bind
// it again when a test restarts them.
//
// A port that net.Listen("tcp", "127.0.0.1:0") was given comes from the
// kernel's ephemeral range (on Linux /proc/sys/net/ipv4/ip_local_port_range,
// 32768–60999 by default), the range it also takes the local port of every
// outgoing connection from. Once the probing listener is closed, any
// connection any process on the machine opens may take that port before the
// server binds it, and a busy test suite opens thousands: a raft node of a
// test cluster failed so ("bind: address already in use"). Ports below the
// ephemeral range are given to no one unasked, so Pick draws one there
// at random and checks that nothing listens on it; only another process
// picking ports the same way, within the moment between the check and the
// server's bind, can still take it.
package freeport

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
)

// span is how many ports below the ephemeral range Loopback draws from.
const span = 16384

// lowestPort is the lowest port Loopback draws: above the well-known ports
// (below 1024), which need privilege, and the registered ones most daemons
// use.
const lowestPort = 10000

// defaultEphemeralLow is the Linux default start of the ephemeral range,
// used where /proc does not say.
const defaultEphemeralLow = 32768

// Pick returns a port on 127.0.0.1 that nothing listened on a moment ago
// and that the kernel does not give to outgoing connections, or an error
// if 200 draws found none free.
func Pick() (int, error) {
	hi := ephemeralLow()
	lo := max(hi-span, lowestPort)
	if lo >= hi {
		return 0, fmt.Errorf("freeport: no ports between %d and the ephemeral range's start, %d", lowestPort, hi)
	}
	var err error
	for range 200 {
		port := lo + rand.IntN(hi-lo)
		var l net.Listener
		if l, err = net.Listen("tcp", loopbackAddr(port)); err == nil {
			_ = l.Close()
			return port, nil
		}
	}
	return 0, fmt.Errorf("freeport: no free loopback port in [%d, %d) in 200 draws; the last: %w", lo, hi, err)
}

// PickAddr is Pick as a "127.0.0.1:port" address.
func PickAddr() (string, error) {
	port, err := Pick()
	if err != nil {
		return "", err
	}
	return loopbackAddr(port), nil
}

// loopbackAddr is port's "127.0.0.1:port" address.
func loopbackAddr(port int) string { return "127.0.0.1:" + strconv.Itoa(port) }

// TB is what Loopback and Addr need of a testing.TB; an interface of its
// own keeps package testing out of the programs that only Pick.
type TB interface {
	Helper()
	Fatal(args ...any)
}

// Loopback is Pick for a test: it fails tb if no port is free.
func Loopback(tb TB) int {
	tb.Helper()
	port, err := Pick()
	if err != nil {
		tb.Fatal(err)
	}
	return port
}

// Addr is PickAddr for a test: it fails tb if no port is free.
func Addr(tb TB) string {
	tb.Helper()
	return loopbackAddr(Loopback(tb))
}

// ephemeralLow returns the first port of the kernel's ephemeral range.
func ephemeralLow() int {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return defaultEphemeralLow
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return defaultEphemeralLow
	}
	low, err := strconv.Atoi(f[0])
	if err != nil || low <= 0 {
		return defaultEphemeralLow
	}
	return low
}
