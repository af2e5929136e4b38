package redistest

import (
	"net"
	"strconv"
	"testing"
)

// TestFreeAddrIsReserved: FreeAddr's port is outside the kernel's ephemeral
// range, and no other reservation (another test process's, which takes the
// same lock) gets it until the test that reserved it ends.
func TestFreeAddrIsReserved(t *testing.T) {
	lo, hi := reservableRange()
	dir := t.TempDir()
	for range 20 {
		_, p, _ := net.SplitHostPort(FreeAddr(t))
		port, _ := strconv.Atoi(p)
		if port < lo || port >= hi {
			t.Fatalf("FreeAddr gave port %d, outside %d-%d", port, lo, hi)
		}
	}
	held, ok := reserve(dir, lo)
	if !ok {
		t.Skipf("port %d is in use here", lo)
	}
	if again, ok := reserve(dir, lo); ok {
		again.Close()
		t.Fatal("a port reserved twice")
	}
	held.Close()
	again, ok := reserve(dir, lo)
	if !ok {
		t.Fatal("a released port stayed reserved")
	}
	again.Close()
	// A port a process that does not reserve ports listens on is not
	// handed out.
	ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(lo))
	if err != nil {
		t.Skip(err)
	}
	defer ln.Close()
	if f, ok := reserve(dir, lo); ok {
		f.Close()
		t.Fatal("a port in use reserved")
	}
}
