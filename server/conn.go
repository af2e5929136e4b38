package server

import (
	"context"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/stampedeless/stampedeless/acl"
	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/resp"
)

// Conn is one client connection. Its reader, writer and flags are owned by
// its event loop, or by the goroutine of a command it waits for while the
// loop has parked it; the fields CLIENT LIST reads from other connections
// are atomic or guarded by mu.
type Conn struct {
	srv *Server
	rd  *resp.Reader
	w   *resp.Writer
	// x is what c's handlers run with: its writer, the store, and c.
	x       commands.Ctx
	id      int64
	created time.Time
	// The addresses, which CLIENT LIST reads from other goroutines.
	remote, local net.Addr
	// ev is the event loop's state for this connection; next, the rest of
	// a command that must wait; looped: its loop runs its commands now (it
	// is not parked, nor a script's caller), so a command that may wait
	// must leave the wait in next (whereItMayWait).
	ev     loopState
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
	// fd is the socket's descriptor CLIENT LIST shows, -1 until its loop
	// has it (a TLS connection's handshake).
	fd atomic.Int64
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

	// Guarded by srv.watches.mu: the keys c WATCHes, and whether one of
	// them changed since (Redis's CLIENT_DIRTY_CAS).
	watching []*watchedKey
	casDirty bool

	// out queues the connection's output in push mode; pushDone is the
	// writer goroutine's, nil outside push mode (outbox.go).
	out      outbox
	pushDone chan struct{}
	subs     subscriptions

	// track is the connection's CLIENT TRACKING state (tracking.go);
	// tracked, its loop's copy of whether tracking is on.
	track   tracker
	tracked bool
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
	lastActive  atomic.Int64 // unix seconds when the last batch was answered
	multiMem    atomic.Int64 // bytes of the commands queued since MULTI
	bufs        bufferStats

	// pauseHeld: CLIENT PAUSE holds c's command, which CLIENT LIST shows
	// as blocked. pauseTurn is the held command whose turn it is to run
	// (awaitTurn); postponed: the command dispatched last was held from
	// inside the section (heldAfterAll), so it has not run, and its
	// callers count nothing and end nothing (its rerun will).
	pauseHeld atomic.Bool
	pauseTurn *pauseWaiter
	postponed bool

	// CLIENT NO-EVICT and NO-TOUCH, which CLIENT LIST shows.
	noEvict, noTouch atomic.Bool
	// killed: CLIENT KILL closed the connection; guarded by srv.mu.
	killed bool

	mu      sync.Mutex // protects name, libName and libVer
	name    string
	libName string
	libVer  string
}

// loopState is what the event loop keeps on a connection (loop_linux.go
// and the files beside it), the loop goroutine's alone but for attention.
type loopState struct {
	loop *eventLoop
	// fd is the socket, duplicated out of Go's poller; sock reads and
	// writes it; interest is what it is registered with in epoll;
	// readable: epoll said it has input, which the next read reads.
	fd       int
	sock     socket
	interest uint32
	readable bool
	// received: this turn's read was made with the others' (receive),
	// which set readable; readErr is what that read ended in (the end of
	// input, a socket error), for the reader's next read to return.
	received bool
	readErr  error
	// sendDue: c is in its loop's list of replies to send this turn.
	sendDue bool
	// outBlocked: the socket did not take all output, and input is left
	// unread until it has, since blockedAt (or the last progress).
	outBlocked bool
	blockedAt  time.Time
	// parked: a goroutine runs the command's continuation; ctx ends when
	// the client leaves (peerGone) or the connection must close.
	parked   bool
	peerGone bool
	panicked bool
	ctx      context.Context
	cancel   context.CancelFunc
	// During shutdown: the connection closes once quiet past drainBy;
	// drained is what it had received when drainBy was last set.
	drainBy time.Time
	drained int64
	// attention: another goroutine woke the loop for this connection,
	// which the loop has not looked at yet (Conn.wake).
	attention atomic.Bool
}

// continuation is the rest of a command that must wait: set by its handler
// (Conn.Await) or by dispatch (whereItMayWait), run once the handler has
// returned and left the atomic section, on a goroutine of its own while
// the connection's loop has it parked (eventLoop.park).
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
	c.w = resp.NewWriter(outboxConn{c: c}, 0)
	c.remote, c.local = peerAddrs(nc)
	c.fd.Store(-1)
	if a, ok := nc.LocalAddr().(*net.UnixAddr); ok {
		c.unixPath = a.Name
	}
	c.rd = resp.NewReader(loopReader{c})
	c.authed = !s.acl.users.AuthRequired()
	c.user.Store(s.acl.users.Default())
	c.lastActive.Store(c.created.Unix())
	c.multiLen.Store(-1)
	c.x = s.ctxFor(c)
	return c
}

// Lingering after the last reply: how long, and how many bytes of further
// input to discard at most.
const (
	lingerTime  = time.Second
	lingerBytes = 64 << 20
)

// lingerClose sends FIN, discards input for up to lingerTime and closes
// nc. Closing a socket with unread input makes the kernel send a reset,
// which can destroy replies the client has not read yet, such as the error
// explaining why it is closed.
func lingerClose(nc net.Conn) {
	if cw, ok := nc.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
		nc.SetReadDeadline(time.Now().Add(lingerTime))
		io.Copy(io.Discard, io.LimitReader(nc, lingerBytes))
	}
	nc.Close()
}

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
	idle := now.Unix() - c.lastActive.Load()
	omem, _ := c.outputBuffer(now.Unix())
	multi := c.multiLen.Load()
	watched, _ := c.srv.watches.watchInfo(c)
	redir := int64(-1)
	if ti := c.track.info(); ti.on {
		redir = ti.redirect
	}
	b := c.bufs.snapshot()
	var argvMem int64
	if asker == c {
		b = c.bufs.live(c)
		for _, a := range args { // Redis's argv_len_sum
			argvMem += int64(len(a))
		}
	}
	multiMem := c.multiMem.Load()
	totMem := b.qbuf + b.qbufFree + argvMem + multiMem + b.rbs + omem + int64(unsafe.Sizeof(*c))
	return fmt.Sprintf("id=%d addr=%s laddr=%s fd=%d name=%s age=%d idle=%d flags=%s db=%d sub=%d psub=%d ssub=%d multi=%d watch=%d "+
		"qbuf=%d qbuf-free=%d argv-mem=%d multi-mem=%d rbs=%d rbp=%d obl=%d oll=0 omem=%d tot-mem=%d events=r "+
		"cmd=%s user=%s redir=%d resp=%d lib-name=%s lib-ver=%s",
		c.id, c.remote, c.local, c.fd.Load(), name, age, idle, c.flagLetters(), c.db.Load(),
		c.subs.counts[subChannel].Load(), c.subs.counts[subPattern].Load(), c.subs.counts[subShard].Load(),
		multi, watched, b.qbuf, b.qbufFree, argvMem, multiMem, b.rbs, b.rbp, b.obl, omem, totMem,
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
	next := func() {
		ctx := context.Background()
		if c.ev.ctx != nil {
			ctx = c.ev.ctx
		}
		wait(ctx)()
	}
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
	if p.ReadsAllKeys() {
		return nil
	}
	return func(key string) bool { return p.CanAccessKey([]byte(key), true, false) }
}

// ReadsAllKeys reports whether c's user may read every key
// (commands.Client).
func (c *Conn) ReadsAllKeys() bool { return c.user.Load().Perms().ReadsAllKeys() }

// InScript reports whether c is a script's (commands.Client).
func (c *Conn) InScript() bool { return c.lua }

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
