// Package commandstest runs a command family's handlers in a test, as the
// server would run them for one client, with no server, no TCP and no
// redis-server: a real store on a clock the test moves, a commands.Ctx,
// and a writer whose replies the test reads back decoded (Decode). A
// family's tests then say what a command answers where the family lives:
//
//	h := commandstest.New(t)
//	h.Serve(keyspace.Commands()...)
//	h.Do("SET", "k", "v") // "OK"
//
// What the server adds (the section, MULTI, ACL, tracking, the wire) is
// the server's to test.
package commandstest

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/fakeclock"
	"github.com/stampedeless/stampedeless/resp"
)

// Harness runs commands of the families it serves against one store, for
// one client.
type Harness struct {
	t      testing.TB
	Clock  *fakeclock.Clock
	Store  *engine.Store
	Client *Client
	// Ctx is what every handler runs with; its writer holds one reply at
	// a time.
	Ctx    commands.Ctx
	byName map[string]*commands.Spec
}

// New returns a harness serving no command yet, with a store of 64 MiB
// on a fake clock at fakeclock.Start, closed when the test ends.
func New(t testing.TB) *Harness {
	clock := fakeclock.New()
	store, err := engine.New(engine.Options{MaxMemory: 64 << 20, Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	h := &Harness{t: t, Clock: clock, Store: store, Client: &Client{}, byName: map[string]*commands.Spec{}}
	h.Ctx = commands.Ctx{W: resp.NewWriter(nil, 0), Store: store, Client: h.Client}
	return h
}

// T is the test the harness runs in.
func (h *Harness) T() testing.TB { return h.t }

// Serve adds specs (and their subcommands) to the commands the harness
// runs.
func (h *Harness) Serve(specs ...*commands.Spec) {
	for _, spec := range specs {
		h.byName[spec.Name] = spec
		for _, sub := range spec.Subcommands {
			h.byName[sub.Name] = sub
		}
	}
}

// Proto sets the protocol of the replies: 2 or 3.
func (h *Harness) Proto(proto int) { h.Ctx.W.SetProtocol(proto) }

// Raw runs one command as the server would (its handler, then what it
// handed to Await or Defer, as the server runs them once the handler has
// returned) and returns its reply's bytes. A command that blocked has
// written nothing yet: Wake serves it.
func (h *Harness) Raw(args ...string) string {
	h.t.Helper()
	name := strings.ToLower(args[0])
	if spec := h.byName[name]; spec != nil && len(spec.Subcommands) > 0 && len(args) > 1 {
		name += "|" + strings.ToLower(args[1])
	}
	spec := h.byName[name]
	if spec == nil {
		h.t.Fatalf("%s is not a command the harness serves", name)
	}
	h.Ctx.W.Swap(nil)
	if spec.Arity > 0 && len(args) != spec.Arity || spec.Arity < 0 && len(args) < -spec.Arity {
		// The server refuses it, as Redis does, before the handler, which
		// may index the arguments its arity promises.
		h.Ctx.W.Error("ERR wrong number of arguments for '" + name + "' command")
		return string(h.Ctx.W.Buffered())
	}
	argv := make([][]byte, len(args))
	for i, a := range args {
		argv[i] = []byte(a)
	}
	spec.Handler(&h.Ctx, argv)
	h.Client.runLater()
	return string(h.Ctx.W.Buffered())
}

// Do runs one command and returns its reply decoded (Decode). A command
// that blocks writes nothing, which fails the test: Raw runs it.
func (h *Harness) Do(args ...string) any {
	h.t.Helper()
	return h.decode(h.Raw(args...))
}

func (h *Harness) decode(raw string) any {
	h.t.Helper()
	v, rest, err := Decode([]byte(raw))
	if err != nil || len(rest) != 0 {
		h.t.Fatalf("reply %q: not one RESP reply (%v)", raw, err)
	}
	return v
}

// Wake serves the command that last blocked, as the server does once a
// write made key ready: it reports whether the command could be served
// (then its reply is the second result).
func (h *Harness) Wake(key string) (bool, any) {
	h.t.Helper()
	b := h.Client.Blocked
	if b == nil {
		h.t.Fatal("no command is blocked")
	}
	h.Ctx.W.Swap(nil)
	if !b.Serve([]byte(key)) {
		return false, nil
	}
	h.Client.Blocked = nil
	b.Reply()
	return true, h.decode(string(h.Ctx.W.Buffered()))
}

// TimeOut times the blocked command out, as the server does once its
// timeout passes, and returns its reply.
func (h *Harness) TimeOut() any {
	h.t.Helper()
	b := h.Client.Blocked
	if b == nil {
		h.t.Fatal("no command is blocked")
	}
	h.Client.Blocked = nil
	h.Ctx.W.Swap(nil)
	b.TimedOut()
	return h.decode(string(h.Ctx.W.Buffered()))
}

// Check runs the command line cmd (Split) and fails the test, going on,
// when its reply, decoded, is not want (Normalize). A family's tables are
// lists of such lines and replies.
func (h *Harness) Check(cmd string, want any) {
	h.t.Helper()
	got := h.Do(Split(cmd)...)
	if u, ok := want.(Unordered); ok {
		got, want = sorted(got), sorted([]any(u))
	}
	if want := Normalize(want); !reflect.DeepEqual(got, want) {
		h.t.Errorf("%s = %#v, want %#v", cmd, got, want)
	}
}

// Unordered is the want of a reply whose elements come in no order Redis
// promises (SMEMBERS): Check compares it with the reply's elements
// sorted.
type Unordered []any

// sorted returns the elements of an array (or set) reply v, decoded,
// sorted by their Go syntax; anything else as it is.
func sorted(v any) any {
	var elems []any
	switch v := v.(type) {
	case []any:
		elems = v
	case Set:
		elems = v
	default:
		return v
	}
	elems = Normalize(elems).([]any)
	slices.SortFunc(elems, func(a, b any) int { return strings.Compare(fmt.Sprintf("%#v", a), fmt.Sprintf("%#v", b)) })
	return elems
}

// Split reads a command line as redis-cli does: arguments separated by
// spaces, one in double quotes may hold spaces and Go's escapes ("" is an
// empty argument).
func Split(line string) []string {
	var args []string
	for line = strings.TrimLeft(line, " "); line != ""; line = strings.TrimLeft(line, " ") {
		if line[0] == '"' {
			quoted, err := strconv.QuotedPrefix(line)
			if err == nil {
				arg, _ := strconv.Unquote(quoted)
				args = append(args, arg)
				line = line[len(quoted):]
				continue
			}
		}
		end := strings.IndexByte(line, ' ')
		if end < 0 {
			end = len(line)
		}
		args = append(args, line[:end])
		line = line[end:]
	}
	return args
}

// Blocked is a command that waits for one of its keys (commands.Client's
// Block and BlockRead).
type Blocked struct {
	Keys     []string
	Timeout  time.Duration
	Read     bool // BlockRead's: it takes nothing from the key
	Serve    func(ready []byte) bool
	Reply    func()
	TimedOut func()
}

// Client is a commands.Client whose facts a test sets. Its zero value is
// a client on loopback whose user may do anything, outside EXEC and
// scripts, with Redis's default proto-max-bulk-len.
type Client struct {
	Untouching bool  // CLIENT NO-TOUCH
	Atomic     bool  // the call runs inside EXEC or a script
	Scripted   bool  // the call is a script's (redis.call)
	Remote     bool  // the client does not connect from loopback
	Restricted bool  // the user may not read every key
	MaxBulkLen int64 // proto-max-bulk-len; 0: resp.DefaultMaxBulk
	// Writable and Readable are the user's key filters (nil: every key).
	Writable, Readable func(key string) bool
	// Blocked is the command that last blocked, until Wake or TimeOut.
	Blocked *Blocked
	later   []func()
}

var _ commands.Client = (*Client)(nil)

func (cl *Client) NoTouch() bool                   { return cl.Untouching }
func (cl *Client) InSection() bool                 { return cl.Atomic }
func (cl *Client) InScript() bool                  { return cl.Scripted }
func (cl *Client) Local() bool                     { return !cl.Remote }
func (cl *Client) ReadsAllKeys([][]byte) bool      { return !cl.Restricted }
func (cl *Client) Who() (string, string)           { return "default", "127.0.0.1:1" }
func (cl *Client) WritableKeys() func(string) bool { return cl.Writable }
func (cl *Client) ReadableKeys() func(string) bool { return cl.Readable }
func (cl *Client) AfterSection(fn func())          { fn() }
func (cl *Client) Defer(fn func())                 { cl.later = append(cl.later, fn) }

func (cl *Client) MaxBulk() int64 {
	if cl.MaxBulkLen == 0 {
		return resp.DefaultMaxBulk
	}
	return cl.MaxBulkLen
}

func (cl *Client) Block(keys [][]byte, timeout time.Duration, serve func([]byte) bool, reply, timedOut func()) {
	cl.block(keys, timeout, false, serve, reply, timedOut)
}

func (cl *Client) BlockRead(keys [][]byte, timeout time.Duration, serve func([]byte) bool, reply, timedOut func()) {
	cl.block(keys, timeout, true, serve, reply, timedOut)
}

func (cl *Client) block(keys [][]byte, timeout time.Duration, read bool, serve func([]byte) bool, reply, timedOut func()) {
	b := &Blocked{Timeout: timeout, Read: read, Serve: serve, Reply: reply, TimedOut: timedOut}
	for _, k := range keys {
		b.Keys = append(b.Keys, string(k))
	}
	cl.Blocked = b
}

// Await runs wait once the handler has returned, as the server does, and
// writes the reply it returns.
func (cl *Client) Await(wait func(ctx context.Context) (reply func())) {
	cl.later = append(cl.later, func() { wait(context.Background())() })
}

// runLater runs what the handler handed to Await and Defer, in order.
func (cl *Client) runLater() {
	for len(cl.later) > 0 {
		fn := cl.later[0]
		cl.later = cl.later[1:]
		fn()
	}
}
