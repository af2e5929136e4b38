package server

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/stampedeless/stampedeless/internal/testwait"
	"github.com/stampedeless/stampedeless/metrics"
)

// Client-side caching with real clients in their default configuration
// (only the cache turned on where it is not the default), against
// stampedeless and a real redis-server with the same assertions: a read is
// served from the client's cache, and another client's write invalidates it.

// TestClientRueidisDoCache: rueidis's default client caches a GET with
// DoCache (CLIENT TRACKING ON OPTIN, CLIENT CACHING YES) and drops it when
// another connection writes the key.
func TestClientRueidisDoCache(t *testing.T) {
	ctx := context.Background()
	for _, target := range clientTargets(t) {
		t.Run(target.name, func(t *testing.T) {
			c := newRueidis(t, target.addr)
			writer := redis.NewClient(&redis.Options{Addr: target.addr})
			defer writer.Close()
			if err := writer.Set(ctx, "csc:k", "v1", 0).Err(); err != nil {
				t.Fatal(err)
			}
			get := func() rueidis.RedisResult {
				return c.DoCache(ctx, c.B().Get().Key("csc:k").Cache(), time.Minute)
			}
			if r := get(); r.IsCacheHit() || mustString(t, r) != "v1" {
				t.Fatalf("first DoCache: hit %v, %q; want a miss answering v1", r.IsCacheHit(), mustString(t, r))
			}
			if r := get(); !r.IsCacheHit() || mustString(t, r) != "v1" {
				t.Fatalf("second DoCache: hit %v, %q; want a hit answering v1", r.IsCacheHit(), mustString(t, r))
			}
			if err := writer.Set(ctx, "csc:k", "v2", 0).Err(); err != nil {
				t.Fatal(err)
			}
			// The invalidation reaches rueidis's reader asynchronously; until
			// it has, the cache may answer v1. Without it, v1 forever.
			testwait.For(t, "DoCache to answer v2 after the invalidation", func() bool {
				return mustString(t, get()) == "v2"
			})
			if r := get(); !r.IsCacheHit() || mustString(t, r) != "v2" {
				t.Fatalf("DoCache after the refill: hit %v, %q; want a hit answering v2", r.IsCacheHit(), mustString(t, r))
			}
			// A cached absence is invalidated when the key is created.
			if r := c.DoCache(ctx, c.B().Get().Key("csc:new").Cache(), time.Minute); !rueidis.IsRedisNil(r.Error()) {
				t.Fatalf("DoCache of a missing key: %v, want nil", r.Error())
			}
			if err := writer.Set(ctx, "csc:new", "n", 0).Err(); err != nil {
				t.Fatal(err)
			}
			testwait.For(t, "DoCache to see the created key", func() bool {
				v, err := c.DoCache(ctx, c.B().Get().Key("csc:new").Cache(), time.Minute).ToString()
				return err == nil && v == "n"
			})
		})
	}
}

// newRueidis is rueidis's client in its default options, closed with t.
func newRueidis(t *testing.T, addr string) rueidis.Client {
	t.Helper()
	c, err := rueidis.NewClient(rueidis.ClientOption{InitAddress: []string{addr}})
	if err != nil {
		t.Fatalf("default NewClient: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

func mustString(t *testing.T, r rueidis.RedisResult) string {
	t.Helper()
	s, err := r.ToString()
	if err != nil {
		t.Fatalf("reply: %v", err)
	}
	return s
}

// TestClientGoRedisCache: go-redis v9 with its client-side cache on
// (ClientSideCacheConfig) serves a repeated GET from the cache and drops
// it when another connection writes the key.
func TestClientGoRedisCache(t *testing.T) {
	ctx := context.Background()
	for _, target := range clientTargets(t) {
		t.Run(target.name, func(t *testing.T) {
			c := redis.NewClient(&redis.Options{Addr: target.addr, ClientSideCacheConfig: &redis.ClientSideCacheConfig{}})
			defer c.Close()
			writer := redis.NewClient(&redis.Options{Addr: target.addr})
			defer writer.Close()
			if err := writer.Set(ctx, "gcsc:k", "v1", 0).Err(); err != nil {
				t.Fatal(err)
			}
			get := func() string {
				v, err := c.Get(ctx, "gcsc:k").Result()
				if err != nil {
					t.Fatalf("GET: %v", err)
				}
				return v
			}
			if v := get(); v != "v1" {
				t.Fatalf("GET = %q, want v1", v)
			}
			hits := c.CSCStats().Hits
			if v := get(); v != "v1" || c.CSCStats().Hits != hits+1 {
				t.Fatalf("second GET = %q with %d cache hits, want v1 from the cache (%d hits)", v, c.CSCStats().Hits, hits+1)
			}
			if err := writer.Set(ctx, "gcsc:k", "v2", 0).Err(); err != nil {
				t.Fatal(err)
			}
			testwait.For(t, "GET to answer v2 after the invalidation", func() bool { return get() == "v2" })
			hits = c.CSCStats().Hits
			if v := get(); v != "v2" || c.CSCStats().Hits != hits+1 {
				t.Fatalf("GET after the refill = %q with %d cache hits, want v2 from the cache (%d hits)", v, c.CSCStats().Hits, hits+1)
			}
		})
	}
}

// cachingReader is a minimal client-side cache on one raw RESP3
// connection with CLIENT TRACKING on: it reads replies and pushes in the
// order the server sent them, caches each GET's reply and drops a key when
// its invalidation arrives. It is as naive as a client can be: it is
// correct only if no invalidation of a write reaches it before the reply
// of a read that missed that write.
type cachingReader struct {
	t     *testing.T
	conn  *compatConn
	cache map[string]string
	hits  int
}

func newCachingReader(t *testing.T, addr string, mode ...string) *cachingReader {
	r := &cachingReader{t: t, conn: dialCompat(t, addr), cache: make(map[string]string)}
	r.do("HELLO", "3")
	if got := r.do(append([]string{"CLIENT", "TRACKING", "ON"}, mode...)...); got.String() != "+OK" {
		t.Fatalf("CLIENT TRACKING ON: %s", got)
	}
	return r
}

// do sends a command and returns its reply, applying the invalidations
// read before it.
func (r *cachingReader) do(args ...string) compatReply {
	r.t.Helper()
	return r.pipeline([][]string{args})[0]
}

// pipeline sends commands in one write and returns their replies,
// applying the invalidations read among them.
func (r *cachingReader) pipeline(cmds [][]string) []compatReply {
	r.t.Helper()
	var b strings.Builder
	for _, args := range cmds {
		b.WriteString(encodeCommand(args...))
	}
	if err := r.conn.send(b.String()); err != nil {
		r.t.Fatal(err)
	}
	replies := make([]compatReply, 0, len(cmds))
	for len(replies) < len(cmds) {
		rep, err := r.conn.read()
		if err != nil {
			r.t.Fatalf("%s: %v", showArgs(cmds[len(replies)]), err)
		}
		if rep.kind != '>' {
			replies = append(replies, rep)
			continue
		}
		if len(rep.elems) != 2 || rep.elems[0].str != "invalidate" {
			r.t.Fatalf("unexpected push %s", rep)
		}
		if rep.elems[1].null {
			clear(r.cache)
			continue
		}
		for _, k := range rep.elems[1].elems {
			delete(r.cache, k.str)
		}
	}
	return replies
}

// read answers each key from the cache, or reads the keys it lacks with
// GETs in one pipeline, caching each reply as it comes.
func (r *cachingReader) read(keys []string) map[string]string {
	out := make(map[string]string, len(keys))
	var missed []string
	var gets [][]string
	for _, k := range keys {
		if v, ok := r.cache[k]; ok {
			r.hits++
			out[k] = v
			continue
		}
		missed = append(missed, k)
		gets = append(gets, []string{"GET", k})
	}
	if len(gets) == 0 {
		return out
	}
	for i, rep := range r.pipeline(gets) {
		r.cache[missed[i]] = rep.str
		out[missed[i]] = rep.str
	}
	return out
}

// TestTrackingNoStaleReadUnderWrites: writers increment keys while a
// reader caches them, reading the keys it lacks in pipelines (the server
// answers a whole pipeline before it flushes, which leaves time for writes
// between a read and its reply being queued). After each round, once the
// reader has read every message the server queued before the writers' last
// replies (a PING's reply comes after them), every value it has cached must
// be the key's value: a reply queued after the invalidation of a write it
// missed would leave a stale value cached for good. Each round writes every
// key a few times only, so that a key's last write is often one that raced
// with a read, and nothing later hides a value left stale.
func TestTrackingNoStaleReadUnderWrites(t *testing.T) {
	const (
		keys    = 64
		writers = 3
		rounds  = 100
	)
	for _, target := range clientTargets(t) {
		for _, mode := range [][]string{nil, {"BCAST", "PREFIX", "race:"}} {
			t.Run(target.name+" "+strings.Join(mode, " "), func(t *testing.T) {
				ctx := context.Background()
				truth := redis.NewClient(&redis.Options{Addr: target.addr})
				defer truth.Close()
				names := make([]string, keys)
				for i := range names {
					names[i] = "race:" + strconv.Itoa(i)
					if err := truth.Set(ctx, names[i], 0, 0).Err(); err != nil {
						t.Fatal(err)
					}
				}
				r := newCachingReader(t, target.addr, mode...)
				seen := make(map[string]int)
				for round := range rounds {
					var wg sync.WaitGroup
					var stop atomic.Bool
					for w := range writers {
						wg.Add(1)
						go func() {
							defer wg.Done()
							c := redis.NewClient(&redis.Options{Addr: target.addr, PoolSize: 1})
							defer c.Close()
							for i := range keys {
								if err := c.Incr(ctx, names[(i*(w+1)+round)%keys]).Err(); err != nil {
									t.Error(err)
									return
								}
							}
						}()
					}
					go func() { wg.Wait(); stop.Store(true) }()
					for !stop.Load() {
						for k, s := range r.read(names) {
							v, err := strconv.Atoi(s)
							if err != nil {
								t.Fatalf("GET %s: %q", k, s)
							}
							if v < seen[k] {
								t.Fatalf("round %d: %s read %d after %d", round, k, v, seen[k])
							}
							seen[k] = v
						}
					}
					wg.Wait()
					if got := r.do("PING"); got.String() != "+PONG" {
						t.Fatalf("PING: %s", got)
					}
					for k, cached := range r.cache {
						want, err := truth.Get(ctx, k).Result()
						if err != nil {
							t.Fatal(err)
						}
						if cached != want {
							t.Fatalf("round %d: the reader's cache holds %s=%s, the server %s: an invalidation was lost or came before the reply it invalidates", round, k, cached, want)
						}
					}
				}
				if r.hits == 0 {
					t.Error("the reader never answered from its cache")
				}
			})
		}
	}
}

// expectPush reads the next message on a tracking connection and fails
// unless it renders as want.
func expectPush(t *testing.T, c *compatConn, want string) {
	t.Helper()
	r, err := c.read()
	if err != nil || r.String() != want {
		t.Fatalf("read %v (%v), want %s", r, err, want)
	}
}

// TestTrackingReadThrough: GETFILL is tracked as a read; its own fill is a
// write, whose invalidation follows the reply; a background refresh that
// stores a new value, an expiry and a write invalidate.
func TestTrackingReadThrough(t *testing.T) {
	o := newOrigin(t)
	ts, c := fillServer(t, o)
	ctx := context.Background()
	r := dialCompat(t, ts.addr)
	for _, cmd := range [][]string{{"HELLO", "3"}, {"CLIENT", "TRACKING", "ON"}} {
		if _, err := r.do(cmd...); err != nil {
			t.Fatal(err)
		}
	}
	do := func(want string, args ...string) {
		t.Helper()
		if got, err := r.do(args...); err != nil || got.String() != want {
			t.Fatalf("%s = %v (%v), want %s", showArgs(args), got, err, want)
		}
	}
	do(`"k:a@v0"`, "GETFILL", "k:a", "1", "60")
	expectPush(t, r, `>["invalidate" ["k:a"]]`) // its own fill
	do(`"k:a@v0"`, "GETFILL", "k:a", "1", "60")
	o.version.Store(1)
	// Once k:a is stale, a read starts a refresh, which stores v1.
	testwait.For(t, "the refresh to store v1", func() bool {
		return c.Do(ctx, "GETFILL", "k:a", "1", "60").Val() == "k:a@v1"
	})
	expectPush(t, r, `>["invalidate" ["k:a"]]`)
	do(`"k:a@v1"`, "GET", "k:a")

	if err := c.Set(ctx, "short", "v", 50*time.Millisecond).Err(); err != nil {
		t.Fatal(err)
	}
	do(`"v"`, "GET", "short")
	testwait.For(t, "short to expire", func() bool { return errors.Is(c.Get(ctx, "short").Err(), redis.Nil) })
	expectPush(t, r, `>["invalidate" ["short"]]`)

	// FILL.INFO reads the key: tracked.
	if got, err := r.do("FILL.INFO", "k:a"); err != nil || got.kind != '%' {
		t.Fatalf("FILL.INFO = %v (%v)", got, err)
	}
	c.Del(ctx, "k:a")
	expectPush(t, r, `>["invalidate" ["k:a"]]`)
	do("+PONG", "PING")
	sent := func(reason string) float64 {
		return metrics.Value(ts.metrics.TrackingInvalidations.WithLabelValues(reason))
	}
	if sent("write") != 3 || sent("expired") != 1 {
		t.Errorf("invalidations sent: write %v, expired %v; want 3 and 1", sent("write"), sent("expired"))
	}
}

// TestTrackingTableAndInfo: a full tracking table invalidates keys to make
// room; INFO and CLIENT LIST show tracking as Redis does.
func TestTrackingTableAndInfo(t *testing.T) {
	ts := startServer(t, Options{})
	ctx := context.Background()
	c := ts.client(t)
	r := newCachingReader(t, ts.addr)
	if err := c.ConfigSet(ctx, "tracking-table-max-keys", "2").Err(); err != nil {
		t.Fatal(err)
	}
	r.read([]string{"t1", "t2", "t3"})
	r.do("PING") // the invalidation that made room came before its reply
	if len(r.cache) != 2 {
		t.Errorf("the reader caches %v, want two keys of three: one invalidated to make room", r.cache)
	}
	if n := metrics.Value(ts.metrics.TrackingInvalidations.WithLabelValues("table_full")); n != 1 {
		t.Errorf("table_full invalidations = %v, want 1", n)
	}
	bcast := dialCompat(t, ts.addr)
	if got, err := bcast.do("CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", "a", "PREFIX", "b"); err != nil || got.String() != "+OK" {
		t.Fatalf("CLIENT TRACKING ON BCAST: %v %v", got, err)
	}
	for field, want := range map[string]string{"tracking_clients": "2"} {
		if got := infoField(t, c, "clients", field); got != want {
			t.Errorf("INFO %s = %s, want %s", field, got, want)
		}
	}
	for field, want := range map[string]string{"tracking_total_keys": "2", "tracking_total_items": "2", "tracking_total_prefixes": "2"} {
		if got := infoField(t, c, "stats", field); got != want {
			t.Errorf("INFO %s = %s, want %s", field, got, want)
		}
	}
	list, err := c.ClientList(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	var flags []string
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		for _, f := range strings.Fields(line) {
			if strings.HasPrefix(f, "flags=") || strings.HasPrefix(f, "redir=") {
				flags = append(flags, f)
			}
		}
	}
	slices.Sort(flags)
	if want := "flags=N flags=t flags=tB redir=-1 redir=0 redir=0"; strings.Join(flags, " ") != want {
		t.Errorf("CLIENT LIST flags and redir: %q, want %q", strings.Join(flags, " "), want)
	}
	if err := c.ConfigSet(ctx, "tracking-table-max-keys", "0").Err(); err != nil {
		t.Fatal(err)
	}
	r.read([]string{"t1", "t2", "t3", "t4"})
	if got := infoField(t, c, "stats", "tracking_total_keys"); got != "4" {
		t.Errorf("tracking_total_keys with no bound = %s, want 4", got)
	}
}

// TestTrackingScriptUndeclaredReads: a script's read of a key it did not
// declare is tracked for its client, as Redis 7.2 tracks it (7.0 tracks
// only declared keys: a deliberate difference, README), in both
// protocols.
func TestTrackingScriptUndeclaredReads(t *testing.T) {
	ts := startServer(t, Options{})
	w := dialCompat(t, ts.addr)
	for _, proto := range []string{"3", "2"} {
		t.Run("resp"+proto, func(t *testing.T) {
			reader, target := dialCompat(t, ts.addr), dialCompat(t, ts.addr)
			track := []string{"CLIENT", "TRACKING", "ON"}
			if proto == "2" {
				id, err := target.do("CLIENT", "ID")
				if err != nil {
					t.Fatal(err)
				}
				if r, err := target.do("SUBSCRIBE", "__redis__:invalidate"); err != nil || r.kind != '*' {
					t.Fatalf("SUBSCRIBE: %v %v", r, err)
				}
				track = append(track, "REDIRECT", id.str)
			} else {
				target = reader
			}
			for _, args := range [][]string{{"HELLO", proto}, track,
				{"EVAL_RO", "return redis.call('GET', 'u" + proto + "')", "0"}} {
				if r, err := reader.do(args...); err != nil || r.kind == '-' {
					t.Fatalf("%s: %v %v", showArgs(args), r, err)
				}
			}
			if r, err := w.do("SET", "u"+proto, "x"); err != nil || r.String() != "+OK" {
				t.Fatalf("SET: %v %v", r, err)
			}
			want := `>["invalidate" ["u3"]]`
			if proto == "2" {
				want = `["message" "__redis__:invalidate" ["u2"]]`
			}
			if r, err := target.read(); err != nil || r.String() != want {
				t.Fatalf("after SET of the key the script read: %s %v, want %s", r.String(), err, want)
			}
		})
	}
}
