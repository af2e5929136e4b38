package server

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/resp"
	"github.com/stampedeless/stampedeless/server/internal/tracking"
)

// Client-side caching (CLIENT TRACKING): the table, the BCAST prefixes and
// each connection's state are package tracking's; here are its wiring to
// the connections (trackClient), to the commands (beforeCommand), and
// CLIENT TRACKING and its kin.

// DefaultTrackingTableMaxKeys is Redis's tracking-table-max-keys default.
const DefaultTrackingTableMaxKeys = tracking.DefaultMaxKeys

// trackClient is a connection as the tracking table sees it.
type trackClient Conn

func (c *Conn) tracker() *trackClient { return (*trackClient)(c) }

func (tc *trackClient) ID() int64                          { return tc.id }
func (tc *trackClient) Tracker() *tracking.Tracker         { return &tc.track }
func (tc *trackClient) Gone() bool                         { return tc.gone.Load() }
func (tc *trackClient) Protocol() int                      { return tc.w.Protocol() }
func (tc *trackClient) Subscribed() bool                   { return tc.subs.Total() != 0 }
func (tc *trackClient) Push(fn func(*resp.Writer)) bool    { return (*Conn)(tc).push(fn) }
func (tc *trackClient) PushOut(fn func(*resp.Writer)) bool { return (*Conn)(tc).pushOut(fn) }

// initTracking readies the table, counting its invalidations in the
// server's metrics.
func (s *Server) initTracking() {
	var sent [tracking.Reasons]prometheus.Counter
	for i, name := range tracking.ReasonNames {
		sent[i] = s.metrics.TrackingInvalidations.WithLabelValues(name)
	}
	s.tracking.Init(s.consumeChanges, func(reason int) { sent[reason].Inc() })
}

// tracksReads reports whether cmd's keys are remembered for a client that
// tracks them: Redis's readonly commands (not pub/sub's), and GETFILL and
// FILL.LEASE, which write only to read through and answer the key's value.
func (cmd *command) tracksReads() bool {
	return cmd.Flags&commands.Readonly != 0 && cmd.Flags&commands.PubSub == 0 || cmd.Flags&commands.TrackRead != 0
}

// beforeCommand is called before cmd runs on c, holding the store's atomic
// section, when tracking concerns c (tracking.Table.Concerns). It puts
// cmd's keys in flight for c, remembers those it reads, and with NOLOOP
// clients registers a write's keys as written by c. The returned func is
// called once the handler has returned.
func (s *Server) beforeCommand(c *Conn, cmd *command, args [][]byte) (after func()) {
	return s.tracking.Before(c.tracker(), cmd.keys(args), nil, cmd.tracksReads(), cmd.Flags&commands.Write != 0, false)
}

// beforeScriptCall is beforeCommand for a command a script of c's runs
// (cmd with args; declared, the script's KEYS): the script's reads are
// c's, as are its writes for NOLOOP. A read remembers the keys it reads,
// as Redis 7.2 does, and the first read of the script the declared keys
// too, as Redis 7.0 does (which tracks only those, once the script has
// run a read command): a client of either is told of every key it may
// have cached.
func (s *Server) beforeScriptCall(c *Conn, cmd *command, args, declared [][]byte) (after func()) {
	return s.tracking.Before(c.tracker(), cmd.keys(args), declared, cmd.tracksReads(), cmd.Flags&commands.Write != 0, true)
}

// registerTrackingMetrics exports the tracking table's size.
func (s *Server) registerTrackingMetrics() {
	tr := &s.tracking
	gauge := func(name, help string, field func(clients, keys, items, prefixes int) int) {
		s.metrics.Gauge(name, help, func() float64 { return float64(field(tr.Stats())) })
	}
	gauge("tracking_clients", "Connections with CLIENT TRACKING on (INFO tracking_clients).",
		func(clients, _, _, _ int) int { return clients })
	gauge("tracking_keys", "Keys in the tracking table: read by a client that may cache them (INFO tracking_total_keys).",
		func(_, keys, _, _ int) int { return keys })
	gauge("tracking_items", "Client ids in the tracking table, over all keys (INFO tracking_total_items).",
		func(_, _, items, _ int) int { return items })
	gauge("tracking_prefixes", "BCAST prefixes tracked (INFO tracking_total_prefixes).",
		func(_, _, _, prefixes int) int { return prefixes })
}

// cmdClientTracking implements CLIENT TRACKING ON|OFF [REDIRECT id]
// [PREFIX prefix ...] [BCAST] [OPTIN] [OPTOUT] [NOLOOP] with Redis 7's
// checks and errors, in its order: the options first (OFF checks them
// too), then ON's combinations. Tracking puts the connection in push mode.
func cmdClientTracking(c *Conn, args [][]byte) {
	var o tracking.Options
	var redir int64
	for j := 3; j < len(args); j++ {
		more := j+1 < len(args)
		switch a := args[j]; {
		case resp.EqualFold(a, "redirect") && more:
			j++
			if redir != 0 {
				c.w.Error("ERR A client can only redirect to a single other client")
				return
			}
			id, ok := resp.ParseInt(args[j])
			if !ok {
				c.w.Error(commands.ErrNotInteger)
				return
			}
			redir = id
			r := c.srv.clientByID(id)
			if r == nil {
				c.w.Error("ERR The client ID you want redirect to does not exist")
				return
			}
			o.RedirTo = r.tracker()
		case resp.EqualFold(a, "bcast"):
			o.BCAST = true
		case resp.EqualFold(a, "optin"):
			o.OptIn = true
		case resp.EqualFold(a, "optout"):
			o.OptOut = true
		case resp.EqualFold(a, "noloop"):
			o.NoLoop = true
		case resp.EqualFold(a, "prefix") && more:
			j++
			o.Prefixes = append(o.Prefixes, args[j])
		default:
			c.w.Error(commands.ErrSyntax)
			return
		}
	}
	switch {
	case resp.EqualFold(args[2], "on"):
		if errText := c.track.CheckOn(o); errText != "" {
			c.w.Error(errText)
			return
		}
		c.startPushing()
		c.srv.tracking.Enable(c.tracker(), o)
		c.w.OK()
	case resp.EqualFold(args[2], "off"):
		c.trackingOff()
		c.w.OK()
	default:
		c.w.Error(commands.ErrSyntax)
	}
}

// trackingOff disables tracking. What c held back is queued first, after
// the replies before it, as Redis would have sent it already; push mode
// ends unless c is a subscriber.
func (c *Conn) trackingOff() {
	if !c.track.Tracked() {
		return
	}
	c.w.Flush()
	c.srv.tracking.Disable(c.tracker())
	if c.subs.Total() == 0 {
		c.stopPushing()
	}
}

// clientByID is the open connection with id, or nil.
func (s *Server) clientByID(id int64) *Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if c.id == id {
			return c
		}
	}
	return nil
}

// cmdClientCaching implements CLIENT CACHING YES|NO: in OPTIN mode YES
// tracks the next command's keys, in OPTOUT mode NO does not.
func cmdClientCaching(c *Conn, args [][]byte) {
	ti := c.track.Info()
	switch {
	case !ti.On:
		c.w.Error("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled")
	case resp.EqualFold(args[2], "yes") && !ti.OptIn:
		c.w.Error("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.")
	case resp.EqualFold(args[2], "no") && !ti.OptOut:
		c.w.Error("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")
	case resp.EqualFold(args[2], "yes"), resp.EqualFold(args[2], "no"):
		c.track.Caching = true
		c.w.OK()
	default:
		c.w.Error(commands.ErrSyntax)
	}
}

// cmdClientGetRedir implements CLIENT GETREDIR: the redirect target's id,
// 0 for none, -1 when tracking is off.
func cmdClientGetRedir(c *Conn, _ [][]byte) {
	ti := c.track.Info()
	if !ti.On {
		c.w.Int(-1)
		return
	}
	c.w.Int(ti.Redirect)
}

// cmdClientTrackingInfo implements CLIENT TRACKINGINFO: a map of flags (a
// set), redirect and prefixes, as Redis 7.
func cmdClientTrackingInfo(c *Conn, _ [][]byte) {
	ti := c.track.Info()
	flags := []string{"off"}
	redirect := int64(-1)
	if ti.On {
		flags[0], redirect = "on", ti.Redirect
		for _, f := range []struct {
			set  bool
			name string
		}{
			{ti.BCAST, "bcast"}, {ti.OptIn, "optin"}, {ti.OptIn && c.track.Caching, "caching-yes"},
			{ti.OptOut, "optout"}, {ti.OptOut && c.track.Caching, "caching-no"},
			{ti.NoLoop, "noloop"}, {ti.Broken, "broken_redirect"},
		} {
			if f.set {
				flags = append(flags, f.name)
			}
		}
	}
	c.w.Map(3)
	c.w.BulkString("flags")
	c.w.Set(len(flags))
	for _, f := range flags {
		c.w.BulkString(f)
	}
	c.w.BulkString("redirect")
	c.w.Int(redirect)
	c.w.BulkString("prefixes")
	c.w.Array(len(ti.Prefixes))
	for _, p := range ti.Prefixes {
		c.w.BulkString(p)
	}
}
