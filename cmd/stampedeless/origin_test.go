package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/internal/redistest"
	"github.com/stampedeless/stampedeless/internal/testwait"
	"github.com/stampedeless/stampedeless/origin"
)

// startOrigin runs `stampedeless origin` on a free port and waits until it
// answers /healthz; it returns the origin's base URL.
func startOrigin(t *testing.T, args ...string) string {
	t.Helper()
	base, _ := startOriginLogged(t, nil, args...)
	return base
}

// startOriginLogged is startOrigin, also copying the origin's log to logs
// if it is not nil, and returning its process.
func startOriginLogged(t *testing.T, logs io.Writer, args ...string) (string, *exec.Cmd) {
	t.Helper()
	addr := redistest.FreeAddr(t)
	cmd := exec.Command(binary, append([]string{"origin", "--addr", addr}, args...)...)
	cmd.Stderr = logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	base := "http://" + addr
	var err error
	if !testwait.Until(func() bool {
		var resp *http.Response
		if resp, err = http.Get(base + "/healthz"); err != nil {
			return false
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			err = fmt.Errorf("status %s", resp.Status)
			return false
		}
		return true
	}) {
		t.Fatalf("origin on %s did not answer /healthz: %v", addr, err)
	}
	return base, cmd
}

func originStats(t *testing.T, base string) origin.Stats {
	t.Helper()
	resp, err := http.Get(base + "/stats")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var s origin.Stats
	if err := json.NewDecoder(resp.Body).Decode(&s); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestOriginStampede is the demo's claim end to end with both binaries: K
// concurrent GETFILLs of a cold key make one origin call, while K
// cache-aside clients (GET, origin on a miss, SET) of another cold key all
// reach the origin.
func TestOriginStampede(t *testing.T) {
	base := startOrigin(t, "--latency", "300ms")
	addr := redistest.FreeAddr(t)
	startBinary(t, nil, "--addr", addr, "--metrics-addr", "", "--loader", "demo:="+base+"/{key}")
	const k = 50
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: k})
	defer c.Close()
	ctx := context.Background()

	values := make([]string, k)
	errs := make([]error, k)
	var wg sync.WaitGroup
	for i := range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			values[i], errs[i] = c.Do(ctx, "GETFILL", "demo:hot", 30, 30).Text()
		}()
	}
	wg.Wait()
	for i := range k {
		if errs[i] != nil || values[i] != values[0] {
			t.Fatalf("client %d: %q, %v; client 0 got %q", i, values[i], errs[i], values[0])
		}
	}
	if s := originStats(t, base); s.Calls != 1 || s.MaxInFlight != 1 {
		t.Fatalf("origin after %d concurrent GETFILLs: %+v, want 1 call", k, s)
	}

	resp, err := http.Post(base+"/reset", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	// Cache-aside: every client that misses calls the origin. The clients
	// all read before any of them writes, as they do when a hot key
	// expires under load, so all of them miss.
	var read sync.WaitGroup
	read.Add(k)
	for range k {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := c.Get(ctx, "plain:hot").Result()
			read.Done()
			read.Wait()
			if err != redis.Nil {
				t.Errorf("GET of a cold key: %v, want nil", err)
				return
			}
			resp, err := http.Get(base + "/plain:hot")
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			c.Set(ctx, "plain:hot", fmt.Sprint(resp.StatusCode), 30*time.Second)
		}()
	}
	wg.Wait()
	if s := originStats(t, base); s.Calls != k {
		t.Fatalf("cache-aside made %d origin calls for %d clients; want %d", s.Calls, k, k)
	}
}

// TestOriginTagsAndBatches: the demo origin's --surrogate-key tags reach
// FILL.INFO and PURGE.TAG, and a batch loader on it fills many keys in one
// request, each value as a GET of the key would make it.
func TestOriginTagsAndBatches(t *testing.T) {
	base := startOrigin(t, "--latency", "0", "--surrogate-key", "demo", "--surrogate-key", "item:{key}")
	addr := redistest.FreeAddr(t)
	startBinary(t, nil, "--addr", addr, "--metrics-addr", "", "--loader", "demo:="+base+"/{key}")
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	defer c.Close()
	ctx := context.Background()
	for _, k := range []string{"demo:1", "demo:2"} {
		if err := c.Do(ctx, "GETFILL", k, 60, 30).Err(); err != nil {
			t.Fatalf("GETFILL %s: %v", k, err)
		}
	}
	info := fmt.Sprint(c.Do(ctx, "FILL.INFO", "demo:1").Val())
	if !strings.Contains(info, "tags [demo item:demo:1]") {
		t.Errorf("FILL.INFO demo:1 = %s, want the tags demo and item:demo:1", info)
	}
	if n, err := c.Do(ctx, "PURGE.TAG", "demo").Int(); err != nil || n != 2 {
		t.Errorf("PURGE.TAG demo = %d, %v; want 2 keys", n, err)
	}
	if n := c.Exists(ctx, "demo:1", "demo:2").Val(); n != 0 {
		t.Errorf("%d keys left after PURGE.TAG", n)
	}

	if err := c.Do(ctx, "LOADER.REGISTER", "batch:", base+"/batch", "BATCH", 10).Err(); err != nil {
		t.Fatal(err)
	}
	before := originStats(t, base)
	vals, err := c.Do(ctx, "MGETFILL", 60, 30, "batch:1", "batch:2", "batch:3").StringSlice()
	if err != nil || len(vals) != 3 {
		t.Fatalf("MGETFILL through the batch loader = %q, %v", vals, err)
	}
	for i, v := range vals {
		if want := fmt.Sprintf("value of batch:%d, version 1, made at ", i+1); !strings.HasPrefix(v, want) {
			t.Errorf("value %d = %q, want %q...", i, v, want)
		}
	}
	after := originStats(t, base)
	if got := after.Batches - before.Batches; got != 1 {
		t.Errorf("batch requests = %d, want 1 for the 3 keys", got)
	}
	if got := after.OK - before.OK; got != 3 {
		t.Errorf("keys answered = %d, want 3", got)
	}
}

// TestOriginQuietUnlessAsked: the demo origin logs its calls only with
// --log-calls, since it shares a terminal with the README's demo.
func TestOriginQuietUnlessAsked(t *testing.T) {
	for _, tc := range []struct {
		args  []string
		lines int
	}{{nil, 0}, {[]string{"--log-calls"}, 1}} {
		var logs logBuffer
		base, cmd := startOriginLogged(t, &logs, tc.args...)
		resp, err := http.Get(base + "/demo:a")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		// The line follows the answer: stop the origin, and Wait copies
		// its log to the end.
		cmd.Process.Signal(syscall.SIGTERM)
		cmd.Wait()
		if got := strings.Count(logs.String(), "origin call"); got != tc.lines {
			t.Errorf("origin %v: %d lines of calls after one call, want %d; log:\n%s", tc.args, got, tc.lines, logs.String())
		}
	}
}
