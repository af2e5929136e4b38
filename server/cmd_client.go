package server

import (
	"net"
	"strings"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/resp"
)

// CLIENT's subcommands (but TRACKING, CACHING, GETREDIR and TRACKINGINFO,
// which are tracking's, in tracking.go), and RESET and WAIT, which change
// or read a connection's state.

// resetState returns the connection to the state of a new one, as RESET
// does (Redis's clearClientConnectionState): RESP2, database 0, the
// default user (authenticated only if no password is required), no name,
// NO-EVICT and NO-TOUCH off. lib-name and lib-ver stay, as in Redis 7.2:
// they describe the client library, which has not changed. Whatever else
// keeps state on a connection (a transaction and watched keys,
// subscriptions, tracking, MONITOR) is cleared here too.
func (c *Conn) resetState() {
	c.endTransaction() // MULTI discarded, keys unwatched
	c.srv.monitors.remove(c)
	// Subscriptions and tracking end without confirmations, and what the
	// connection had queued is sent before the reply to RESET.
	c.leavePubSub()
	c.trackingOff()
	c.stopPushing()
	c.w.SetProtocol(2)
	c.authed = !c.srv.acl.users.AuthRequired()
	c.user.Store(c.srv.acl.users.Default())
	c.mu.Lock()
	c.name = ""
	c.mu.Unlock()
	c.noEvict.Store(false)
	c.noTouch.Store(false)
	c.selectDB(0)
}

func cmdReset(c *Conn, _ [][]byte) {
	c.resetState()
	c.w.Status("RESET")
}

// clientType is what CLIENT LIST TYPE and CLIENT KILL TYPE select on.
type clientType uint8

const (
	clientNormal clientType = iota
	clientReplica
	clientMaster
	clientPubSub
)

// parseClientType reads a type name as Redis's getClientTypeByName does.
func parseClientType(name []byte) (clientType, bool) {
	switch {
	case resp.EqualFold(name, "normal"):
		return clientNormal, true
	case resp.EqualFold(name, "replica"), resp.EqualFold(name, "slave"):
		return clientReplica, true
	case resp.EqualFold(name, "master"):
		return clientMaster, true
	case resp.EqualFold(name, "pubsub"):
		return clientPubSub, true
	}
	return 0, false
}

// kind is the connection's type. Every connection is a normal client
// until one subscribes to a channel.
func (c *Conn) kind() clientType {
	if c.subs.Total() > 0 {
		return clientPubSub
	}
	return clientNormal
}

// flagLetters is the connection's flags field in CLIENT LIST, in Redis's
// order: O for a monitor, P for a subscriber, x in MULTI, b blocked (BLPOP,
// or held by CLIENT PAUSE, as Redis blocks it), t tracking, R its redirect target
// closed, B in BCAST mode, d a watched key changed, e for NO-EVICT, T for
// NO-TOUCH, N for none.
func (c *Conn) flagLetters() string {
	var b []byte
	if c.monitoring.Load() {
		b = append(b, 'O')
	}
	if c.subs.Total() > 0 {
		b = append(b, 'P')
	}
	if c.multiLen.Load() >= 0 {
		b = append(b, 'x')
	}
	if c.srv.blocked.IsBlocked(c.id) || c.pauseHeld.Load() {
		b = append(b, 'b')
	}
	if ti := c.track.Info(); ti.On {
		b = append(b, 't')
		if ti.Broken {
			b = append(b, 'R')
		}
		if ti.BCAST {
			b = append(b, 'B')
		}
	}
	if _, dirty := c.srv.watches.Info(&c.watch); dirty {
		b = append(b, 'd')
	}
	if c.noEvict.Load() {
		b = append(b, 'e')
	}
	if c.noTouch.Load() {
		b = append(b, 'T')
	}
	if len(b) == 0 {
		return "N"
	}
	return string(b)
}

// killFilter is what CLIENT KILL selects connections by.
type killFilter struct {
	addr, laddr []byte // nil: any
	id          int64  // 0: any
	kind        clientType
	anyKind     bool
	skipMe      bool
}

func (f *killFilter) matches(self, c *Conn) bool {
	switch {
	case f.addr != nil && string(f.addr) != addrString(c.remote),
		f.laddr != nil && string(f.laddr) != addrString(c.local),
		!f.anyKind && c.kind() != f.kind,
		f.id != 0 && c.id != f.id,
		f.skipMe && c == self:
		return false
	}
	return true
}

func addrString(a net.Addr) string {
	if a == nil {
		return ""
	}
	return a.String()
}

// cmdClientKill implements CLIENT KILL addr and CLIENT KILL [ID id] [TYPE
// type] [USER user] [ADDR addr] [LADDR laddr] [SKIPME yes|no]. The old
// form may kill the caller and replies OK or an error; the new one skips
// the caller unless SKIPME no and replies how many it killed. The caller,
// if killed, is closed after its reply, as in Redis; others are closed at
// once, which they see as the server ending the connection.
func cmdClientKill(c *Conn, args [][]byte) {
	f := killFilter{anyKind: true, skipMe: true}
	if len(args) == 3 {
		f.addr, f.skipMe = args[2], false
	} else if !parseKillFilter(c, args[2:], &f) {
		return
	}
	killed := 0
	for _, other := range c.srv.clients() {
		if !f.matches(c, other) {
			continue
		}
		killed++
		if other == c {
			c.srv.mu.Lock()
			c.killed = true
			c.srv.mu.Unlock()
			c.quit = true // after this reply
			continue
		}
		c.srv.kill(other)
	}
	switch {
	case len(args) > 3:
		c.w.Int(int64(killed))
	case killed == 0:
		c.w.Error("ERR No such client")
	default:
		c.w.OK()
	}
}

// parseKillFilter reads CLIENT KILL's option-value pairs into f, or
// replies with the error and reports false.
func parseKillFilter(c *Conn, opts [][]byte, f *killFilter) bool {
	for i := 0; i < len(opts); i += 2 {
		if i+1 == len(opts) {
			c.w.Error(commands.ErrSyntax)
			return false
		}
		opt, val := opts[i], opts[i+1]
		switch {
		case resp.EqualFold(opt, "id"):
			id, ok := resp.ParseInt(val)
			if !ok || id < 1 {
				c.w.Error("ERR client-id should be greater than 0")
				return false
			}
			f.id = id
		case resp.EqualFold(opt, "type"):
			kind, ok := parseClientType(val)
			if !ok {
				c.w.Error("ERR Unknown client type '" + string(val) + "'")
				return false
			}
			f.kind, f.anyKind = kind, false
		case resp.EqualFold(opt, "addr"):
			f.addr = val
		case resp.EqualFold(opt, "laddr"):
			f.laddr = val
		case resp.EqualFold(opt, "user"):
			// The default user is the only one, and every client's.
			if string(val) != "default" {
				c.w.Error("ERR No such user '" + string(val) + "'")
				return false
			}
		case resp.EqualFold(opt, "skipme") && resp.EqualFold(val, "yes"):
			f.skipMe = true
		case resp.EqualFold(opt, "skipme") && resp.EqualFold(val, "no"):
			f.skipMe = false
		default:
			c.w.Error(commands.ErrSyntax)
			return false
		}
	}
	return true
}

// kill closes another connection: its loop closes it, once its command
// has answered if it waits for one, counted as closed by reason "killed".
// One that killed itself closes after its reply (c.quit).
func (s *Server) kill(c *Conn) {
	s.mu.Lock()
	c.killed = true
	s.mu.Unlock()
	c.wake()
}

// onOff reads CLIENT NO-EVICT's and NO-TOUCH's argument into flag.
func onOff(c *Conn, arg []byte, flag interface{ Store(bool) }) {
	switch {
	case resp.EqualFold(arg, "on"):
		flag.Store(true)
	case resp.EqualFold(arg, "off"):
		flag.Store(false)
	default:
		c.w.Error(commands.ErrSyntax)
		return
	}
	c.w.OK()
}

// cmdClientNoEvict implements CLIENT NO-EVICT on|off. It is accepted and
// shown in CLIENT LIST; client connections are never evicted here.
func cmdClientNoEvict(c *Conn, args [][]byte) { onOff(c, args[2], &c.noEvict) }

// cmdClientNoTouch implements CLIENT NO-TOUCH on|off (Redis 7.2): with it
// on, the connection's reads do not make keys more likely to stay. TOUCH
// still does.
func cmdClientNoTouch(c *Conn, args [][]byte) { onOff(c, args[2], &c.noTouch) }

// cmdWait implements WAIT numreplicas timeout. There are no replicas, so
// it answers 0 at once, where Redis would wait up to timeout for
// numreplicas above 0.
func cmdWait(c *Conn, args [][]byte) {
	if _, ok := resp.ParseInt(args[1]); !ok {
		c.w.Error(commands.ErrNotInteger)
		return
	}
	timeout, ok := resp.ParseInt(args[2])
	switch {
	case !ok:
		c.w.Error("ERR timeout is not an integer or out of range")
	case timeout < 0:
		c.w.Error("ERR timeout is negative")
	default:
		c.w.Int(0)
	}
}

// replyMode is CLIENT REPLY's state.
type replyMode uint8

const (
	replyOn   replyMode = iota
	replyOff            // until CLIENT REPLY ON
	replySkip           // this command's reply is dropped
)

// cmdClientReply implements CLIENT REPLY ON|OFF|SKIP as Redis does: OFF
// drops every reply, errors included, until ON, whose +OK is sent; SKIP
// drops the next command's reply (not while OFF).
func cmdClientReply(c *Conn, args [][]byte) {
	switch {
	case resp.EqualFold(args[2], "on"):
		c.reply, c.skipNext = replyOn, false
		c.w.OK()
	case resp.EqualFold(args[2], "off"):
		c.reply = replyOff
	case resp.EqualFold(args[2], "skip"):
		c.skipNext = c.reply != replyOff
	default:
		c.w.Error(commands.ErrSyntax)
	}
}

// gateReply drops the reply written since mark if CLIENT REPLY says so, as
// it stands once the command has run (ON's own +OK is sent), and moves a
// SKIP on to the next command, as Redis's resetClient does.
func (c *Conn) gateReply(mark int) {
	if c.reply != replyOn {
		// min: what a flush inside the command sent is gone already.
		c.w.Truncate(mark)
	}
	if c.reply == replySkip {
		c.reply = replyOn
	}
	if c.skipNext {
		c.reply, c.skipNext = replySkip, false
	}
}

// gateReplyAfter is gateReply, put off while the command finishes in its
// continuation (Server.runContinuation).
func (c *Conn) gateReplyAfter(mark int) {
	if c.next.run != nil {
		c.next.gate = true
		return
	}
	c.gateReply(mark)
}

func cmdClientSetName(c *Conn, args [][]byte) {
	if !validClientName(args[2]) {
		c.w.Error("ERR Client names cannot contain spaces, newlines or special characters.")
		return
	}
	c.mu.Lock()
	c.name = string(args[2])
	c.mu.Unlock()
	c.w.OK()
}

func cmdClientGetName(c *Conn, _ [][]byte) {
	c.mu.Lock()
	name := c.name
	c.mu.Unlock()
	if name == "" {
		c.w.Null()
	} else {
		c.w.BulkString(name)
	}
}

func cmdClientID(c *Conn, _ [][]byte) { c.w.Int(c.id) }

// cmdClientInfo replies with the connection's CLIENT LIST line, a verbatim
// string in RESP3 as in Redis.
func cmdClientInfo(c *Conn, args [][]byte) { c.w.Verbatim("txt", c.info(c, args)+"\n") }

func cmdClientHelp(c *Conn, _ [][]byte) {
	commands.WriteHelp(c.w, "CLIENT",
		"CACHING (YES|NO)", "    Enable/disable tracking of the keys for next command in OPTIN/OPTOUT modes.",
		"GETREDIR", "    Return the client ID we are redirecting to when tracking is enabled.",
		"GETNAME", "    Return the name of the current connection.",
		"ID", "    Return the ID of the current connection.",
		"INFO", "    Return information about the current client connection.",
		"KILL <ip:port>", "    Kill connection made from <ip:port>.",
		"KILL <option> <value> [<option> <value> [...]]", "    Kill connections. Options are:",
		"    * ADDR (<ip:port>|<unixsocket>:0)", "      Kill connections made from the specified address",
		"    * LADDR (<ip:port>|<unixsocket>:0)", "      Kill connections made to specified local address",
		"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)", "      Kill connections by type.",
		"    * USER <username>", "      Kill connections authenticated by <username>.",
		"    * SKIPME (YES|NO)", "      Skip killing current connection (default: yes).",
		"LIST [options ...]", "    Return information about client connections. Options:",
		"    * TYPE (NORMAL|MASTER|REPLICA|PUBSUB)", "      Return clients of specified type.",
		"UNPAUSE", "    Stop the current client pause, resuming traffic.",
		"PAUSE <timeout> [WRITE|ALL]", "    Suspend all, or just write, clients for <timeout> milliseconds.",
		"SETINFO <LIB-NAME|LIB-VER> <value>", "    Set client library name or version.",
		"SETNAME <name>", "    Assign the name <name> to the current connection.",
		"TRACKING (ON|OFF) [REDIRECT <id>] [BCAST] [PREFIX <prefix> [...]]", "         [OPTIN] [OPTOUT] [NOLOOP]",
		"    Control server assisted client side caching.",
		"TRACKINGINFO", "    Report tracking status for the current connection.",
		"NO-EVICT (ON|OFF)", "    Protect current client connection from eviction.",
		"NO-TOUCH (ON|OFF)", "    Will not touch LRU/LFU stats when this mode is on.")
}

// cmdClientSetInfo implements CLIENT SETINFO LIB-NAME|LIB-VER value, which
// checks the attribute before the value and names it as given.
func cmdClientSetInfo(c *Conn, args [][]byte) {
	attr, value := args[2], args[3]
	var dst *string
	switch {
	case resp.EqualFold(attr, "lib-name"):
		dst = &c.libName
	case resp.EqualFold(attr, "lib-ver"):
		dst = &c.libVer
	default:
		c.w.Error("ERR Unrecognized option '" + string(attr) + "'")
		return
	}
	if !validClientName(value) {
		c.w.Error("ERR " + string(attr) + " cannot contain spaces, newlines or special characters.")
		return
	}
	c.mu.Lock()
	*dst = string(value)
	c.mu.Unlock()
	c.w.OK()
}

// cmdClientList implements CLIENT LIST [TYPE normal|master|replica|pubsub]
// and CLIENT LIST ID id [id ...], one or the other as in Redis 7.0. Ids are
// listed in the order given, each time given; unknown ones are skipped. The
// lines are a verbatim string in RESP3.
func cmdClientList(c *Conn, args [][]byte) {
	var b strings.Builder
	switch {
	case len(args) == 2:
		writeClientInfos(&b, c, args, c.srv.clients())
	case len(args) == 4 && resp.EqualFold(args[2], "type"):
		kind, ok := parseClientType(args[3])
		if !ok {
			c.w.Error("ERR Unknown client type '" + string(args[3]) + "'")
			return
		}
		var conns []*Conn
		for _, other := range c.srv.clients() {
			if other.kind() == kind {
				conns = append(conns, other)
			}
		}
		writeClientInfos(&b, c, args, conns)
	case len(args) > 3 && resp.EqualFold(args[2], "id"):
		byID := make(map[int64]*Conn)
		for _, other := range c.srv.clients() {
			byID[other.id] = other
		}
		for _, a := range args[3:] {
			id, ok := resp.ParseInt(a)
			if !ok {
				c.w.Error("ERR Invalid client ID")
				return
			}
			if other := byID[id]; other != nil {
				writeClientInfos(&b, c, args, []*Conn{other})
			}
		}
	default:
		c.w.Error(commands.ErrSyntax)
		return
	}
	c.w.Verbatim("txt", b.String())
}

// cmdClientUnblock implements CLIENT UNBLOCK client-id [TIMEOUT|ERROR]:
// 1 if that client was blocked (BLPOP and the like) and is no longer, 0
// otherwise.
func cmdClientUnblock(c *Conn, args [][]byte) {
	if len(args) > 4 {
		subcommandSyntaxError(c, args)
		return
	}
	withError := false
	if len(args) == 4 {
		switch {
		case resp.EqualFold(args[3], "timeout"):
		case resp.EqualFold(args[3], "error"):
			withError = true
		default:
			c.w.Error("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
			return
		}
	}
	id, ok := resp.ParseInt(args[2])
	if !ok {
		c.w.Error(commands.ErrNotInteger)
		return
	}
	c.w.Int(commands.BoolInt(c.srv.blocked.Unblock(id, withError)))
}
