package server

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"
)

// Real clients in their default configuration, each run against
// stampedeless and against a real redis-server in the same test with the
// same assertions. Their defaults speak RESP3: go-redis v9, rueidis and
// node-redis 5+ all open with HELLO 3.

// clientTarget is a server the clients are tested against.
type clientTarget struct {
	name, addr string
}

// clientTargets starts both servers.
func clientTargets(t *testing.T) []clientTarget {
	t.Helper()
	return []clientTarget{
		{"redis-server", startRedis(t)},
		{"stampedeless", startServer(t, Options{}).addr},
	}
}

func TestClientGoRedisDefault(t *testing.T) {
	ctx := context.Background()
	for _, target := range clientTargets(t) {
		t.Run(target.name, func(t *testing.T) {
			c := redis.NewClient(&redis.Options{Addr: target.addr})
			defer c.Close()
			info, err := c.ClientInfo(ctx).Result()
			if err != nil || info.Resp != 3 {
				t.Fatalf("CLIENT INFO = %+v, %v; want resp=3", info, err)
			}
			if err := c.Set(ctx, "gr:k", "v", time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
			if v, err := c.Get(ctx, "gr:k").Result(); err != nil || v != "v" {
				t.Fatalf("GET = %q, %v", v, err)
			}
			if _, err := c.Get(ctx, "gr:missing").Result(); !errors.Is(err, redis.Nil) {
				t.Fatalf("GET missing: %v, want redis.Nil", err)
			}
			if _, err := c.SetArgs(ctx, "gr:k", "w", redis.SetArgs{Mode: "NX"}).Result(); !errors.Is(err, redis.Nil) {
				t.Fatalf("SET NX of an existing key: %v, want redis.Nil", err)
			}
			vals, err := c.MGet(ctx, "gr:k", "gr:missing").Result()
			if err != nil || len(vals) != 2 || vals[0] != "v" || vals[1] != nil {
				t.Fatalf("MGET = %v, %v", vals, err)
			}
			if ttl, err := c.TTL(ctx, "gr:k").Result(); err != nil || ttl != time.Minute {
				t.Fatalf("TTL = %v, %v", ttl, err)
			}
			if f, err := c.IncrByFloat(ctx, "gr:f", 1.5).Result(); err != nil || f != 1.5 {
				t.Fatalf("INCRBYFLOAT = %v, %v", f, err)
			}
			// A map in RESP3.
			cfg, err := c.ConfigGet(ctx, "appendonly").Result()
			if err != nil || len(cfg) != 1 || cfg["appendonly"] != "no" {
				t.Fatalf("CONFIG GET appendonly = %v, %v", cfg, err)
			}
			// Verbatim strings in RESP3.
			if s, err := c.Info(ctx, "server").Result(); err != nil || !strings.Contains(s, "\r\nredis_version:") {
				t.Fatalf("INFO server = %.100q, %v", s, err)
			}
			if s, err := c.ClientList(ctx).Result(); err != nil || !hasClientField(s, "resp=3") {
				t.Fatalf("CLIENT LIST = %q, %v", s, err)
			}
			// Sets inside COMMAND's entries in RESP3.
			cmds, err := c.Command(ctx).Result()
			if err != nil || cmds["get"] == nil || !slices.Contains(cmds["get"].Flags, "readonly") ||
				!slices.Contains(cmds["get"].ACLFlags, "@string") {
				t.Fatalf("COMMAND: get = %+v, %v", cmds["get"], err)
			}
			if n, err := c.Del(ctx, "gr:k", "gr:f", "gr:missing").Result(); err != nil || n != 2 {
				t.Fatalf("DEL = %d, %v", n, err)
			}
		})
	}
}

// hasClientField reports whether a CLIENT INFO or LIST text has the field
// name=value (the last field of a line in Redis 7.0, not in 7.2).
func hasClientField(text, field string) bool {
	return slices.Contains(strings.Fields(text), field)
}

// TestClientRueidis runs rueidis's NewClient in its default options, which
// turn on client-side caching: CLIENT TRACKING ON OPTIN at connect, and
// DoCache sends CLIENT CACHING YES before its read.
func TestClientRueidis(t *testing.T) {
	ctx := context.Background()
	for _, target := range clientTargets(t) {
		t.Run(target.name, func(t *testing.T) {
			c := newRueidis(t, target.addr)
			do := func(args ...string) rueidis.RedisResult {
				return c.Do(ctx, c.B().Arbitrary(args...).Build())
			}
			if s, err := do("CLIENT", "INFO").ToString(); err != nil || !hasClientField(s, "resp=3") {
				t.Fatalf("CLIENT INFO = %q, %v; want resp=3", s, err)
			}
			if err := c.Do(ctx, c.B().Set().Key("rd:k").Value("v").Build()).Error(); err != nil {
				t.Fatal(err)
			}
			if v, err := c.Do(ctx, c.B().Get().Key("rd:k").Build()).ToString(); err != nil || v != "v" {
				t.Fatalf("GET = %q, %v", v, err)
			}
			if err := c.Do(ctx, c.B().Get().Key("rd:missing").Build()).Error(); !rueidis.IsRedisNil(err) {
				t.Fatalf("GET missing: %v, want a nil reply", err)
			}
			vals, err := c.Do(ctx, c.B().Mget().Key("rd:k", "rd:missing").Build()).ToArray()
			if err != nil || len(vals) != 2 {
				t.Fatalf("MGET = %v, %v", vals, err)
			}
			if v, err := vals[0].ToString(); err != nil || v != "v" || !vals[1].IsNil() {
				t.Fatalf("MGET = %q %v, %v", v, vals[1], err)
			}
			if ok, err := c.Do(ctx, c.B().Expire().Key("rd:k").Seconds(100).Build()).AsBool(); err != nil || !ok {
				t.Fatalf("EXPIRE = %v, %v", ok, err)
			}
			if ttl, err := c.Do(ctx, c.B().Ttl().Key("rd:k").Build()).AsInt64(); err != nil || ttl != 100 {
				t.Fatalf("TTL = %d, %v", ttl, err)
			}
			cfg, err := do("CONFIG", "GET", "appendonly").AsStrMap()
			if err != nil || len(cfg) != 1 || cfg["appendonly"] != "no" {
				t.Fatalf("CONFIG GET appendonly = %v, %v", cfg, err)
			}
			if n, err := c.Do(ctx, c.B().Del().Key("rd:k", "rd:missing").Build()).AsInt64(); err != nil || n != 1 {
				t.Fatalf("DEL = %d, %v", n, err)
			}
		})
	}
}

// TestClientNodeRedis runs node-redis (testdata/node-redis) in its default
// configuration against both servers; both must print the same, expected,
// lines.
func TestClientNodeRedis(t *testing.T) {
	runNodeClient(t, "node-redis", []string{
		`set "OK"`, `get "v"`, `get-missing null`, `set-nx-exists null`, `mget ["v",null]`, `expire 1`,
		`ttl 100`, `incrbyfloat "1.5"`, `config-get {"appendonly":"no"}`, `client-info-resp 3`,
		`info-has-version true`, `del 2`, `csc-get ["v1","v1"]`, `csc-hits 1`, `csc-invalidated true`, `quit "OK"`,
	})
}

// runNodeClient installs the Node project in testdata/dir (pinned with its
// lockfile), runs its client.js against stampedeless and redis-server, and
// requires each to print exactly the lines want. It needs node and npm, and
// the npm registry or npm's cache for `npm ci`; without node or npm it
// skips, except in CI.
func runNodeClient(t *testing.T, dir string, want []string) {
	t.Helper()
	node, errNode := exec.LookPath("node")
	npm, errNpm := exec.LookPath("npm")
	if errNode != nil || errNpm != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("node and npm are required in CI")
		}
		t.Skip("node or npm not installed")
	}
	// Installed into a temporary copy, so the tree stays clean.
	tmp := t.TempDir()
	for _, f := range []string{"package.json", "package-lock.json", "client.js"} {
		data, err := os.ReadFile(filepath.Join("testdata", dir, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(tmp, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A registry that stops answering fails the test with npm's output
	// instead of hanging the whole package's run.
	ictx, icancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer icancel()
	install := exec.CommandContext(ictx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	install.Dir = tmp
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("npm ci: %v\n%s", err, out)
	}
	wantText := strings.Join(want, "\n") + "\n"
	for _, target := range clientTargets(t) {
		t.Run(target.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			run := exec.CommandContext(ctx, node, "client.js", target.addr)
			run.Dir = tmp
			var stderr strings.Builder
			run.Stderr = &stderr
			out, err := run.Output()
			if err != nil {
				t.Fatalf("node client.js: %v\n%s%s", err, out, stderr.String())
			}
			if string(out) != wantText {
				t.Errorf("%s printed:\n%s\nwant:\n%s\nstderr: %s", dir, out, wantText, stderr.String())
			}
		})
	}
}
