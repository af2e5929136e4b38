package main

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/internal/redistest"
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
