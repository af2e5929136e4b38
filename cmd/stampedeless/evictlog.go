package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/stampedeless/stampedeless/engine"
)

// evictLogEvery is how often the keys evicted and refused at admission
// are logged, in aggregate: one line per interval in which there were any.
const evictLogEvery = time.Minute

// logEvictions logs, every interval until ctx ends, how many keys the
// store evicted to stay under --max-memory and how many new keys its
// admission policy refused since the last line, when either grew: a cache
// that evicts steadily is too small for its working set.
func logEvictions(ctx context.Context, log *slog.Logger, store *engine.Store, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	last := store.Stats()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st := store.Stats()
		evicted, rejected := st.Evicted-last.Evicted, st.Rejected-last.Rejected
		if evicted > 0 || rejected > 0 {
			log.Info("keys evicted to stay under --max-memory", "evicted", evicted, "rejected_at_admission", rejected,
				"interval", every, "max_memory", st.MaxCost, "used", st.Cost)
		}
		last = st
	}
}
