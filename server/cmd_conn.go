package server

import (
	"cmp"
	"math"
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
	case c.subs.Total() > 0 && c.w.Protocol() == 2:
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
	case n < math.MinInt32 || n > math.MaxInt32:
		c.w.Error(commands.ErrInt32Range)
	case c.srv.store.DB(int(n)) == nil:
		c.w.Error(commands.ErrDBRange)
	default:
		c.selectDB(int(n))
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

func writeClientInfos(b *strings.Builder, asker *Conn, args [][]byte, conns []*Conn) {
	for _, other := range conns {
		if other != asker && other.revoked.Load() {
			continue // closing, as Redis has freed it by now (revoke)
		}
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
