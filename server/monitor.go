package server

import (
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stampedeless/stampedeless/resp"
)

// monitors are the connections in MONITOR mode. Each gets every command
// that runs as one line, pushed through its outbox as a subscriber gets
// messages, so a monitor that does not read is closed at the pubsub
// output limit like a subscriber.
type monitors struct {
	n     atomic.Int32 // len(conns), read on every command
	mu    sync.Mutex   // protects conns; held while a line is pushed to them all, so every monitor sees one order
	conns []*Conn
}

func (m *monitors) add(c *Conn) {
	m.mu.Lock()
	m.conns = append(m.conns, c)
	m.n.Store(int32(len(m.conns)))
	m.mu.Unlock()
}

// remove takes c out of MONITOR mode, if it was in it.
func (m *monitors) remove(c *Conn) {
	if !c.monitoring.Load() {
		return
	}
	c.monitoring.Store(false)
	m.mu.Lock()
	for i, o := range m.conns {
		if o == c {
			m.conns = append(m.conns[:i], m.conns[i+1:]...)
			break
		}
	}
	m.n.Store(int32(len(m.conns)))
	m.mu.Unlock()
}

// cmdMonitor puts the connection in MONITOR mode, answering +OK before the
// first line; a connection in it already gets no reply, as from Redis.
func cmdMonitor(c *Conn, _ [][]byte) {
	if c.tx.inSection {
		// Redis denies what would block to EXEC's commands.
		c.w.Error("ERR MONITOR isn't allowed for DENY BLOCKING client")
		return
	}
	if c.monitoring.Load() {
		return
	}
	c.monitoring.Store(true)
	c.startMonitoring()
}

// startMonitoring starts push mode, queues +OK in it and only then joins
// the monitors, so that no line comes before the reply.
func (c *Conn) startMonitoring() {
	c.startPushing()
	c.w.OK()
	c.w.Flush()
	c.srv.monitors.add(c)
}

// feedMonitors sends a command to the monitors in Redis's line format:
// +<unix seconds>.<µs> [<db> <client>] "arg" "arg"..., the arguments quoted as
// Redis's sdscatrepr quotes them and the secrets redacted.
func (s *Server) feedMonitors(c *Conn, cmd *command, args [][]byte) {
	if s.monitors.n.Load() == 0 {
		return
	}
	args = redactedArgs(cmd, args)
	now := s.store.Now()
	line := make([]byte, 0, 64)
	line = append(line, '+')
	line = strconv.AppendInt(line, now.Unix(), 10)
	line = append(line, '.')
	us := now.Nanosecond() / int(time.Microsecond)
	line = append(line, byte('0'+us/100000), byte('0'+us/10000%10), byte('0'+us/1000%10),
		byte('0'+us/100%10), byte('0'+us/10%10), byte('0'+us%10))
	line = append(line, " ["...)
	line = strconv.AppendInt(line, int64(c.db.Load()), 10)
	line = append(line, ' ')
	switch {
	case c.lua:
		line = append(line, "lua"...)
	case c.unixPath != "":
		line = append(line, "unix:"...)
		line = append(line, c.unixPath...)
	default:
		line = append(line, c.remote.String()...)
	}
	line = append(line, ']')
	for _, a := range args {
		line = append(line, ' ')
		line = appendRepr(line, a)
	}
	line = append(line, '\r', '\n')
	m := &s.monitors
	m.mu.Lock()
	for _, mc := range m.conns {
		if mc == c && !c.tx.inSection {
			// A monitor's own command: its reply goes first, as in Redis.
			c.w.Flush()
		}
		mc.push(func(w *resp.Writer) { w.Raw(line) })
	}
	m.mu.Unlock()
}

// appendRepr appends b quoted as Redis's sdscatrepr does: backslash
// escapes for \ " \n \r \t \a \b, and \xHH for other unprintable bytes.
func appendRepr(dst, b []byte) []byte {
	const hex = "0123456789abcdef"
	dst = append(dst, '"')
	for _, ch := range b {
		switch ch {
		case '\\', '"':
			dst = append(dst, '\\', ch)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\a':
			dst = append(dst, '\\', 'a')
		case '\b':
			dst = append(dst, '\\', 'b')
		default:
			if ch >= ' ' && ch <= '~' {
				dst = append(dst, ch)
			} else {
				dst = append(dst, '\\', 'x', hex[ch>>4], hex[ch&15])
			}
		}
	}
	return append(dst, '"')
}
