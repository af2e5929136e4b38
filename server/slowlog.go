package server

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/internal/redisconfig"
	"github.com/stampedeless/stampedeless/resp"
)

// Redis's defaults and bounds for the slow log.
const (
	defaultSlowlogSlowerThan = 10000 // µs
	defaultSlowlogMaxLen     = 128
	slowlogMaxArgs           = 32  // an entry's arguments, the last one saying how many more
	slowlogMaxArgLen         = 128 // bytes of one argument kept
)

// slowEntry is one entry of SLOWLOG GET, in Redis's shape.
type slowEntry struct {
	id, unix, micros int64
	args             [][]byte // copied and cut as Redis cuts them
	peer, name       string
}

// slowlog is the server's slow log: the newest commands that took at least
// slowerThan microseconds, at most maxLen of them. Commands call add from
// every connection's goroutine; mu is held only to append and trim.
type slowlog struct {
	slowerThan atomic.Int64 // µs; negative: off
	maxLen     atomic.Int64

	mu      sync.Mutex  // protects entries and nextID
	entries []slowEntry // oldest first
	nextID  int64
}

func (l *slowlog) init() {
	l.slowerThan.Store(defaultSlowlogSlowerThan)
	l.maxLen.Store(defaultSlowlogMaxLen)
}

// wants reports whether a command of micros µs goes into the log.
func (l *slowlog) wants(micros int64) bool {
	t := l.slowerThan.Load()
	return t >= 0 && micros >= t
}

// add logs a command that took micros µs, as Redis's slowlogCreateEntry
// keeps it: at most 32 arguments and 128 bytes of each, with redacted
// arguments already replaced. now is the server's clock.
func (l *slowlog) add(args [][]byte, micros int64, peer, name string, now time.Time) {
	n := min(len(args), slowlogMaxArgs)
	kept := make([][]byte, n)
	for i := range n {
		a := args[i]
		switch {
		case n != len(args) && i == n-1:
			kept[i] = fmt.Appendf(nil, "... (%d more arguments)", len(args)-n+1)
		case len(a) > slowlogMaxArgLen:
			kept[i] = fmt.Appendf(append([]byte(nil), a[:slowlogMaxArgLen]...), "... (%d more bytes)", len(a)-slowlogMaxArgLen)
		default:
			kept[i] = append([]byte(nil), a...)
		}
	}
	e := slowEntry{unix: now.Unix(), micros: micros, args: kept, peer: peer, name: name}
	l.mu.Lock()
	e.id = l.nextID
	l.nextID++
	l.entries = append(l.entries, e)
	l.trimLocked()
	l.mu.Unlock()
}

// trimLocked drops the oldest entries past maxLen; with mu held.
func (l *slowlog) trimLocked() {
	if over := len(l.entries) - int(l.maxLen.Load()); over > 0 {
		l.entries = append(l.entries[:0], l.entries[over:]...)
	}
}

func (l *slowlog) trim() {
	l.mu.Lock()
	l.trimLocked()
	l.mu.Unlock()
}

// newest returns up to n entries, newest first.
func (l *slowlog) newest(n int64) []slowEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	n = min(n, int64(len(l.entries)))
	out := make([]slowEntry, n)
	for i := range out {
		out[i] = l.entries[len(l.entries)-1-i]
	}
	return out
}

func (l *slowlog) len() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return int64(len(l.entries))
}

func (l *slowlog) reset() {
	l.mu.Lock()
	l.entries = nil
	l.mu.Unlock()
}

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
			count = l.len()
		}
	}
	entries := l.newest(count)
	c.w.Array(len(entries))
	for _, e := range entries {
		c.w.Array(6)
		c.w.Int(e.id)
		c.w.Int(e.unix)
		c.w.Int(e.micros)
		c.w.Array(len(e.args))
		for _, a := range e.args {
			c.w.Bulk(a)
		}
		c.w.BulkString(e.peer)
		c.w.BulkString(e.name)
	}
}

func cmdSlowlogLen(c *Conn, _ [][]byte) { c.w.Int(c.srv.slowlog.len()) }

func cmdSlowlogReset(c *Conn, _ [][]byte) {
	c.srv.slowlog.reset()
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
	return strconv.FormatInt(s.slowlog.slowerThan.Load(), 10)
}

func setSlowlogSlowerThan(s *Server, v string) error {
	n, err := redisconfig.Integer(v, -1, 1<<63-1)
	if err == nil {
		s.slowlog.slowerThan.Store(n)
	}
	return err
}

func getSlowlogMaxLen(s *Server) string { return strconv.FormatInt(s.slowlog.maxLen.Load(), 10) }

func setSlowlogMaxLen(s *Server, v string) error {
	n, err := redisconfig.Integer(v, 0, 1<<63-1)
	if err == nil {
		s.slowlog.maxLen.Store(n)
		s.slowlog.trim()
	}
	return err
}
