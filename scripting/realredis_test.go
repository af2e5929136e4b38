package scripting

// Helpers for the differential tests: a raw RESP connection to a real
// redis-server, and a Caller that runs a script's commands there with the
// checks a server makes before it runs a command for a script.

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/internal/redistest"
	"github.com/stampedeless/stampedeless/resp"
)

// rawConn sends commands and returns their replies as raw RESP bytes.
type rawConn struct {
	t  testing.TB
	nc net.Conn
	br *bufio.Reader
}

func dialRaw(t testing.TB, addr string, proto int) *rawConn {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	c := &rawConn{t: t, nc: nc, br: bufio.NewReader(nc)}
	if proto == 3 {
		c.do("HELLO", "3")
	}
	return c
}

func encodeCommand(args []string) []byte {
	w := resp.Buffer(nil, 2)
	w.Array(len(args))
	for _, a := range args {
		w.BulkString(a)
	}
	return w.Buffered()
}

func (c *rawConn) doBytes(args [][]byte) []byte {
	s := make([]string, len(args))
	for i, a := range args {
		s[i] = string(a)
	}
	return c.do(s...)
}

// do sends one command and reads its whole reply.
func (c *rawConn) do(args ...string) []byte {
	c.t.Helper()
	c.nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.nc.Write(encodeCommand(args)); err != nil {
		c.t.Fatal(err)
	}
	var buf []byte
	for {
		if len(buf) > 0 {
			_, n, err := ParseReply(buf)
			if err == nil {
				if n != len(buf) {
					c.t.Fatalf("%d bytes after the reply to %q", len(buf)-n, args)
				}
				return buf
			}
			if !errors.Is(err, ErrIncomplete) {
				c.t.Fatalf("reply to %q: %v: %q", args, err, buf)
			}
		}
		chunk := make([]byte, 4096)
		n, err := c.br.Read(chunk)
		if err != nil && err != io.EOF {
			c.t.Fatal(err)
		}
		if n == 0 && err == io.EOF {
			c.t.Fatalf("connection closed reading the reply to %q", args)
		}
		buf = append(buf, chunk[:n]...)
	}
}

// cmdInfo is what a server knows of a command before it runs it for a
// script.
type cmdInfo struct {
	arity                int
	write, noscript, may bool
}

// redisCaller runs a script's commands on a real redis-server, one
// connection per protocol, refusing first what Redis refuses from a
// script, with the package's texts; it learns arity and flags from
// COMMAND INFO. It is what a server's Caller does, against Redis's
// command table.
type redisCaller struct {
	conns map[int]*rawConn
	mu    sync.Mutex
	info  map[string]*cmdInfo
	calls [][]string
}

func newRedisCaller(t testing.TB, addr string) *redisCaller {
	return &redisCaller{conns: map[int]*rawConn{2: dialRaw(t, addr, 2), 3: dialRaw(t, addr, 3)},
		info: map[string]*cmdInfo{}}
}

func (rc *redisCaller) lookup(name string) *cmdInfo {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if ci, ok := rc.info[name]; ok {
		return ci
	}
	r, _, err := ParseReply(rc.conns[2].do("COMMAND", "INFO", name))
	var ci *cmdInfo
	if err == nil && len(r.Elems) == 1 && len(r.Elems[0].Elems) >= 3 {
		e := r.Elems[0].Elems
		ci = &cmdInfo{arity: int(e[1].Int)}
		for _, f := range e[2].Elems {
			switch string(f.Str) {
			case "write":
				ci.write = true
			case "noscript":
				ci.noscript = true
			case "may_replicate":
				ci.may = true
			}
		}
	}
	rc.info[name] = ci
	return ci
}

func (rc *redisCaller) Call(cmd Command) ([]byte, bool) {
	name := strings.ToLower(string(cmd.Args[0]))
	args := make([]string, len(cmd.Args))
	for i, a := range cmd.Args {
		args[i] = string(a)
	}
	rc.mu.Lock()
	rc.calls = append(rc.calls, args)
	rc.mu.Unlock()
	ci := rc.lookup(name)
	n := len(cmd.Args)
	switch {
	case ci == nil:
		return ErrUnknownCommand.Reply(), false
	case (ci.arity > 0 && ci.arity != n) || n < -ci.arity:
		return ErrWrongArity.Reply(), false
	case ci.noscript:
		return ErrNotAllowed.Reply(), false
	case cmd.ReadOnly && (ci.write || ci.may):
		return ErrWriteReadOnly.Reply(), false
	}
	return rc.conns[cmd.Proto].doBytes(cmd.Args), ci.write
}

func (rc *redisCaller) CheckCommand(args [][]byte) (known, allowed bool) {
	return rc.lookup(strings.ToLower(string(args[0]))) != nil, true
}

// startRedis starts a redis-server for the package's tests.
func startRedis(t *testing.T) string {
	t.Helper()
	return redistest.Start(t).Addr()
}

func evalArgs(script string, keys, args []string) []string {
	a := []string{"EVAL", script, strconv.Itoa(len(keys))}
	a = append(a, keys...)
	return append(a, args...)
}

func byteArgs(ss []string) [][]byte {
	b := make([][]byte, len(ss))
	for i, s := range ss {
		b[i] = []byte(s)
	}
	return b
}
