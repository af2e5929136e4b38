package server

import (
	"strconv"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/internal/redisconfig"
	"github.com/stampedeless/stampedeless/resp"
)

func cmdSlowlogGet(c *Conn, args [][]byte) {
	l := &c.srv.slowlog
	count := int64(10)
	if len(args) > 3 {
		subcommandSyntaxError(c, args)
		return
	}
	if len(args) == 3 {
		n, ok := resp.ParseInt(args[2])
		if !ok || n < -1 {
			c.w.Error("ERR count should be greater than or equal to -1")
			return
		}
		if count = n; n == -1 {
			count = l.Len()
		}
	}
	entries := l.Newest(count)
	c.w.Array(len(entries))
	for _, e := range entries {
		c.w.Array(6)
		c.w.Int(e.ID)
		c.w.Int(e.Unix)
		c.w.Int(e.Micros)
		c.w.Array(len(e.Args))
		for _, a := range e.Args {
			c.w.Bulk(a)
		}
		c.w.BulkString(e.Peer)
		c.w.BulkString(e.Name)
	}
}

func cmdSlowlogLen(c *Conn, _ [][]byte) { c.w.Int(c.srv.slowlog.Len()) }

func cmdSlowlogReset(c *Conn, _ [][]byte) {
	c.srv.slowlog.Reset()
	c.w.OK()
}

func cmdSlowlogHelp(c *Conn, _ [][]byte) {
	commands.WriteHelp(c.w, "SLOWLOG",
		"GET [<count>]",
		"    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
		"    Entries are made of:",
		"    id, timestamp, time in microseconds, arguments array, client IP and port,",
		"    client name",
		"LEN",
		"    Return the length of the slowlog.",
		"RESET",
		"    Reset the slowlog.")
}

// getSlowlogSlowerThan and the others are CONFIG's slowlog-log-slower-than
// and slowlog-max-len, with Redis's bounds.
func getSlowlogSlowerThan(s *Server) string {
	return strconv.FormatInt(s.slowlog.SlowerThan(), 10)
}

func setSlowlogSlowerThan(s *Server, v string) error {
	n, err := redisconfig.Integer(v, -1, 1<<63-1)
	if err == nil {
		s.slowlog.SetSlowerThan(n)
	}
	return err
}

func getSlowlogMaxLen(s *Server) string { return strconv.FormatInt(s.slowlog.MaxLen(), 10) }

func setSlowlogMaxLen(s *Server, v string) error {
	n, err := redisconfig.Integer(v, 0, 1<<63-1)
	if err == nil {
		s.slowlog.SetMaxLen(n)
	}
	return err
}
