package server

import (
	"cmp"
	"slices"
	"strings"

	"github.com/stampedeless/stampedeless/acl"
	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/resp"
)

func cmdPing(c *Conn, args [][]byte) {
	switch {
	case len(args) > 2:
		c.w.Error("ERR wrong number of arguments for 'ping' command")
	case c.subs.total() > 0 && c.w.Protocol() == 2:
		// In subscriber mode a RESP2 client reads every reply as a push.
		c.w.Array(2)
		c.w.BulkString("pong")
		if len(args) == 2 {
			c.w.Bulk(args[1])
		} else {
			c.w.BulkString("")
		}
	case len(args) == 2:
		c.w.Bulk(args[1])
	default:
		c.w.Status("PONG")
	}
}

func cmdEcho(c *Conn, args [][]byte) { c.w.Bulk(args[1]) }

func cmdQuit(c *Conn, _ [][]byte) {
	c.w.OK()
	c.quit = true
}

func cmdSelect(c *Conn, args [][]byte) {
	n, ok := resp.ParseInt(args[1])
	switch {
	case !ok:
		c.w.Error(commands.ErrNotInteger)
	case n != 0:
		c.w.Error(commands.ErrDBRange)
	default:
		c.w.OK()
	}
}

// authenticate checks a user name and password for AUTH or HELLO (cmdName,
// as sent, which ACL LOG shows) and returns the error text to reply, if
// any. user is nil for AUTH's one-argument form: the default user, which
// must then have a password. On success the connection is the user's.
func (c *Conn) authenticate(cmdName, user, pass []byte) string {
	users := c.srv.acl.users
	name := acl.DefaultUser
	if user != nil {
		name = string(user)
	} else if users.Default().Perms().NoPass() {
		return "ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?"
	}
	u := users.Authenticate(name, pass)
	if u != nil {
		prev := c.user.Swap(u)
		if !u.Deleted() {
			c.authed = true
			return ""
		}
		// Deleted since it was found: the deleter may have looked for its
		// connections already.
		c.user.Store(prev)
	}
	c.logDenial(acl.DeniedAuth, string(cmdName), name)
	c.srv.logRefused(refusedAuth, "authentication failed", "user", name, "client", c.remote.String())
	return "WRONGPASS invalid username-password pair or user is disabled."
}

func cmdAuth(c *Conn, args [][]byte) {
	var user, pass []byte
	switch len(args) {
	case 2:
		pass = args[1]
	case 3:
		user, pass = args[1], args[2]
	default:
		c.w.Error(commands.ErrSyntax)
		return
	}
	if errText := c.authenticate(args[0], user, pass); errText != "" {
		c.w.Error(errText)
		return
	}
	c.w.OK()
}

// cmdHello implements HELLO [protover [AUTH user pass] [SETNAME name]] as
// Redis 7.2 does: every option is parsed first, then AUTH runs, then the
// client must be authenticated, then the name is set and the protocol
// switched. protover 2 or 3 selects the connection's protocol; without it the
// protocol stays as it is. The reply is a map (a flat array in RESP2) written
// in the protocol just selected.
func cmdHello(c *Conn, args [][]byte) {
	var proto int64
	if len(args) >= 2 {
		var ok bool
		if proto, ok = resp.ParseInt(args[1]); !ok {
			c.w.Error("ERR Protocol version is not an integer or out of range")
			return
		}
		if proto != 2 && proto != 3 {
			c.w.Error("NOPROTO unsupported protocol version")
			return
		}
	}
	var setName []byte
	for i := 2; i < len(args); i++ {
		switch {
		case resp.EqualFold(args[i], "auth") && i+2 < len(args):
			if errText := c.authenticate(args[0], args[i+1], args[i+2]); errText != "" {
				c.w.Error(errText)
				return
			}
			i += 2
		case resp.EqualFold(args[i], "setname") && i+1 < len(args):
			setName = args[i+1]
			if !validClientName(setName) {
				c.w.Error("ERR Client names cannot contain spaces, newlines or special characters.")
				return
			}
			i++
		default:
			c.w.Error("ERR Syntax error in HELLO option '" + string(args[i]) + "'")
			return
		}
	}
	if !c.authenticated() {
		c.w.Error("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return
	}
	if setName != nil {
		c.mu.Lock()
		c.name = string(setName)
		c.mu.Unlock()
	}
	if proto != 0 {
		c.w.SetProtocol(int(proto))
	}
	c.w.Map(7)
	c.w.BulkString("server")
	c.w.BulkString("redis")
	c.w.BulkString("version")
	c.w.BulkString(RedisVersion)
	c.w.BulkString("proto")
	c.w.Int(int64(c.w.Protocol()))
	c.w.BulkString("id")
	c.w.Int(c.id)
	c.w.BulkString("mode")
	c.w.BulkString("standalone")
	c.w.BulkString("role")
	c.w.BulkString("master")
	c.w.BulkString("modules")
	c.w.Array(0)
}

// The CLIENT subcommands clients send on connect and operators use to
// look at connections.

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

func writeClientInfos(b *strings.Builder, asker *Conn, args [][]byte, conns []*Conn) {
	for _, other := range conns {
		b.WriteString(other.info(asker, args))
		b.WriteByte('\n')
	}
}

// clients returns the open connections ordered by id.
func (s *Server) clients() []*Conn {
	s.mu.Lock()
	out := make([]*Conn, 0, len(s.conns))
	for c := range s.conns {
		out = append(out, c)
	}
	s.mu.Unlock()
	slices.SortFunc(out, func(a, b *Conn) int { return cmp.Compare(a.id, b.id) })
	return out
}

// cmdShutdown implements SHUTDOWN [NOSAVE|SAVE] [NOW] [FORCE] [ABORT] with
// Redis 7's argument rules. There is nothing to save and no replica to wait
// for, so every form stops the server the way SIGTERM does (a graceful
// drain, Options.Shutdown); as in Redis the client gets no reply, its
// connection is closed. ABORT has no shutdown in progress to abort: the
// drain, once started, is not stopped.
func cmdShutdown(c *Conn, args [][]byte) {
	var save, nosave, abort, other bool
	for _, a := range args[1:] {
		switch {
		case resp.EqualFold(a, "nosave"):
			nosave = true
		case resp.EqualFold(a, "save"):
			save = true
		case resp.EqualFold(a, "now"), resp.EqualFold(a, "force"):
			other = true
		case resp.EqualFold(a, "abort"):
			abort = true
		default:
			c.w.Error(commands.ErrSyntax)
			return
		}
	}
	if abort && (save || nosave || other) || save && nosave {
		c.w.Error(commands.ErrSyntax)
		return
	}
	if abort {
		c.w.Error("ERR No shutdown in progress.")
		return
	}
	stop := c.srv.opts.Shutdown
	if stop == nil {
		c.w.Error("ERR Errors trying to SHUTDOWN. Check logs.")
		return
	}
	// As Redis: with snapshots on, SHUTDOWN saves (SAVE or not) unless
	// NOSAVE, and a failed save leaves the server running. The process
	// saves once more at exit only if something changed meanwhile.
	saver := c.srv.opts.Saver
	if nosave {
		saver.SkipFinalSave()
	} else if saver.Enabled() {
		saver.Wait()
		if err := saver.Save(); err != nil {
			c.srv.log.Error("SHUTDOWN: the snapshot failed; not shutting down", "err", err)
			c.w.Error("ERR Errors trying to SHUTDOWN. Check logs.")
			return
		}
	}
	c.srv.log.Warn("SHUTDOWN asked by a client; shutting down", "client", c.remote.String(), "id", c.id,
		"user", c.user.Load().Name())
	stop()
	c.quit = true
}
