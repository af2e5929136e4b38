package readthrough

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/metrics"
	"github.com/stampedeless/stampedeless/swr"
)

// infoStampede reports each loader's read-through counters, the same ones
// /metrics exports.
func (f *family) infoStampede(field func(name string, value any)) {
	infos := f.opts.Loaders.List()
	m := f.opts.Metrics
	field("loaders", len(infos))
	for i, in := range infos {
		name := in.Prefix
		var line strings.Builder
		fmt.Fprintf(&line, "prefix=%s,timeout_ms=%d,batch=%d,in_flight=%d,fills=%d,failures=%d,batch_requests=%d", name,
			in.Timeout.Milliseconds(), in.Batch, in.InFlight, in.Fills, in.Failures, in.Batches)
		for _, kind := range swr.AnswerKinds {
			fmt.Fprintf(&line, ",answers_%s=%.0f", kind, metrics.Value(m.Answers.WithLabelValues(name, string(kind))))
		}
		fmt.Fprintf(&line, ",coalesced_waiters=%.0f,refreshes_started=%.0f,refreshes_early=%.0f,refreshes_dropped=%.0f,past_grace=%.0f",
			metrics.Value(m.Coalesced.WithLabelValues(name)),
			metrics.Value(m.Refreshes.WithLabelValues(name, string(swr.RefreshStarted))),
			metrics.Value(m.Refreshes.WithLabelValues(name, string(swr.RefreshEarly))),
			metrics.Value(m.Refreshes.WithLabelValues(name, string(swr.RefreshDropped))),
			metrics.Value(m.PastGrace.WithLabelValues(name)))
		field("loader"+strconv.Itoa(i), line.String())
	}
	// The application's own fills (FILL.LEASE), under the loader label
	// "app".
	var line strings.Builder
	for _, kind := range swr.AnswerKinds {
		fmt.Fprintf(&line, "answers_%s=%.0f,", kind, metrics.Value(m.Answers.WithLabelValues(swr.AppLoader, string(kind))))
	}
	for _, r := range swr.LeaseResults {
		fmt.Fprintf(&line, "leases_%s=%.0f,", r, metrics.Value(m.Leases.WithLabelValues(swr.AppLoader, string(r))))
	}
	fmt.Fprintf(&line, "waiters=%.0f,past_grace=%.0f", metrics.Value(m.Coalesced.WithLabelValues(swr.AppLoader)),
		metrics.Value(m.PastGrace.WithLabelValues(swr.AppLoader)))
	field("app_fills", line.String())
	// Origin tags and PURGE.TAG.
	field("tag_entries", int64(metrics.Value(m.TagEntries)))
	field("tag_bytes", int64(metrics.Value(m.TagBytes)))
	field("tag_evictions", int64(metrics.Value(m.TagEvictions)))
	for _, mode := range [...]string{"hard", "soft"} {
		var runs, keys float64
		for _, origin := range [...]string{"local", "fleet"} {
			runs += metrics.Value(m.TagPurges.WithLabelValues(mode, origin))
			keys += metrics.Value(m.TagPurgedKeys.WithLabelValues(mode, origin))
		}
		field("tag_purges_"+mode, int64(runs))
		field("tag_purged_keys_"+mode, int64(keys))
	}
}

// cmdFillInfo implements FILL.INFO key: a map (a flat array in RESP2) of
// the key's state (fresh, stale, missing, loading, cooldown), milliseconds
// to its fresh and stale deadlines (-1: none), its loader, whether a
// load is in flight (1 or 0 in both protocols, like Redis's own
// introspection fields), and the origin's tags of its value.
func (f *family) cmdFillInfo(c *commands.Ctx, args [][]byte) {
	in := f.filler(c).Info(string(args[1]))
	ms := func(d time.Duration) int64 {
		if d < 0 {
			return -1
		}
		return d.Milliseconds()
	}
	c.W.Map(6)
	c.W.BulkString("state")
	c.W.BulkString(in.State)
	c.W.BulkString("fresh_ms")
	c.W.Int(ms(in.FreshIn))
	c.W.BulkString("stale_ms")
	c.W.Int(ms(in.StaleIn))
	c.W.BulkString("loader")
	c.W.BulkString(in.Loader)
	c.W.BulkString("in_flight")
	c.W.Int(commands.BoolInt(in.InFlight))
	c.W.BulkString("tags")
	c.W.Array(len(in.Tags))
	for _, t := range in.Tags {
		c.W.BulkString(t)
	}
}
