package server

// Scripting behaviour particular to stampedeless: its own commands inside
// scripts, the bounded script cache and its reporting, and a command that
// waits for a running script.

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/internal/testwait"
	"github.com/stampedeless/stampedeless/metrics"
)

// TestScriptGetFillDoesNotWait: GETFILL inside a script answers -TIMEOUT
// at once on a cold key, as inside EXEC, and the load goes on; FILL.LEASE,
// which may wait for another caller, is refused from scripts.
func TestScriptGetFillDoesNotWait(t *testing.T) {
	o := gatedOrigin(t)
	ts, c := fillServer(t, o.origin)
	ctx := context.Background()
	getfill := `return redis.pcall('GETFILL', KEYS[1], 60, 0)`
	err := c.Eval(ctx, getfill, []string{"k:a"}).Err()
	if err == nil || !strings.HasPrefix(err.Error(), "TIMEOUT gave up waiting for the load after 0s") {
		t.Fatalf("GETFILL of a cold key in a script: %v", err)
	}
	<-o.arrived // the load started
	o.open()
	testwait.For(t, "the load to be stored", func() bool {
		v, _ := ts.store.Get([]byte("k:a"))
		return string(v) == "k:a@v0"
	})
	if v, err := c.Eval(ctx, getfill, []string{"k:a"}).Text(); err != nil || v != "k:a@v0" {
		t.Fatalf("GETFILL of a filled key in a script: %q %v", v, err)
	}
	err = c.Eval(ctx, `return redis.call('FILL.LEASE', KEYS[1], 60, 0)`, []string{"k:b"}).Err()
	if err == nil || !strings.HasPrefix(err.Error(), "ERR This Redis command is not allowed from script") {
		t.Fatalf("FILL.LEASE in a script: %v", err)
	}
}

// TestScriptCacheBoundAndInfo: past --max-scripts the least recently used
// script is evicted and EVALSHA of it answers NOSCRIPT; INFO and the
// metrics report the cache, the scripts run and a kill.
func TestScriptCacheBoundAndInfo(t *testing.T) {
	reg := metrics.New()
	ts := startServer(t, Options{MaxScripts: 2, Metrics: reg})
	c := ts.client(t)
	ctx := context.Background()
	var shas []string
	for _, body := range []string{"return 1", "return 2", "return 3"} {
		sha, err := c.ScriptLoad(ctx, body).Result()
		if err != nil {
			t.Fatal(err)
		}
		shas = append(shas, sha)
	}
	if err := c.EvalSha(ctx, shas[0], nil).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOSCRIPT") {
		t.Fatalf("EVALSHA of the evicted script: %v, want NOSCRIPT", err)
	}
	if n, err := c.EvalSha(ctx, shas[2], nil).Int(); err != nil || n != 3 {
		t.Fatalf("EVALSHA of a cached script: %d %v", n, err)
	}
	info := c.Info(ctx, "memory", "stats").Val()
	for _, want := range []string{"number_of_cached_scripts:2\r\n", "evicted_scripts:1\r\n", "used_memory_scripts_eval:"} {
		if !strings.Contains(info, want) {
			t.Errorf("INFO lacks %q:\n%s", want, info)
		}
	}
	rec := httptest.NewRecorder()
	reg.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	for _, want := range []string{
		"stampedeless_scripts_cached 2\n", "stampedeless_scripts_evicted_total 1\n",
	} {
		if !strings.Contains(rec.Body.String(), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	if n := metrics.Value(reg.Scripts.WithLabelValues("run")); n != 2 {
		t.Errorf("scripts run: %v, want 2: both EVALSHAs reached the engine", n)
	}
	if v := c.ConfigGet(ctx, "lua-time-limit").Val(); v["lua-time-limit"] != "5000" {
		t.Errorf("CONFIG GET lua-time-limit: %v", v)
	}
	if err := c.ConfigSet(ctx, "busy-reply-threshold", "250").Err(); err != nil {
		t.Fatal(err)
	}
	if v := c.ConfigGet(ctx, "lua-time-limit").Val(); v["lua-time-limit"] != "250" {
		t.Errorf("CONFIG GET lua-time-limit after setting busy-reply-threshold: %v", v)
	}
}

// TestScriptIsAtomic: a command sent while a script runs waits at the
// section's gate and sees only what the script left, never a state in
// between, though it waits parked off its event loop. The script goes on once a client subscribes to "go", which needs no
// section.
func TestScriptIsAtomic(t *testing.T) {
	ts := startServer(t, Options{})
	c := ts.client(t)
	ctx := context.Background()
	started := c.Subscribe(ctx, "started")
	defer started.Close()
	if _, err := started.Receive(ctx); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- c.Eval(ctx, `
redis.call('SET', KEYS[1], 'half')
redis.call('PUBLISH', 'started', 'yes')
while redis.call('PUBSUB', 'NUMSUB', 'go')[2] == 0 do end
return redis.call('SET', KEYS[1], 'whole')`, []string{"k"}).Err()
	}()
	if _, err := started.ReceiveMessage(ctx); err != nil {
		t.Fatal(err)
	}
	reader := redis.NewClient(&redis.Options{Addr: ts.addr})
	defer reader.Close()
	got := make(chan string, 1)
	go func() { got <- reader.Get(ctx, "k").Val() }()
	testwait.For(t, "the reader to wait at the gate", func() bool {
		ts.gate.mu.Lock()
		defer ts.gate.mu.Unlock()
		return ts.gate.sharedWaiting > 0
	})
	goSub := c.Subscribe(ctx, "go")
	defer goSub.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if v := <-got; v != "whole" {
		t.Fatalf("GET sent while the script ran: %q, want the script's final value", v)
	}
}
