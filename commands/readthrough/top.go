package readthrough

import (
	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/radar"
	"github.com/stampedeless/stampedeless/resp"
	"github.com/stampedeless/stampedeless/swr"
)

// Defaults of FILL.TOP and FILL.RADAR.
const (
	defaultTopCount = 10
	maxTopCount     = 1000
	// radarHistory is the seconds of reads and origin calls FILL.RADAR
	// returns.
	radarHistory = 300
)

// topArgs are FILL.TOP's options.
type topArgs struct {
	by     radar.Measure
	count  int
	window radar.Window
}

// parseTopArgs reads [BY m] [COUNT n] [WINDOW w] (FILL.RADAR: WINDOW and
// COUNT only), replying the error itself.
func parseTopArgs(c *commands.Ctx, args [][]byte, by bool) (topArgs, bool) {
	a := topArgs{by: radar.Waiters, count: defaultTopCount, window: radar.Minute}
	for i := 0; i < len(args); i += 2 {
		if i+1 >= len(args) {
			c.W.Error(commands.ErrSyntax)
			return a, false
		}
		opt, val := args[i], args[i+1]
		switch {
		case by && resp.EqualFold(opt, "by"):
			m, ok := radar.ParseMeasure(string(val))
			if !ok {
				c.W.Error("ERR BY must be calls, waiters, stale, failures or latency")
				return a, false
			}
			a.by = m
		case resp.EqualFold(opt, "count"):
			n, ok := commands.CountArg(c.W, val, 1)
			if !ok {
				return a, false
			}
			a.count = int(min(n, maxTopCount))
		case resp.EqualFold(opt, "window"):
			w, ok := radar.ParseWindow(string(val))
			if !ok {
				c.W.Error("ERR WINDOW must be 1m or 10m")
				return a, false
			}
			a.window = w
		default:
			c.W.Error(commands.ErrSyntax)
			return a, false
		}
	}
	return a, true
}

// visibleKeys is the filter of the keys the client's user may see in the
// radar: the keys it may read, and a key the radar cut (radar.MaxKey) only
// if it may read every key, since the rest of the key is unknown.
func visibleKeys(c *commands.Ctx) func(key string, truncated bool) bool {
	if c.Client.ReadsAllKeys(nil) {
		return nil
	}
	readable := c.Client.ReadableKeys()
	return func(key string, truncated bool) bool { return !truncated && (readable == nil || readable(key)) }
}

// cmdFillTop implements FILL.TOP [BY calls|waiters|stale|failures|latency]
// [COUNT n] [WINDOW 1m|10m]: the keys with the most of a measure over the
// window, among those the caller may read. A map (flat in RESP2): by,
// window, replica, total (the window's weight of the measure), bound (the
// most any count may be above the truth: total over the radar's capacity),
// and keys, each a map of key, loader, count and error.
func (f *family) cmdFillTop(c *commands.Ctx, args [][]byte) {
	a, ok := parseTopArgs(c, args[1:], true)
	if !ok {
		return
	}
	entries, total := f.opts.Radar.Top(a.by, a.window, a.count, visibleKeys(c))
	c.W.Map(6)
	c.W.BulkString("by")
	c.W.BulkString(a.by.String())
	c.W.BulkString("window")
	c.W.BulkString(a.window.String())
	c.W.BulkString("replica")
	c.W.BulkString(f.opts.Replica)
	c.W.BulkString("total")
	c.W.Int(int64(total))
	c.W.BulkString("bound")
	c.W.Int(int64(total / uint64(max(f.opts.Radar.Capacity(), 1))))
	c.W.BulkString("keys")
	c.W.Array(len(entries))
	for _, e := range entries {
		c.W.Map(4)
		c.W.BulkString("key")
		c.W.BulkString(e.Key)
		c.W.BulkString("loader")
		c.W.BulkString(f.loaderOf(e.Key))
		c.W.BulkString("count")
		c.W.Int(int64(e.Count))
		c.W.BulkString("error")
		c.W.Int(int64(e.Err))
	}
}

// loaderOf is the prefix of key's loader, or swr.AppLoader if none covers
// it: only FILL.LEASE fills such a key, and only its calls, waiters and
// stale answers are counted.
func (f *family) loaderOf(key string) string {
	if ld, ok := f.opts.Loaders.Lookup(key); ok {
		return ld.Prefix()
	}
	return swr.AppLoader
}

// cmdFillRadar implements FILL.RADAR [WINDOW 1m|10m]: the radar's view of
// the loaders and of reads against origin calls, what `stampedeless top`
// and the status page show beside FILL.TOP's keys. A map (flat in RESP2):
// replica, window, capacity, loaders (each a map of loader, in_flight,
// calls, failures, cooldowns, p50_us, p99_us over the window) and history
// (the last seconds, oldest first, each [unix seconds, reads, calls]).
// It names no key.
func (f *family) cmdFillRadar(c *commands.Ctx, args [][]byte) {
	a, ok := parseTopArgs(c, args[1:], false)
	if !ok {
		return
	}
	loaders := f.loaderHealth(a.window)
	hist := f.opts.Radar.History(radarHistory)
	c.W.Map(5)
	c.W.BulkString("replica")
	c.W.BulkString(f.opts.Replica)
	c.W.BulkString("window")
	c.W.BulkString(a.window.String())
	c.W.BulkString("capacity")
	c.W.Int(int64(f.opts.Radar.Capacity()))
	c.W.BulkString("loaders")
	c.W.Array(len(loaders))
	for _, l := range loaders {
		c.W.Map(7)
		c.W.BulkString("loader")
		c.W.BulkString(l.Loader)
		c.W.BulkString("in_flight")
		c.W.Int(int64(l.InFlight))
		c.W.BulkString("calls")
		c.W.Int(int64(l.Calls))
		c.W.BulkString("failures")
		c.W.Int(int64(l.Failures))
		c.W.BulkString("cooldowns")
		c.W.Int(int64(l.Cooldowns))
		c.W.BulkString("p50_us")
		c.W.Int(l.P50.Microseconds())
		c.W.BulkString("p99_us")
		c.W.Int(l.P99.Microseconds())
	}
	c.W.BulkString("history")
	c.W.Array(len(hist))
	for _, s := range hist {
		c.W.Array(3)
		c.W.Int(s.At)
		c.W.Int(int64(s.Reads))
		c.W.Int(int64(s.Calls))
	}
}

// loaderHealth is the radar's loader health over w, with every
// registered loader's calls in flight.
func (f *family) loaderHealth(w radar.Window) []radar.LoaderHealth {
	infos := f.opts.Loaders.List()
	inFlight := make(map[string]int64, len(infos))
	for _, in := range infos {
		inFlight[in.Prefix] = in.InFlight
	}
	return f.opts.Radar.Loaders(w, inFlight)
}
