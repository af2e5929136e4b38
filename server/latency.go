package server

import (
	"slices"
	"strconv"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/internal/redisconfig"
	"github.com/stampedeless/stampedeless/resp"
)

// The events stampedeless records in LATENCY's monitor (internal/latency),
// named as Redis names them: a command past the threshold, "fast-command"
// for one flagged fast.
const (
	latencyCommand     = "command"
	latencyFastCommand = "fast-command"
)

func cmdLatencyLatest(c *Conn, _ [][]byte) {
	latest := c.srv.latency.Latest()
	c.w.Array(len(latest))
	for _, l := range latest {
		c.w.Array(4)
		c.w.BulkString(l.Event)
		c.w.Int(l.Last.Unix)
		c.w.Int(l.Last.MS)
		c.w.Int(l.Max)
	}
}

func cmdLatencyHistory(c *Conn, args [][]byte) {
	kept := c.srv.latency.History(string(args[2]))
	c.w.Array(len(kept))
	for _, s := range kept {
		c.w.Array(2)
		c.w.Int(s.Unix)
		c.w.Int(s.MS)
	}
}

// cmdLatencyReset forgets the events named, case-insensitively, or all,
// and answers how many it forgot.
func cmdLatencyReset(c *Conn, args [][]byte) {
	n := c.srv.latency.Reset(func(name string) bool {
		return len(args) == 2 || slices.ContainsFunc(args[2:], func(a []byte) bool { return resp.EqualFold(a, name) })
	})
	c.w.Int(int64(n))
}

// cmdLatencyDoctor is Redis's report, in short: each event's spikes, and
// the advice that applies to a server without disks or forks.
func cmdLatencyDoctor(c *Conn, _ [][]byte) {
	s := c.srv
	c.w.Verbatim("txt", s.latency.Doctor(s.store.Now().Unix(), s.slowlog.SlowerThan()))
}

func cmdLatencyHelp(c *Conn, _ [][]byte) {
	commands.WriteHelp(c.w, "LATENCY",
		"DOCTOR",
		"    Return a human readable latency analysis report.",
		"HISTORY <event>",
		"    Return time-latency samples for the <event> class.",
		"LATEST",
		"    Return the latest latency samples for all events.",
		"RESET [<event> ...]",
		"    Reset latency data of one or more <event> classes.",
		"    (default: reset all data for all event classes)")
}

func getLatencyThreshold(s *Server) string { return strconv.FormatInt(s.latency.Threshold(), 10) }

func setLatencyThreshold(s *Server, v string) error {
	n, err := redisconfig.Integer(v, 0, 1<<63-1)
	if err == nil {
		s.latency.SetThreshold(n)
	}
	return err
}
