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

// What GETFILL keeps outside the store survives a restart: PURGE.TAG finds
// a key loaded from the snapshot by the origin's Surrogate-Key, and a key
// the origin answered 404 for is still remembered as missing for
// --negative-ttl, without another origin call. redis-server loads the same
// file with the values and deadlines alone, and redis-check-rdb passes it.
func TestRestartKeepsTagsAndMissing(t *testing.T) {
	var tagged, gone atomic.Int64
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/f:tagged":
			n := tagged.Add(1)
			w.Header().Set("Surrogate-Key", "product:1 all")
			fmt.Fprintf(w, "tagged#%d", n)
		case "/f:gone":
			gone.Add(1)
			http.NotFound(w, r)
		default:
			t.Errorf("origin asked for %s", r.URL.Path)
		}
	}))
	defer origin.Close()
	dir := t.TempDir()
	ctx := context.Background()
	start := func() (*redis.Client, *exec.Cmd) {
		addr := redistest.FreeAddr(t)
		cmd := startBinary(t, nil, "--addr", addr, "--metrics-addr", "", "--dir", dir, "--negative-ttl", "1h",
			"--loader", "f:="+origin.URL+"/{key}")
		c := redis.NewClient(&redis.Options{Addr: addr})
		t.Cleanup(func() { c.Close() })
		return c, cmd
	}
	c, cmd := start()
	first, err := c.Do(ctx, "GETFILL", "f:tagged", 3600, 3600).Text()
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, "GETFILL", "f:gone", 3600, 3600).Err(); err != redis.Nil {
		t.Fatalf("GETFILL of a 404: %v, want nil", err)
	}
	deadline := c.PExpireTime(ctx, "f:tagged").Val()
	c.Do(ctx, "SHUTDOWN", "SAVE") // its reply is the connection closing
	waitExit(t, cmd, "SHUTDOWN SAVE")
	if a, b := tagged.Load(), gone.Load(); a != 1 || b != 1 {
		t.Fatalf("origin calls before the restart: %d and %d, want 1 each", a, b)
	}

	// redis-server takes the same file: the value and its deadline.
	path := filepath.Join(dir, "dump.rdb")
	out, err := exec.Command(redistest.Binary(t, "redis-check-rdb"), path).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "RDB looks OK!") {
		t.Fatalf("redis-check-rdb: %v\n%s", err, out)
	}
	rdir := t.TempDir()
	if b, err := os.ReadFile(path); err != nil || os.WriteFile(filepath.Join(rdir, "dump.rdb"), b, 0o600) != nil {
		t.Fatal(err)
	}
	rs := redistest.Start(t, "--dir", rdir, "--dbfilename", "dump.rdb")
	rc := redis.NewClient(&redis.Options{Addr: rs.Addr()})
	defer rc.Close()
	if got := rc.Get(ctx, "f:tagged").Val(); got != first {
		t.Errorf("redis-server loaded f:tagged as %q, want %q", got, first)
	}
	if got := rc.PExpireTime(ctx, "f:tagged").Val(); got != deadline {
		t.Errorf("redis-server loaded f:tagged's deadline as %v, want %v", got, deadline)
	}
	if n := rc.DBSize(ctx).Val(); n != 1 {
		t.Errorf("redis-server loaded %d keys, want 1", n)
	}

	c, _ = start()
	if err := c.Do(ctx, "GETFILL", "f:gone", 3600, 3600).Err(); err != redis.Nil {
		t.Errorf("GETFILL of the 404 after the restart: %v, want nil", err)
	}
	if n := gone.Load(); n != 1 {
		t.Errorf("the origin was asked for the missing key again after the restart: %d calls", n)
	}
	if got := c.Do(ctx, "GETFILL", "f:tagged", 3600, 3600).Val(); got != first {
		t.Errorf("f:tagged after the restart: %v, want %q from the snapshot", got, first)
	}
	if n, err := c.Do(ctx, "PURGE.TAG", "product:1").Int(); err != nil || n != 1 {
		t.Fatalf("PURGE.TAG product:1 after the restart = %d, %v; want the key loaded from the snapshot", n, err)
	}
	if n := c.Exists(ctx, "f:tagged").Val(); n != 0 {
		t.Error("f:tagged outlived its purge")
	}
	if got := c.Do(ctx, "GETFILL", "f:tagged", 3600, 3600).Val(); got != "tagged#2" {
		t.Errorf("f:tagged after its purge: %v, want a new fill", got)
	}
	if n := tagged.Load(); n != 2 {
		t.Errorf("origin calls for f:tagged: %d, want one before the restart and one after the purge", n)
	}
}

// In --redis mode, a replica restarted from its snapshot does not serve a
// key another replica wrote or deleted while it was down: the keys the
// shared tier no longer holds as the snapshot does are dropped before it
// serves, and read from the shared tier again; the others are served from
// the snapshot. Three replicas, on a real redis-server and on a Redis
// Cluster (the check's script is loaded on every master).
func TestFleetRestartFromSnapshot(t *testing.T) {
	t.Run("redis-server", func(t *testing.T) {
		s := redistest.Start(t)
		testFleetRestartFromSnapshot(t, []string{"--redis", s.Addr()})
	})
	t.Run("redis-cluster", func(t *testing.T) {
		c := redistest.StartCluster(t, 3)
		testFleetRestartFromSnapshot(t, []string{"--redis", c.Addrs()})
	})
}

func testFleetRestartFromSnapshot(t *testing.T, redisArgs []string) {
	origin := newFleetOrigin(t)
	ctx := context.Background()
	dirs := []string{t.TempDir(), t.TempDir(), t.TempDir()}
	start := func(i int) (*replicaProc, *exec.Cmd) {
		addr := redistest.FreeAddr(t)
		args := append([]string{"--addr", addr, "--metrics-addr", "", "--redis-timeout", "2s",
			"--dir", dirs[i], "--loader", "k:=" + origin.URL + "/{key}"}, redisArgs...)
		cmd := startBinary(t, nil, args...)
		rdb := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
		t.Cleanup(func() { rdb.Close() })
		return &replicaProc{addr: addr, rdb: rdb, pid: cmd.Process.Pid, kill: func() { cmd.Process.Kill() }}, cmd
	}
	f := &fleet{origin: origin}
	var cmds []*exec.Cmd
	for i := range dirs {
		r, cmd := start(i)
		f.replicas, cmds = append(f.replicas, r), append(cmds, cmd)
	}
	f.waitJoined(t)
	f.report(t)
	a, c := f.replicas[0].rdb, f.replicas[2].rdb
	for _, k := range []string{"same", "changed", "deleted", "expired"} {
		if err := a.Set(ctx, k, "v1", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	a.PExpire(ctx, "expired", time.Hour)
	// Values past what is checked by sending them back (by a digest).
	big := strings.Repeat("b", 5000)
	a.Set(ctx, "big:same", big, 0)
	a.Set(ctx, "big:changed", big, 0)
	filled := a.Do(ctx, "GETFILL", "k:filled", 3600, 3600).String()
	// C holds a copy of each.
	for _, k := range []string{"same", "changed", "deleted", "expired", "k:filled", "big:same", "big:changed"} {
		if err := c.Get(ctx, k).Err(); err != nil {
			t.Fatalf("GET %s on C: %v", k, err)
		}
	}
	if n := c.DBSize(ctx).Val(); n != 7 {
		t.Fatalf("C holds %d keys before its restart, want 7", n)
	}
	c.Do(ctx, "SHUTDOWN") // saves; its reply is the connection closing
	waitExit(t, cmds[2], "SHUTDOWN")

	// While C is down: a write, a delete, a new deadline, a refill.
	a.Set(ctx, "changed", "v2", 0)
	a.Del(ctx, "deleted")
	a.PExpire(ctx, "expired", 2*time.Hour)
	a.Set(ctx, "k:filled", "written", 0)
	a.Set(ctx, "big:changed", big+"!", 0)
	calls := origin.calls.Load()

	r, _ := start(2)
	f.replicas[2] = r
	f.waitJoined(t)
	c = r.rdb
	if n := c.DBSize(ctx).Val(); n != 2 {
		t.Errorf("C holds %d keys from its snapshot, want 2 (those no other replica changed)", n)
	}
	for k, want := range map[string]string{"same": "v1", "changed": "v2", "k:filled": "written", "big:same": big, "big:changed": big + "!"} {
		if got, err := c.Get(ctx, k).Result(); err != nil || got != want {
			t.Errorf("GET %s on the restarted replica: %.40q %v, want %.40q", k, got, err, want)
		}
	}
	if n := c.Exists(ctx, "deleted").Val(); n != 0 {
		t.Error("the restarted replica serves a key deleted while it was down")
	}
	if got, want := c.PExpireTime(ctx, "expired").Val(), a.PExpireTime(ctx, "expired").Val(); got != want {
		t.Errorf("the restarted replica's deadline of expired: %v, want %v", got, want)
	}
	if n := origin.calls.Load(); n != calls {
		t.Errorf("%d origin calls after the restart, want none", n-calls)
	}
	if !strings.Contains(filled, "k:filled#") {
		t.Errorf("the fill before the restart: %q", filled)
	}
}

// The loaders LOADER.REGISTER made survive a restart with --dir, headers
// included: GETFILL after it goes to the registered origin. One the new
// --loader-allow refuses is skipped with a log line, and the server starts.
func TestRestartKeepsRegisteredLoaders(t *testing.T) {
	origin := func(name string, token *atomic.Value) *httptest.Server {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if token != nil {
				token.Store(r.Header.Get("X-Token"))
			}
			fmt.Fprintf(w, "%s%s", name, r.URL.Path)
		}))
		t.Cleanup(s.Close)
		return s
	}
	var token atomic.Value
	api, other := origin("api", &token), origin("other", nil)
	dir := t.TempDir()
	ctx := context.Background()
	addr := redistest.FreeAddr(t)
	cmd := startBinary(t, nil, "--addr", addr, "--metrics-addr", "", "--dir", dir)
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	for _, args := range [][]any{
		{"LOADER.REGISTER", "api:", api.URL + "/{key}", "TIMEOUT", 2000, "HEADER", "X-Token", "s3cret"},
		{"LOADER.REGISTER", "other:", other.URL + "/{key}"},
	} {
		if err := c.Do(ctx, args...).Err(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
	}
	if err := c.Do(ctx, "SAVE").Err(); err != nil {
		t.Fatal(err)
	}
	c.Do(ctx, "SHUTDOWN", "NOSAVE")
	waitExit(t, cmd, "SHUTDOWN NOSAVE")

	// Restarted with an allow-list that covers api's origin alone.
	apiPort := api.URL[strings.LastIndex(api.URL, ":")+1:]
	addr = redistest.FreeAddr(t)
	var logs logBuffer
	startLogged(t, nil, &logs, "--addr", addr, "--metrics-addr", "", "--dir", dir, "--log-format", "json",
		"--loader-allow", "127.0.0.1:"+apiPort)
	c2 := redis.NewClient(&redis.Options{Addr: addr})
	defer c2.Close()
	if got, err := c2.Do(ctx, "GETFILL", "api:x", 60, 60).Text(); err != nil || got != "api/api:x" {
		t.Errorf("GETFILL api:x after the restart: %q, %v", got, err)
	}
	if got, _ := token.Load().(string); got != "s3cret" {
		t.Errorf("the origin got X-Token %q after the restart", got)
	}
	if got := fmt.Sprint(c2.Do(ctx, "LOADER.LIST").Val()); !strings.Contains(got, "api:") || strings.Contains(got, "other:") {
		t.Errorf("LOADER.LIST after the restart: %s", got)
	}
	if err := c2.Do(ctx, "GETFILL", "other:x", 60, 60).Err(); err == nil {
		t.Error("GETFILL other:x after the restart: no error, but its loader is refused")
	}
	lines := logs.With(t, "a loader registration in the snapshot is refused by this configuration and skipped; register it again if it should be")
	if len(lines) != 1 || !strings.Contains(fmt.Sprint(lines[0]["err"]), `"other:"`) {
		t.Errorf("log lines of the refused registration: %v\n%s", lines, logs.String())
	}
	if strings.Contains(logs.String(), "s3cret") {
		t.Error("a header value is in the log")
	}
}

// With --redis the fleet's registrations apply: a snapshot's are not
// restored, and the start says so.
func TestFleetIgnoresSnapshotLoaders(t *testing.T) {
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "v") }))
	defer origin.Close()
	dir := t.TempDir()
	ctx := context.Background()
	addr := redistest.FreeAddr(t)
	cmd := startBinary(t, nil, "--addr", addr, "--metrics-addr", "", "--dir", dir)
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	if err := c.Do(ctx, "LOADER.REGISTER", "api:", origin.URL+"/{key}").Err(); err != nil {
		t.Fatal(err)
	}
	c.Do(ctx, "SHUTDOWN") // saves; its reply is the connection closing
	waitExit(t, cmd, "SHUTDOWN")

	s := redistest.Start(t)
	addr = redistest.FreeAddr(t)
	var logs logBuffer
	startLogged(t, nil, &logs, "--addr", addr, "--metrics-addr", "", "--dir", dir, "--log-format", "json", "--redis", s.Addr())
	c2 := redis.NewClient(&redis.Options{Addr: addr})
	defer c2.Close()
	if got := fmt.Sprint(c2.Do(ctx, "LOADER.LIST").Val()); strings.Contains(got, "api:") {
		t.Errorf("LOADER.LIST with --redis after the restart: %s", got)
	}
	if lines := logs.With(t, "the snapshot's loader registrations are not restored: with --redis the fleet's registrations apply"); len(lines) != 1 {
		t.Errorf("no log line of the registrations left out:\n%s", logs.String())
	}
}
