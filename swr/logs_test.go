package swr_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/stampedeless/stampedeless/internal/fakeclock"
	"github.com/stampedeless/stampedeless/internal/lograte"
	"github.com/stampedeless/stampedeless/internal/logtest"
	"github.com/stampedeless/stampedeless/swr"
)

// TestOriginFailureLogsRateLimited: 1,000 fills failing on one loader's
// origin are one log line, with the status and the loader, not the key;
// when the interval ends a second line counts the 999 failures held back,
// though no failure follows (a storm's end is logged); the first success
// after a cooldown logs that the origin answers again.
func TestOriginFailureLogsRateLimited(t *testing.T) {
	clock := fakeclock.New()
	origin := newTestOrigin(t)
	origin.status.Store(http.StatusInternalServerError)
	var logs logtest.Buffer
	f := newTestFiller(t, origin.URL, swr.Options{Now: clock.Now, AfterFunc: clock.AfterFunc, Logger: logs.JSON(slog.LevelInfo), SlowFill: -1})
	get := func(key string) error {
		_, err := f.Get(context.Background(), swr.Request{Key: key, TTL: time.Minute, Timeout: -1})
		return err
	}
	for i := range 1000 {
		if err := get(fmt.Sprint("k:", i)); err == nil {
			t.Fatalf("GETFILL k:%d of a failing origin succeeded", i)
		}
	}
	lines := logs.With(t, "origin fill failed")
	if len(lines) != 1 {
		t.Fatalf("1,000 failing fills logged %d lines, want 1: %v", len(lines), lines)
	}
	if l := lines[0]; l["level"] != "WARN" || l["loader"] != "k:" || l["err"] != "status 500" || l["failures"] != 1.0 || l["key"] != nil {
		t.Errorf("the failure line: %v; want level WARN, loader k:, err status 500, failures 1 and no key", l)
	}
	clock.Advance(lograte.DefaultEvery - 1)
	if lines := logs.With(t, "origin fill failed"); len(lines) != 1 {
		t.Fatalf("before the interval ended, failure lines %v; want the first only", lines)
	}
	clock.Advance(1)
	lines = logs.With(t, "origin fill failed")
	if len(lines) != 2 || lines[1]["failures"] != 999.0 || lines[1]["err"] != "status 500" {
		t.Fatalf("at the interval's end, failure lines %v; want a second one counting the 999 held back", lines)
	}
	if err := get("k:last"); err == nil {
		t.Fatal("GETFILL of a failing origin succeeded")
	}
	clock.Advance(lograte.DefaultEvery)
	lines = logs.With(t, "origin fill failed")
	if len(lines) != 3 || lines[2]["failures"] != 1.0 {
		t.Fatalf("an interval after a lone failure, failure lines %v; want a third one counting 1", lines)
	}

	origin.status.Store(http.StatusOK)
	if err := get("k:0"); err != nil {
		t.Fatalf("GETFILL after the cooldown ended and the origin recovered: %v", err)
	}
	rec := logs.With(t, "origin answers again")
	if len(rec) != 1 || rec[0]["loader"] != "k:" || rec[0]["failures"] != 1.0 {
		t.Fatalf("recovery lines %v; want one for loader k: after 1 failure", rec)
	}
	if err := get("k:1"); err != nil {
		t.Fatal(err)
	}
	if rec := logs.With(t, "origin answers again"); len(rec) != 1 {
		t.Fatalf("a second recovery within the interval logged again: %v", rec)
	}
}

// TestFillLogsKeyAtDebug: the full key is logged only at debug level.
func TestFillLogsKeyAtDebug(t *testing.T) {
	origin := newTestOrigin(t)
	origin.status.Store(http.StatusServiceUnavailable)
	var logs logtest.Buffer
	f := newTestFiller(t, origin.URL, swr.Options{Logger: logs.JSON(slog.LevelDebug)})
	f.Get(context.Background(), swr.Request{Key: "k:secret-42", TTL: time.Minute, Timeout: -1})
	lines := logs.With(t, "origin fill failed")
	if len(lines) != 1 || lines[0]["key"] != "k:secret-42" || lines[0]["err"] != "status 503" {
		t.Fatalf("failure lines at debug %v; want one with the key and status 503", lines)
	}
}

// TestSlowFillLogged: an origin call longer than SlowFill is logged with
// how long it took; a fast one is not.
func TestSlowFillLogged(t *testing.T) {
	origin := newTestOrigin(t)
	var logs logtest.Buffer
	f := newTestFiller(t, origin.URL, swr.Options{Logger: logs.JSON(slog.LevelInfo), SlowFill: time.Hour})
	if _, err := f.Get(context.Background(), swr.Request{Key: "k:fast", TTL: time.Minute, Timeout: -1}); err != nil {
		t.Fatal(err)
	}
	if lines := logs.With(t, "slow fill"); len(lines) != 0 {
		t.Fatalf("a fill under SlowFill logged %v", lines)
	}
	f = newTestFiller(t, origin.URL, swr.Options{Logger: logs.JSON(slog.LevelInfo), SlowFill: time.Nanosecond})
	if _, err := f.Get(context.Background(), swr.Request{Key: "k:slow", TTL: time.Minute, Timeout: -1}); err != nil {
		t.Fatal(err)
	}
	lines := logs.With(t, "slow fill")
	if len(lines) != 1 || lines[0]["loader"] != "k:" || lines[0]["took"] == nil || lines[0]["key"] != nil {
		t.Fatalf("slow fill lines %v; want one for loader k: with took and no key", lines)
	}
}
