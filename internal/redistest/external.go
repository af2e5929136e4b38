package redistest

import (
	"net"
	"testing"
	"time"
)

// ExternalIP is an IPv4 address of this host outside loopback. A client
// bound to it (DialFrom) connects from outside as far as protected mode can
// tell, without leaving the host. The test skips when the host has none.
func ExternalIP(t testing.TB) net.IP {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && n.IP.To4() != nil && !n.IP.IsLoopback() && !n.IP.IsLinkLocalUnicast() {
			return n.IP
		}
	}
	t.Skip("this host has no IPv4 address outside loopback to connect from")
	return nil
}

// DialFrom connects from the address from to the port of addr on host to
// (a server listening on 0.0.0.0 is reached on any of the host's
// addresses). The connection is closed when the test ends.
func DialFrom(t testing.TB, from, to net.IP, addr string) net.Conn {
	t.Helper()
	_, port, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: from}, Timeout: 5 * time.Second}
	nc, err := d.Dial("tcp", net.JoinHostPort(to.String(), port))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	return nc
}
