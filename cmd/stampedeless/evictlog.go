package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/stampedeless/stampedeless/engine"
)

// evictLogEvery is how often the keys evicted are logged, in aggregate: one
// line per interval in which there were any.
const evictLogEvery = time.Minute

// logEvictions logs, every interval until ctx ends, how many keys the
// store evicted to stay under --max-memory since the last line, when it
// grew: a cache that evicts steadily is too small for its working set.
func logEvictions(ctx context.Context, log *slog.Logger, store *engine.Store, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	var last engine.Stats // the first line counts from the store's start
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		st := store.Stats()
		if evicted := st.Evicted - last.Evicted; evicted > 0 {
			log.Info("keys evicted to stay under --max-memory", "evicted", evicted,
				"interval", every, "max_memory", st.MaxCost, "used", st.Cost, "policy", store.EvictionPolicy().String())
		}
		last = st
	}
}
