package server

import (
	"bytes"
	"time"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/internal/clock"
	"github.com/stampedeless/stampedeless/resp"
)

// The operator's view of the commands that run (SLOWLOG, LATENCY,
// MONITOR) is fed from one place, called once a command has run, as
// Redis's call() feeds it: observed, from dispatch for a client's command,
// from EXEC for each command it runs, and from a script for each command
// it calls. Commands refused before they run (unknown, arity, ACL, queued
// by MULTI) are not observed.

// A command is timed on the server's clock (internal/clock), whose
// reading is at most about clock.Resolution old, which is enough for
// thresholds of a millisecond or more (the slow log's default is 10 ms); a
// lower threshold is served by a reading of its own, which costs tens of
// nanoseconds on a virtual machine: more than a GET's share of dispatch
// can spare (BenchmarkDispatchGetSlowlog).

// callTimer is when a command started, on the clock its observers need.
type callTimer struct {
	at      int64 // Unix µs, the clock's last reading or (precise) a new one
	precise bool
	timed   bool // at was read: the slow log or the latency monitor is on
	on      bool // someone observes commands: the slow log, latency or a monitor
}

// startCall reads the clock for a command that is about to run, if
// anything will observe it, and only as precisely as they need.
func (s *Server) startCall() callTimer {
	t := s.slowlog.SlowerThan()
	if t < 0 && s.latency.Threshold() == 0 {
		return callTimer{on: s.monitors.n.Load() > 0} // no clock: MONITOR reads its own
	}
	if t >= 0 && t < int64(clock.Resolution/time.Microsecond) {
		return callTimer{at: s.clock.Read() / 1e3, precise: true, timed: true, on: true}
	}
	return callTimer{at: s.clock.Nanos() / 1e3, timed: true, on: true}
}

// elapsed is the µs since the timer started.
func (s *Server) elapsed(t callTimer) int64 {
	now := s.clock.Nanos()
	if t.precise {
		now = s.clock.Read()
	}
	return max(now/1e3-t.at, 0) // the wall clock may have stepped back
}

// observed tells the monitors, the slow log and the latency monitor about
// a command c ran, which took since t, and returns the µs it took (0 when
// t timed nothing).
func (s *Server) observed(c *Conn, cmd *command, args [][]byte, t callTimer) (micros int64) {
	if !t.on {
		return 0
	}
	if cmd.Flags&(commands.SkipMonitor|commands.Admin) == 0 {
		// Redis shows administrative commands to no monitor; a script
		// shows itself before its calls (runScript).
		s.feedMonitors(c, cmd, args)
	}
	if !t.timed {
		return 0
	}
	micros = s.elapsed(t)
	event := latencyCommand
	if cmd.Flags&commands.Fast != 0 {
		event = latencyFastCommand
	}
	if ms := micros / 1000; s.latency.Wants(ms) {
		s.latency.Add(event, ms, s.store.Now())
	}
	if cmd.Flags&commands.SkipSlowlog == 0 && s.slowlog.Wants(micros) {
		peer, name := c.peerID(), ""
		if !c.lua {
			c.mu.Lock()
			name = c.name
			c.mu.Unlock()
		}
		s.slowlog.Add(redactedArgs(cmd, args), micros, peer, name, s.store.Now())
	}
	return micros
}

// peerID is the client's address as the slow log and MONITOR show it:
// Redis's "?:0" for a script's calls.
func (c *Conn) peerID() string {
	if c.lua {
		return "?:0"
	}
	return c.remote.String()
}

// redacted is what Redis shows for a secret argument.
var redacted = []byte("(redacted)")

// redactedArgs returns args with the secrets Redis hides from the slow log
// and MONITOR replaced by "(redacted)": AUTH's password (and user name),
// HELLO's AUTH pair, ACL SETUSER's rules, CONFIG SET's requirepass,
// MIGRATE's AUTH and AUTH2 arguments (those its parser reached, as
// Redis redacts them as it reads them).
func redactedArgs(cmd *command, args [][]byte) [][]byte {
	if cmd == nil {
		return args
	}
	var hide []int
	switch cmd.Name {
	case "auth":
		if len(args) <= 3 {
			hide = []int{1, 2}[:len(args)-1]
		}
	case "hello":
		for j := 2; j < len(args); j++ {
			more := len(args) - 1 - j
			switch {
			case resp.EqualFold(args[j], "auth") && more >= 2:
				hide = append(hide, j+1, j+2)
				j += 2
			case resp.EqualFold(args[j], "setname") && more >= 1:
				j++
			default:
				j = len(args)
			}
		}
	case "migrate":
		hide = migrateSecrets(args)
	case "acl|setuser":
		for j := 2; j < len(args); j++ {
			hide = append(hide, j)
		}
	case "config|set":
		for j := 2; j+1 < len(args); j += 2 {
			if bytes.EqualFold(args[j], []byte("requirepass")) {
				hide = append(hide, j+1)
			}
		}
	}
	if len(hide) == 0 {
		return args
	}
	out := append([][]byte(nil), args...)
	for _, j := range hide {
		out[j] = redacted
	}
	return out
}

// resumedCall is a command that finishes in its connection's continuation
// (Server.runContinuation), observed once it has.
type resumedCall struct {
	cmd  *command
	args [][]byte
}
