package readthrough

import (
	"fmt"
	"strconv"
	"strings"

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
