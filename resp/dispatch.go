package resp

import "strings"

// dispatch runs one command and counts its result.
func (s *Server) dispatch(c *Conn, args [][]byte) {
	if c.revoked.Load() { // its user was deleted: it runs nothing more
		c.quit = true
		return
	}
	s.commandsTotal.Add(1)
	cmd := s.lookup(c, args[0])
	if cmd == nil {
		s.unknown.fail.Inc()
		c.w.Error(unknownCommand(args))
		return
	}
	counted := cmd // subcommands are counted as their container
	before := c.w.Len()
	if len(cmd.subcommands) > 0 && len(args) > 1 {
		cmd = cmd.subcommand(args[1])
	}
	// CLIENT LIST shows the subcommand, or NULL for an unknown one.
	c.lastCommand.Store(cmd)
	// Redis's order: the (sub)command exists, its arity, authentication,
	// then the user's permissions.
	switch {
	case cmd == nil:
		c.w.Error("ERR unknown subcommand '" + string(truncate(args[1], 128)) + "'. Try " +
			strings.ToUpper(counted.name) + " HELP.")
	case !cmd.arityOK(len(args)):
		c.w.Error("ERR wrong number of arguments for '" + cmd.name + "' command")
	case !c.authenticated() && cmd.flags&flagNoAuth == 0:
		c.w.Error(errNoAuth)
	case !c.permitted(cmd, args):
	case c.subs.total() > 0 && c.w.Protocol() == 2 && cmd.flags&flagSubscriberOK == 0:
		// A RESP2 client in subscriber mode reads only pushes and these
		// commands' replies; RESP3 tells them apart and has no limit.
		c.w.Error("ERR Can't execute '" + cmd.name + "': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context")
	case s.opts.Shared != nil && cmd.firstKey > 0 && !cmd.own && cmd.flags&flagPubSub == 0:
		// (Shard channels are keys to COMMAND INFO, not to the shared tier.)
		s.runShared(c, cmd, args)
	default:
		cmd.handler(c, args)
	}
	if c.ev.resume != nil {
		c.ev.resumeCounted = counted // counted when it has answered
		return
	}
	countReply(counted, c, before)
}

// countReply counts a command by whether the reply written since before is
// an error.
func countReply(counted *command, c *Conn, before int) {
	if c.w.Len() > before && c.w.b[before] == '-' {
		counted.counters.fail.Inc()
	} else {
		counted.counters.ok.Inc()
	}
}

// lookup finds a command by name, case-insensitively, without allocating.
func (s *Server) lookup(c *Conn, name []byte) *command {
	if len(name) > len(c.scratch) {
		return nil
	}
	lower := c.scratch[:len(name)]
	for i, b := range name {
		if 'A' <= b && b <= 'Z' {
			b += 'a' - 'A'
		}
		lower[i] = b
	}
	return s.table[string(lower)]
}

// unknownCommand is Redis's text for a command not in the table, quoting
// the first arguments up to about 128 bytes.
func unknownCommand(args [][]byte) string {
	var b strings.Builder
	b.WriteString("ERR unknown command '")
	b.Write(truncate(args[0], 128))
	b.WriteString("', with args beginning with: ")
	n := 0
	for _, a := range args[1:] {
		if n >= 128 {
			break
		}
		a = truncate(a, 128-n)
		b.WriteByte('\'')
		b.Write(a)
		b.WriteString("' ")
		n += len(a) + 3
	}
	return b.String()
}

func truncate(b []byte, n int) []byte {
	if len(b) > n {
		return b[:n]
	}
	return b
}
