package server

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/stampedeless/stampedeless/acl"
	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/netloop"
	"github.com/stampedeless/stampedeless/resp"
	"github.com/stampedeless/stampedeless/server/internal/pause"
	"github.com/stampedeless/stampedeless/server/internal/pubsub"
	"github.com/stampedeless/stampedeless/server/internal/tracking"
	"github.com/stampedeless/stampedeless/server/internal/watch"
)

// Conn is one client connection. Its writer and flags are owned by its
// event loop, or by the goroutine of a command it waits for while the
// loop has parked it; the fields CLIENT LIST reads from other connections
// are atomic or guarded by mu.
type Conn struct {
	srv *Server
	// link is the connection as its event loop serves it: its socket,
	// reader, outbox; w is its writer (link's).
	link netloop.Conn
	w    *resp.Writer
	// x is what c's handlers run with: its writer, the store, and c.
	x       commands.Ctx
	id      int64
	created time.Time
	// The addresses, which CLIENT LIST reads from other goroutines.
	remote, local net.Addr
	// next is the rest of a command that must wait; looped: its loop runs
	// its commands now (it is not parked, nor a script's caller), so a
	// command that may wait must leave the wait in next (whereItMayWait).
	next   continuation
	looped bool
	// scratch holds the lower-cased name of the command looked up last
	// (its first lastLen bytes), and lastCmd that command, nil if unknown.
	scratch [32]byte
	lastLen int
	lastCmd *command
	authed  bool
	quit    bool
	// db is the database SELECT chose, which CLIENT LIST reads from other
	// goroutines; c.x.Store is that database (selectDB).
	db atomic.Int32
	// lua marks the connection a script's commands run on (scriptCaller),
	// which the slow log and MONITOR show as Redis shows its Lua client.
	lua bool
	// monitoring: the connection is in MONITOR mode (monitor.go).
	monitoring atomic.Bool
	// reply is CLIENT REPLY's mode (cmd_client.go); skipNext: SKIP ran,
	// so the next command's reply is dropped.
	reply    replyMode
	skipNext bool
	// unixPath is the socket's path for a unix socket connection, which
	// MONITOR shows.
	unixPath string
	tx       transaction
	// scriptWrites are the writes of the scripts c ran, written through
	// to the shared tier (--redis) once the section is left.
	scriptWrites []scriptWrite
	// broadcasts are the messages c published inside EXEC or a script,
	// sent to the other replicas (--redis) once the section is left: the
	// section is never held across the shared tier's I/O.
	broadcasts []broadcast
	// afterSection is the fleet I/O of the read-through commands c ran
	// inside EXEC or a script (swr.Caller.Later), run once the section is
	// left.
	afterSection []func()

	// watch is what c WATCHes.
	watch watch.Client

	subs pubsub.Subscriptions

	// track is the connection's CLIENT TRACKING state.
	track tracking.Tracker
	// gone: the connection has closed, for those that redirect their
	// invalidations to it.
	gone atomic.Bool

	// user is who the connection is authenticated as (the default user
	// until AUTH); revoked marks a connection to close for its user was
	// deleted (acl.go).
	user    atomic.Pointer[acl.User]
	revoked atomic.Bool

	lastCommand atomic.Pointer[command]
	multiLen    atomic.Int32 // commands queued since MULTI; -1 outside MULTI
	multiMem    atomic.Int64 // bytes of the commands queued since MULTI

	// pauseHeld: CLIENT PAUSE holds c's command, which CLIENT LIST shows
	// as blocked. pauseTurn is the held command whose turn it is to run
	// (awaitTurn); postponed: the command dispatched last was held from
	// inside the section (heldAfterAll), so it has not run, and its
	// callers count nothing and end nothing (its rerun will).
	pauseHeld atomic.Bool
	pauseTurn *pause.Waiter
	postponed bool

	// refused: the reply of the command being counted is a refusal
	// (refuse); errorCounted: it is an error a script's command already
	// counted in errorstats. countReply reads and clears both.
	refused, errorCounted bool

	// CLIENT NO-EVICT and NO-TOUCH, which CLIENT LIST shows.
	noEvict, noTouch atomic.Bool
	// killed: CLIENT KILL closed the connection; guarded by srv.mu.
	killed bool

	mu      sync.Mutex // protects name, libName and libVer
	name    string
	libName string
	libVer  string
}

// continuation is the rest of a command that must wait: set by its handler
// (Conn.Await) or by dispatch (whereItMayWait), run once the handler has
// returned and left the atomic section, on a goroutine of its own while
// the connection's loop has it parked (netloop.Wait).
type continuation struct {
	run func()
	// counted is the command to count once it has answered.
	counted *command
	// call is the command to observe once it has answered, with its
	// arguments copied (observe.go); nil when nothing observes commands.
	call *resumedCall
	// gate: CLIENT REPLY applies to the command once it has answered.
	gate bool
}

// then adds fn to the rest of the command, after what is there already.
func (k *continuation) then(fn func()) {
	if prev := k.run; prev != nil {
		k.run = func() { prev(); fn() }
		return
	}
	k.run = fn
}

func newConn(s *Server, nc net.Conn) *Conn {
	c := &Conn{
		srv:     s,
		id:      s.nextConnID.Add(1),
		created: time.Now(),
	}
	c.link.Init((*loopClient)(c), s.loops, c.created)
	c.w = c.link.Writer()
	c.remote, c.local = peerAddrs(nc)
	if a, ok := nc.LocalAddr().(*net.UnixAddr); ok {
		c.unixPath = a.Name
	}
	c.authed = !s.acl.users.AuthRequired()
	c.user.Store(s.acl.users.Default())
	c.multiLen.Store(-1)
	c.x = s.ctxFor(c)
	return c
}

// The server's names for what its connection's outbox does
// (netloop.Conn).
func (c *Conn) push(fn func(w *resp.Writer)) bool    { return c.link.Push(fn) }
func (c *Conn) pushOut(fn func(w *resp.Writer)) bool { return c.link.PushOut(fn) }
func (c *Conn) startPushing()                        { c.link.StartPushing() }
func (c *Conn) stopPushing()                         { c.link.StopPushing() }
func (c *Conn) pushing() bool                        { return c.link.Pushing() }
func (c *Conn) wake()                                { c.link.Wake() }

// authenticated reports whether the client may run any command: the
// default user needs no password now, or the client passed AUTH, or none
// was needed when it connected. As in Redis, setting a password does not
// log out connections that are already open.
func (c *Conn) authenticated() bool {
	return c.authed || !c.srv.acl.users.AuthRequired()
}

func (c *Conn) limits() resp.Limits {
	return resp.Limits{MaxBulk: c.srv.maxBulk.Load()}
}

// info is the connection's line in CLIENT LIST and CLIENT INFO, in Redis's
// format, asked by asker running a command of args: its own line shows its
// buffers as they are, the others' as their last flush left them.
func (c *Conn) info(asker *Conn, args [][]byte) string {
	c.mu.Lock()
	name, libName, libVer := c.name, c.libName, c.libVer
	c.mu.Unlock()
	cmd := "NULL"
	if last := c.lastCommand.Load(); last != nil {
		cmd = last.Name
	}
	now := time.Now()
	age := int64(now.Sub(c.created) / time.Second)
	idle := now.Unix() - c.link.LastActive()
	omem, _ := c.link.OutputBuffer(now.Unix())
	multi := c.multiLen.Load()
	redir := int64(-1)
	if ti := c.track.Info(); ti.On {
		redir = ti.Redirect
	}
	b := c.link.Buffers(asker == c)
	var argvMem int64
	if asker == c {
		for _, a := range args { // Redis's argv_len_sum
			argvMem += int64(len(a))
		}
	}
	multiMem := c.multiMem.Load()
	totMem := b.QBuf + b.QBufFree + argvMem + multiMem + b.RBS + omem + int64(unsafe.Sizeof(*c))
	return fmt.Sprintf("id=%d addr=%s laddr=%s fd=%d name=%s age=%d idle=%d flags=%s db=%d sub=%d psub=%d ssub=%d multi=%d "+
		"qbuf=%d qbuf-free=%d argv-mem=%d multi-mem=%d rbs=%d rbp=%d obl=%d oll=0 omem=%d tot-mem=%d events=r "+
		"cmd=%s user=%s redir=%d resp=%d lib-name=%s lib-ver=%s",
		c.id, c.remote, c.local, c.link.FD(), name, age, idle, c.flagLetters(), c.db.Load(),
		c.subs.Of(pubsub.Channel), c.subs.Of(pubsub.Pattern), c.subs.Of(pubsub.Shard),
		multi, b.QBuf, b.QBufFree, argvMem, multiMem, b.RBS, b.RBP, b.OBL, omem, totMem,
		cmd, c.user.Load().Name(), redir, c.w.Protocol(), libName, libVer)
}

// validClientName reports whether s may be a client name: Redis refuses
// spaces, newlines and other characters outside '!' to '~'.
func validClientName(s []byte) bool {
	return !strings.ContainsFunc(string(s), func(r rune) bool { return r < '!' || r > '~' })
}

// NoTouch reports CLIENT NO-TOUCH, for handlers (commands.Client).
func (c *Conn) NoTouch() bool { return c.noTouch.Load() }

// MaxBulk is proto-max-bulk-len as it stands (commands.Client).
func (c *Conn) MaxBulk() int64 { return c.srv.maxBulk.Load() }

// Await runs wait after the handler has returned and left the atomic
// section, in the connection's continuation, off its event loop; its ctx
// ends if the client leaves meanwhile (commands.Client). Even in a
// continuation already (a command that waited for the section) it waits
// only once the handler has returned: the continuation runs it next
// (Server.runContinuation), never under the section the handler holds.
func (c *Conn) Await(wait func(ctx context.Context) (reply func())) {
	next := func() { wait(c.link.Context())() }
	c.next.then(next)
}

// Defer runs fn where c may wait (commands.Client): whereItMayWait.
func (c *Conn) Defer(fn func()) { c.whereItMayWait(fn) }

// AfterSection queues fn to run once the section is left
// (commands.Client): shareDeferred runs c.afterSection.
func (c *Conn) AfterSection(fn func()) { c.afterSection = append(c.afterSection, fn) }

// Local reports a client on loopback or a unix socket (commands.Client).
func (c *Conn) Local() bool { return isLocal(c.remote) }

// Who is c's user and address, for a log line (commands.Client).
func (c *Conn) Who() (user, addr string) { return c.user.Load().Name(), c.remote.String() }

// WritableKeys filters the keys c's user may write (commands.Client).
func (c *Conn) WritableKeys() func(key string) bool {
	p := c.user.Load().Perms()
	if p.AllKeys() {
		return nil
	}
	return func(key string) bool { return p.CanAccessKey([]byte(key), false, true) }
}

// ReadableKeys filters the keys c's user may read (commands.Client).
func (c *Conn) ReadableKeys() func(key string) bool {
	p := c.user.Load().Perms()
	if p.ReadsAllKeys(nil) {
		return nil
	}
	return func(key string) bool { return p.CanAccessKey([]byte(key), true, false) }
}

// ReadsAllKeys reports whether c's user may read every key by a selector
// that allows the call args (commands.Client).
func (c *Conn) ReadsAllKeys(args [][]byte) bool {
	p := c.user.Load().Perms()
	if p.Unrestricted() || args == nil {
		return p.ReadsAllKeys(nil)
	}
	cmd := c.srv.calledCommand(args)
	return cmd != nil && p.ReadsAllKeys(aclCall(cmd, args))
}

// InScript reports whether c is a script's (commands.Client).
func (c *Conn) InScript() bool { return c.lua }

// Block blocks c on keys (commands.Client): serve runs in the atomic
// section when a write makes one of them ready, and once one has served,
// or timeout passes, reply or timedOut answers.
func (c *Conn) Block(keys [][]byte, timeout time.Duration, serve func(ready []byte) bool, reply, timedOut func()) {
	b := c.srv.blocked.Block(c.id, int(c.db.Load()), keys, serve)
	c.awaitBlocked(b, keys, timeout, reply, timedOut)
}

// BlockRead is Block for a reader that takes nothing (commands.Client):
// serving the key goes on past it when it cannot be served.
func (c *Conn) BlockRead(keys [][]byte, timeout time.Duration, serve func(ready []byte) bool, reply, timedOut func()) {
	b := c.srv.blocked.Block(c.id, int(c.db.Load()), keys, serve)
	b.Reader = true
	c.awaitBlocked(b, keys, timeout, reply, timedOut)
}

// InSection reports whether c runs inside EXEC or a script, where nothing
// may wait (commands.Client).
func (c *Conn) InSection() bool { return c.tx.inSection }

// ctxFor is what c's handlers run with: its writer, the store, c itself and
// the keyspace events. The one place a connection's, or a script's
// caller's, Ctx is made.
func (s *Server) ctxFor(c *Conn) commands.Ctx {
	return commands.Ctx{W: c.w, Store: s.store.DB(int(c.db.Load())), Client: c, Events: s.keyEvents.events}
}

// selectDB makes database n, which the store offers (engine.Store.DB), c's.
func (c *Conn) selectDB(n int) {
	c.db.Store(int32(n))
	c.x.Store = c.srv.store.DB(n)
}
