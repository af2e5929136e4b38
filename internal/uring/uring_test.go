//go:build linux

package uring

import (
	"bytes"
	"syscall"
	"testing"
)

// pair returns a connected pair of non-blocking stream sockets.
func pair(t *testing.T) (a, b int) {
	t.Helper()
	fds, err := syscall.Socketpair(syscall.AF_UNIX, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(fds[0]); syscall.Close(fds[1]) })
	return fds[0], fds[1]
}

func newRing(t *testing.T) *Ring {
	t.Helper()
	r, err := New(8)
	if err != nil {
		t.Skipf("no io_uring here: %v", err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

type result struct {
	tag uint64
	res int32
}

func submit(t *testing.T, r *Ring) []result {
	t.Helper()
	var got []result
	if err := r.Submit(func(tag uint64, res int32) { got = append(got, result{tag, res}) }); err != nil {
		t.Fatal(err)
	}
	if r.Queued() != 0 {
		t.Fatalf("%d operations still queued after Submit", r.Queued())
	}
	return got
}

// The ring's promise: nothing waits on a socket. A receive from a socket
// with no input and a send to a full one complete at once with -EAGAIN.
func TestOperationsNeverWait(t *testing.T) {
	r := newRing(t)
	a, b := pair(t)
	if err := r.Recv(a, make([]byte, 64), 1); err != nil {
		t.Fatal(err)
	}
	got := submit(t, r)
	if len(got) != 1 || got[0] != (result{1, -int32(syscall.EAGAIN)}) {
		t.Fatalf("receive from an empty socket: %v, want [{1 -EAGAIN}]", got)
	}
	chunk := bytes.Repeat([]byte("x"), 1<<16)
	for {
		if _, err := syscall.Write(b, chunk); err == syscall.EAGAIN {
			break
		} else if err != nil {
			t.Fatal(err)
		}
	}
	r.Send(b, chunk, 2)
	if got := submit(t, r); len(got) != 1 || got[0] != (result{2, -int32(syscall.EAGAIN)}) {
		t.Fatalf("send to a full socket: %v, want [{2 -EAGAIN}]", got)
	}
}

// Many operations go in one Submit, and each completes with its own tag
// and result.
func TestSubmitBatches(t *testing.T) {
	r := newRing(t)
	a1, b1 := pair(t)
	a2, b2 := pair(t)
	r.Send(a1, []byte("PING\r\n"), 10)
	r.Send(a2, []byte("GET k\r\n"), 20)
	got := submit(t, r)
	want := map[uint64]int32{10: 6, 20: 7}
	if len(got) != 2 {
		t.Fatalf("completions %v, want two", got)
	}
	for _, g := range got {
		if want[g.tag] != g.res {
			t.Fatalf("completion %v, want results %v by tag", g, want)
		}
	}
	p1, p2 := make([]byte, 64), make([]byte, 64)
	r.Recv(b1, p1, 1)
	r.Recv(b2, p2, 2)
	for _, g := range submit(t, r) {
		p := map[uint64][]byte{1: p1, 2: p2}[g.tag]
		if g.res <= 0 {
			t.Fatalf("receive %d: %d", g.tag, g.res)
		}
		if s, w := string(p[:g.res]), map[uint64]string{1: "PING\r\n", 2: "GET k\r\n"}[g.tag]; s != w {
			t.Fatalf("receive %d read %q, want %q", g.tag, s, w)
		}
	}
	syscall.Shutdown(a1, syscall.SHUT_WR)
	r.Recv(b1, p1, 3)
	if got := submit(t, r); len(got) != 1 || got[0] != (result{3, 0}) {
		t.Fatalf("receive after the peer shut its side: %v, want [{3 0}] (the end of input)", got)
	}
}

// A full ring says so instead of overwriting what it holds.
func TestFullRing(t *testing.T) {
	r := newRing(t)
	a, _ := pair(t)
	for i := 0; i < 8; i++ {
		if err := r.Send(a, []byte("x"), uint64(i)); err != nil {
			t.Fatalf("send %d: %v", i, err)
		}
	}
	if err := r.Send(a, []byte("x"), 8); err != ErrFull {
		t.Fatalf("ninth send into an 8-entry ring: %v, want ErrFull", err)
	}
	if got := submit(t, r); len(got) != 8 {
		t.Fatalf("%d completions, want 8", len(got))
	}
}
