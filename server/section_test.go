package server

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/internal/batchorigin"
	"github.com/stampedeless/stampedeless/internal/testwait"
)

// replyDeadline is how long a test of the atomic section waits for any one
// reply: far past what a command takes on a loaded machine, so a test that
// runs out of it has found a server that stopped answering.
const replyDeadline = 20 * time.Second

// replyWithin reads r's next reply, failing the test when none comes
// within replyDeadline (tryReply). Only the test's goroutine may call it.
func (r *rawConn) replyWithin(what string) string {
	r.t.Helper()
	s, err := r.tryReply(what)
	if err != nil {
		r.t.Fatal(err)
	}
	return s
}

// tryReply is replyWithin for any goroutine: the error says what failed.
// A server that does not answer in time is hung (testwait.Hung).
func (r *rawConn) tryReply(what string) (string, error) {
	r.nc.SetReadDeadline(time.Now().Add(replyDeadline))
	defer r.nc.SetReadDeadline(time.Time{})
	s, err := readReply(r.br)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		testwait.Hung(fmt.Sprintf("%s: %s, for %v", r.t.Name(), what, replyDeadline))
	}
	if err != nil {
		return "", fmt.Errorf("%s: read reply: %w", what, err)
	}
	return s, nil
}

// doWithin sends a command and reads its reply within replyDeadline.
func (r *rawConn) doWithin(args ...string) string {
	r.t.Helper()
	r.send(encodeCommand(args...))
	return r.replyWithin(strings.Join(args, " "))
}

// tryDo is doWithin for any goroutine.
func (r *rawConn) tryDo(args ...string) (string, error) {
	if _, err := r.nc.Write([]byte(encodeCommand(args...))); err != nil {
		return "", err
	}
	return r.tryReply(strings.Join(args, " "))
}

// TestPurgeTagSoftInsideExec: PURGE.TAG SOFT inside MULTI marks the tagged
// keys stale under the section EXEC holds, without entering it again. It
// used to hang EXEC and, with it, every later keyspace command of every
// client.
func TestPurgeTagSoftInsideExec(t *testing.T) {
	for _, loops := range []int{1, 2} {
		t.Run(fmt.Sprintf("loops=%d", loops), func(t *testing.T) {
			o := batchorigin.New(t)
			o.SetTags("b:1", "user")
			ts, _ := batchServer(t, o, newOrigin(t), loops)
			r := dialRaw(t, ts.addr)
			r.doWithin("GETFILL", "b:1", "60", "10")
			r.send(encodeCommand("MULTI") + encodeCommand("PURGE.TAG", "SOFT", "user") +
				encodeCommand("PURGE.TAG", "user") + encodeCommand("EXEC"))
			for i := range 3 {
				r.replyWithin("MULTI and its queued commands " + strconv.Itoa(i))
			}
			if got := r.replyWithin("EXEC"); got != "[:1 :1]" {
				t.Fatalf("EXEC of PURGE.TAG SOFT, PURGE.TAG = %s, want [:1 :1]", got)
			}
			other := dialRaw(t, ts.addr)
			if got := other.doWithin("EXISTS", "b:1"); got != ":0" {
				t.Fatalf("EXISTS after the hard purge = %s", got)
			}
		})
	}
}

// TestFillSetRacingExec: lease holders setting their keys while other
// clients run transactions and scripts, which take the section
// exclusively. FILL.SET's write used to take the section a second time
// while its handler held it: with an exclusive holder waiting between the
// two, neither could go on, and the keyspace stopped for every client.
func TestFillSetRacingExec(t *testing.T) {
	for _, loops := range []int{1, 2} {
		t.Run(fmt.Sprintf("loops=%d", loops), func(t *testing.T) {
			ts := startServer(t, Options{EventLoops: loops})
			const rounds = 200
			var wg sync.WaitGroup
			for w := range 4 {
				r := dialRaw(t, ts.addr)
				wg.Go(func() {
					for i := range rounds {
						key := fmt.Sprintf("app:%d:%d", w, i)
						reply, err := r.tryDo("FILL.LEASE", key, "60", "10")
						token, ok := leaseToken(reply)
						if err != nil || !ok {
							t.Errorf("FILL.LEASE %s = %s, want a token (%v)", key, reply, err)
							return
						}
						if got, err := r.tryDo("FILL.SET", key, token, "v"); got != "+OK" {
							t.Errorf("FILL.SET %s = %s (%v)", key, got, err)
							return
						}
					}
				})
			}
			for range 2 {
				r := dialRaw(t, ts.addr)
				wg.Go(func() {
					for i := range rounds {
						var err error
						if i%2 == 0 {
							_, err = r.tryDo("EVAL", "return 1", "0")
						} else if _, err = r.tryDo("MULTI"); err == nil {
							if _, err = r.tryDo("INCR", "n"); err == nil {
								_, err = r.tryDo("EXEC")
							}
						}
						if err != nil {
							t.Error(err)
							return
						}
					}
				})
			}
			wg.Wait()
		})
	}
}

// leaseToken is the token of a FILL.LEASE reply [nil "token"].
func leaseToken(reply string) (string, bool) {
	parts := strings.Fields(strings.Trim(reply, "[]"))
	if len(parts) != 2 || parts[1] == "(nil)" {
		return "", false
	}
	token, err := strconv.Unquote(parts[1])
	return token, err == nil
}
