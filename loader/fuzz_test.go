package loader

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"
	"unicode/utf8"
)

// rawOrigin is a real TCP origin that answers each request with the bytes
// of the current response, whatever they are, and closes the connection.
type rawOrigin struct {
	ln       net.Listener
	response atomic.Pointer[[]byte]
}

func newRawOrigin(t testing.TB) *rawOrigin {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	o := &rawOrigin{ln: ln}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go o.answer(nc)
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return o
}

// answer reads the request's header and writes the current response.
func (o *rawOrigin) answer(nc net.Conn) {
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	br := bufio.NewReader(nc)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return
		}
		if line == "\r\n" {
			break
		}
	}
	nc.Write(*o.response.Load())
}

// secretBody is in the bodies of the seeds: no reason may repeat it.
const secretBody = "SECRETBODY"

// FuzzFetchResponse: whatever an origin sends back, Fetch returns either
// a value within the size limit (a 304 only for a conditional request) or
// an OriginError whose reason is one short line of valid UTF-8 that does
// not repeat the body.
func FuzzFetchResponse(f *testing.F) {
	for _, seed := range []string{
		"HTTP/1.1 200 OK\r\nContent-Length: 10\r\nETag: \"v1\"\r\n\r\n" + secretBody,
		"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n" + secretBody,
		"HTTP/1.1 200 OK\r\n\r\n" + strings.Repeat(secretBody, 10),
		"HTTP/1.1 304 Not Modified\r\nETag: \"v2\"\r\n\r\n",
		"HTTP/1.1 404 Not Found\r\nContent-Length: 10\r\n\r\n" + secretBody,
		"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 17\r\n\r\n" + secretBody + "\r\n-ERR x",
		"HTTP/1.1 302 Found\r\nLocation: http://169.254.169.254/\r\nContent-Length: 0\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 20\r\n\r\nshort",
		"HTTP/1.1 2000 OK\r\n\r\n", "garbage\r\n\r\n" + secretBody, "",
	} {
		f.Add([]byte(seed), false)
		f.Add([]byte(seed), true)
	}
	const limit = 64
	o := newRawOrigin(f)
	r := NewRegistry(Options{MaxValueSize: limit})
	f.Cleanup(r.CloseIdleConnections)
	// A short timeout: many inputs promise more body than they send, and
	// each waits for it to end, which is an OriginError like any other.
	if err := r.Register(Config{Prefix: "", URL: "http://" + o.ln.Addr().String() + "/{key}", Timeout: 100 * time.Millisecond}); err != nil {
		f.Fatal(err)
	}
	l, _ := r.Lookup("k")
	f.Fuzz(func(t *testing.T, response []byte, conditional bool) {
		o.response.Store(&response)
		defer r.CloseIdleConnections() // each response on a connection of its own
		var v Validators
		if conditional {
			v = Validators{ETag: `"v1"`}
		}
		res, err := l.Fetch(context.Background(), "k", v)
		if err != nil {
			var oe *OriginError
			if !errors.As(err, &oe) {
				t.Fatalf("Fetch error %v is not an OriginError", err)
			}
			if strings.ContainsAny(oe.Reason, "\r\n") || !utf8.ValidString(oe.Reason) || len(oe.Reason) > maxReason+3 {
				t.Fatalf("reason %q is not one short line of UTF-8", oe.Reason)
			}
			if strings.Contains(oe.Reason, secretBody) {
				t.Fatalf("reason %q repeats the body", oe.Reason)
			}
			return
		}
		switch {
		case len(res.Value) > limit:
			t.Fatalf("a value of %d bytes passed a limit of %d", len(res.Value), limit)
		case res.NotModified && !conditional:
			t.Fatal("304 accepted for an unconditional request")
		case res.NotModified && (!res.Found || res.Value != nil):
			t.Fatalf("304 result %+v", res)
		case !res.Found && (res.Value != nil || res.ETag != ""):
			t.Fatalf("not-found result %+v", res)
		}
	})
}
