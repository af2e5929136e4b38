package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/internal/redistest"
	"github.com/stampedeless/stampedeless/internal/testwait"
)

// With --dir, SIGTERM saves and the next start loads every key with its
// deadline; SHUTDOWN saves too, and SHUTDOWN NOSAVE does not; a
// truncated file stops the start unless --rdb-start-empty-if-corrupt.
func TestRestartKeepsTheData(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	start := func(extra ...string) (*redis.Client, *exec.Cmd) {
		addr := redistest.FreeAddr(t)
		cmd := startBinary(t, []string{"STAMPEDELESS_ADDR=" + addr, "STAMPEDELESS_METRICS_ADDR="},
			append([]string{"--dir", dir}, extra...)...)
		c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
		t.Cleanup(func() { c.Close() })
		return c, cmd
	}
	c, cmd := start()
	p := c.Pipeline()
	for i := range 2000 {
		p.Set(ctx, "k"+strconv.Itoa(i), "v"+strconv.Itoa(i), 0)
	}
	p.Set(ctx, "ttl", "v", time.Hour)
	p.HSet(ctx, "h", "f", "v")
	p.ZAdd(ctx, "z", redis.Z{Score: 1.5, Member: "m"})
	p.SAdd(ctx, "s", "1", "2")
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := c.PExpireTime(ctx, "ttl").Val()
	// SIGTERM: saved at exit.
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitExit(t, cmd, "SIGTERM")
	c, cmd = start()
	if n := c.DBSize(ctx).Val(); n != 2004 {
		t.Fatalf("DBSIZE after a restart = %d, want 2004", n)
	}
	if got := c.PExpireTime(ctx, "ttl").Val(); got != deadline {
		t.Errorf("ttl's deadline %v, was %v", got, deadline)
	}
	if got := c.ZScore(ctx, "z", "m").Val(); got != 1.5 {
		t.Errorf("z's score %v", got)
	}
	// SHUTDOWN NOSAVE loses what came after the last save.
	c.Set(ctx, "after", "v", 0)
	c.Do(ctx, "SHUTDOWN", "NOSAVE")
	waitExit(t, cmd, "SHUTDOWN NOSAVE")
	c, cmd = start()
	if n := c.Exists(ctx, "after").Val(); n != 0 {
		t.Error("a key written before SHUTDOWN NOSAVE was saved")
	}
	c.Set(ctx, "after", "v", 0)
	c.Do(ctx, "SHUTDOWN")
	waitExit(t, cmd, "SHUTDOWN")
	// A truncated file: no start, unless told to start empty.
	path := filepath.Join(dir, "dump.rdb")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(path, b[:len(b)/2], 0o600)
	out, err := exec.Command(binary, "--dir", dir, "--addr", redistest.FreeAddr(t), "--metrics-addr", "").CombinedOutput()
	if err == nil || !strings.Contains(string(out), "truncated") {
		t.Fatalf("started on a truncated snapshot (%v):\n%s", err, out)
	}
	c, _ = start("--rdb-start-empty-if-corrupt")
	if n := c.DBSize(ctx).Val(); n != 0 {
		t.Errorf("DBSIZE %d after starting empty", n)
	}
}

// kill -9 in the middle of a BGSAVE: the next start loads the previous
// snapshot (or the new one, if it was renamed in time), whole, and clears
// the temporary file.
func TestKillDuringBGSave(t *testing.T) {
	dir := t.TempDir()
	ctx := context.Background()
	addr := redistest.FreeAddr(t)
	cmd := startBinary(t, []string{"STAMPEDELESS_ADDR=" + addr, "STAMPEDELESS_METRICS_ADDR="}, "--dir", dir)
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	c.Set(ctx, "first", "v", 0)
	if err := c.Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	p := c.Pipeline()
	value := strings.Repeat("v", 100)
	for i := range 200_000 {
		p.Set(ctx, "k"+strconv.Itoa(i), value, 0)
	}
	if _, err := p.Exec(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.BgSave(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	// Killed at once: the save is likely mid-way; either way the file
	// must load whole.
	cmd.Process.Kill()
	cmd.Wait()
	addr = redistest.FreeAddr(t)
	startBinary(t, []string{"STAMPEDELESS_ADDR=" + addr, "STAMPEDELESS_METRICS_ADDR="}, "--dir", dir)
	c2 := redis.NewClient(&redis.Options{Addr: addr})
	defer c2.Close()
	if n := c2.DBSize(ctx).Val(); n != 1 && n != 200_001 {
		t.Fatalf("DBSIZE %d after a kill during BGSAVE: neither snapshot", n)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "temp-*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
}

// A read-through key saved while stale (within its grace) is stale after
// the restart too: the first GETFILL answers the saved value at once and
// the origin is called once, in the background; a fresh key is not
// fetched again at all.
func TestRestartKeepsReadThroughState(t *testing.T) {
	var calls atomic.Int64
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		w.Header().Set("ETag", `"e`+strconv.FormatInt(n, 10)+`"`)
		fmt.Fprintf(w, "%s#%d", r.URL.Path, n)
	}))
	defer origin.Close()
	dir := t.TempDir()
	ctx := context.Background()
	start := func() (*redis.Client, *exec.Cmd) {
		addr := redistest.FreeAddr(t)
		cmd := startBinary(t, nil, "--addr", addr, "--metrics-addr", "", "--dir", dir, "--loader", "f:="+origin.URL+"/{key}")
		c := redis.NewClient(&redis.Options{Addr: addr})
		t.Cleanup(func() { c.Close() })
		return c, cmd
	}
	c, cmd := start()
	stale := c.Do(ctx, "GETFILL", "f:stale", 1, 3600).Val()
	fresh := c.Do(ctx, "GETFILL", "f:fresh", 3600, 3600).Val()
	testwait.For(t, "f:stale to go stale", func() bool {
		return strings.Contains(fmt.Sprint(c.Do(ctx, "FILL.INFO", "f:stale").Val()), "stale")
	})
	cmd.Process.Signal(syscall.SIGTERM)
	waitExit(t, cmd, "SIGTERM")
	if n := calls.Load(); n != 2 {
		t.Fatalf("origin calls before the restart: %d", n)
	}

	c, _ = start()
	if got := c.Do(ctx, "GETFILL", "f:fresh", 3600, 3600).Val(); got != fresh {
		t.Errorf("fresh key after the restart: %v, was %v", got, fresh)
	}
	if got := c.Do(ctx, "GETFILL", "f:stale", 1, 3600).Val(); got != stale {
		t.Errorf("stale key after the restart: %v, want the saved %v at once", got, stale)
	}
	testwait.For(t, "the stale key's one refresh", func() bool { return calls.Load() == 3 })
	testwait.For(t, "the refreshed value", func() bool {
		return c.Do(ctx, "GETFILL", "f:stale", 1, 3600).Val() != stale
	})
	if n := calls.Load(); n != 3 {
		t.Errorf("origin calls after the restart: %d, want one refresh of the stale key", n-2)
	}
}
