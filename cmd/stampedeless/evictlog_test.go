package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/testwait"
)

// TestLogEvictions: keys evicted at a small bound are logged in one
// aggregate line per interval, counting them; an interval without any
// logs nothing.
func TestLogEvictions(t *testing.T) {
	store, err := engine.New(engine.Options{MaxMemory: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var logs logBuffer
	log := slog.New(slog.NewJSONHandler(&logs, nil))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); logEvictions(ctx, log, store, 10*time.Millisecond) }()
	defer func() { cancel(); <-done }()
	value := make([]byte, 1024)
	for i := range 1000 {
		store.Set([]byte(fmt.Sprint("k", i)), value, engine.SetOptions{})
	}
	if store.Stats().Evicted == 0 {
		t.Fatal("1,000 keys of 1 KiB at a 64 KiB bound evicted nothing")
	}
	testwait.For(t, "the evictions' log line", func() bool { return strings.Contains(logs.String(), "keys evicted") })
	lines := jsonLines(t, &logs)
	l := lines[0]
	if l["evicted"].(float64) == 0 || l["max_memory"] != 65536.0 || l["policy"] != "allkeys-lfu" {
		t.Errorf("the line: %v; want the evicted count, the bound and the policy", l)
	}
}
