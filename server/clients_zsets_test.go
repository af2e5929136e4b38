package server

import (
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stampedeless/stampedeless/commands"
)

// TestClientGoRedisRateLimiter runs a sliding-window rate limiter on a
// sorted set per client, as applications write one with go-redis in its
// default settings (RESP3): each request, in one MULTI/EXEC, drops the
// entries older than the window (ZREMRANGEBYSCORE), adds itself (ZADD),
// counts the window (ZCARD) and renews the key's TTL (EXPIRE). Time is the
// request's own timestamp, so that both servers see the same sequence.
func TestClientGoRedisRateLimiter(t *testing.T) {
	for _, target := range clientTargets(t) {
		t.Run(target.name, func(t *testing.T) {
			c := redis.NewClient(&redis.Options{Addr: target.addr})
			t.Cleanup(func() { c.Close() })
			rateLimiterScenario(t, c)
		})
	}
}

// slidingWindow allows limit requests per window of ms milliseconds.
type slidingWindow struct {
	c      *redis.Client
	window int64
	limit  int64
}

// allow records a request of client at ms and reports whether it is
// within the limit.
func (w slidingWindow) allow(ctx context.Context, client string, ms int64) (bool, error) {
	key := "rate:" + client
	var card *redis.IntCmd
	_, err := w.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRemRangeByScore(ctx, key, "-inf", strconv.FormatInt(ms-w.window, 10))
		p.ZAdd(ctx, key, redis.Z{Score: float64(ms), Member: strconv.FormatInt(ms, 10)})
		card = p.ZCard(ctx, key)
		p.Expire(ctx, key, time.Duration(w.window)*time.Millisecond)
		return nil
	})
	if err != nil {
		return false, err
	}
	return card.Val() <= w.limit, nil
}

func rateLimiterScenario(t *testing.T, c *redis.Client) {
	ctx := context.Background()
	if err := c.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	w := slidingWindow{c: c, window: 1000, limit: 3}
	var got []bool
	for _, ms := range []int64{0, 10, 20, 30, 1015, 1025, 1026, 5000} {
		ok, err := w.allow(ctx, "alice", ms)
		if err != nil {
			t.Fatalf("allow at %d: %v", ms, err)
		}
		got = append(got, ok)
	}
	// 30 is the fourth within a second; 1015 and 1025 come once 0, 10 and
	// 20 have left the window; 1026 is the fourth again; 5000 is alone.
	if want := []bool{true, true, true, false, true, true, false, true}; !slices.Equal(got, want) {
		t.Fatalf("decisions %v, want %v", got, want)
	}
	if ok, err := w.allow(ctx, "bob", 5000); err != nil || !ok {
		t.Fatalf("another client's first request: %v, %v", ok, err)
	}
	window, err := c.ZRangeWithScores(ctx, "rate:alice", 0, -1).Result()
	if err != nil || len(window) != 1 || window[0].Score != 5000 || window[0].Member != "5000" {
		t.Fatalf("alice's window: %v, %v", window, err)
	}
	if ttl, err := c.PTTL(ctx, "rate:alice").Result(); err != nil || ttl <= 0 || ttl > time.Second {
		t.Fatalf("PTTL = %v, %v", ttl, err)
	}
	// A pipeline of a wrong-type write fails that command alone.
	if err := c.Set(ctx, "rate:str", "x", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.allow(ctx, "str", 1); err == nil || err.Error() != commands.ErrWrongType {
		t.Fatalf("allow on a string key: %v", err)
	}
}

// TestClientGoRedisTaggedCache runs a tagged cache the way Laravel's
// Redis store keeps one since Laravel 10: each tag's entries in a sorted
// set scored by the entry's expiry (-1 for none), written with the item in
// MULTI/EXEC (ZADD GT for an expiring entry, NX for a lasting one), stale
// entries found by ZRANGEBYSCORE and dropped by ZREMRANGEBYSCORE, a tag's
// entries walked by ZSCAN to flush it. go-redis in its default settings,
// both servers, the same assertions.
func TestClientGoRedisTaggedCache(t *testing.T) {
	for _, target := range clientTargets(t) {
		t.Run(target.name, func(t *testing.T) {
			c := redis.NewClient(&redis.Options{Addr: target.addr})
			t.Cleanup(func() { c.Close() })
			taggedCacheScenario(t, c)
		})
	}
}

// taggedCache is the scenario's cache; now is its clock in Unix seconds.
type taggedCache struct {
	c   *redis.Client
	now int64
}

func entriesKey(tag string) string { return "tag:" + tag + ":entries" }

// put stores key for ttl seconds (0: for ever) under tags.
func (tc *taggedCache) put(ctx context.Context, key, value string, ttl int64, tags ...string) error {
	_, err := tc.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		expiry := float64(-1)
		if ttl > 0 {
			expiry = float64(tc.now + ttl)
			p.Set(ctx, key, value, time.Duration(ttl)*time.Second)
		} else {
			p.Set(ctx, key, value, 0)
		}
		for _, tag := range tags {
			z := redis.Z{Score: expiry, Member: key}
			if ttl > 0 {
				p.ZAddGT(ctx, entriesKey(tag), z)
			} else {
				p.ZAddNX(ctx, entriesKey(tag), z)
			}
		}
		return nil
	})
	return err
}

// stale lists the entries of tag that have expired, then drops them.
func (tc *taggedCache) stale(ctx context.Context, tag string) ([]string, error) {
	bound := strconv.FormatInt(tc.now, 10)
	keys, err := tc.c.ZRangeByScore(ctx, entriesKey(tag), &redis.ZRangeBy{Min: "0", Max: bound}).Result()
	if err != nil {
		return nil, err
	}
	return keys, tc.c.ZRemRangeByScore(ctx, entriesKey(tag), "0", bound).Err()
}

// entries walks the entries of tag with ZSCAN, a few at a time.
func (tc *taggedCache) entries(ctx context.Context, tag string) ([]string, error) {
	var keys []string
	it := tc.c.ZScan(ctx, entriesKey(tag), 0, "*", 5).Iterator()
	for i := 0; it.Next(ctx); i++ {
		if i%2 == 0 { // members and scores alternate
			keys = append(keys, it.Val())
		}
	}
	slices.Sort(keys)
	return slices.Compact(keys), it.Err()
}

// flush deletes the items of tags and the tags' entries.
func (tc *taggedCache) flush(ctx context.Context, tags ...string) (int64, error) {
	var keys []string
	for _, tag := range tags {
		ks, err := tc.entries(ctx, tag)
		if err != nil {
			return 0, err
		}
		keys = append(append(keys, ks...), entriesKey(tag))
	}
	return tc.c.Del(ctx, keys...).Result()
}

func taggedCacheScenario(t *testing.T, c *redis.Client) {
	ctx := context.Background()
	if err := c.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	tc := &taggedCache{c: c, now: 1_700_000_000}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(tc.put(ctx, "user:1", "ann", 60, "users", "team:a"))
	must(tc.put(ctx, "user:2", "bob", 600, "users"))
	must(tc.put(ctx, "config", "x", 0, "users"))
	// Re-putting with a shorter TTL keeps the later expiry (GT); a lasting
	// entry keeps -1 (NX).
	must(tc.put(ctx, "user:2", "bob", 10, "users"))
	must(tc.put(ctx, "config", "y", 0, "users"))
	for i := range 40 {
		must(tc.put(ctx, "post:"+strconv.Itoa(i), "p", int64(100+i), "posts"))
	}
	scores, err := c.ZMScore(ctx, entriesKey("users"), "user:1", "user:2", "config").Result()
	if want := []float64{1_700_000_060, 1_700_000_600, -1}; err != nil || !slices.Equal(scores, want) {
		t.Fatalf("users' entries: %v, %v; want %v", scores, err, want)
	}

	tc.now += 120 // user:1 and the first 20 posts have expired
	stale, err := tc.stale(ctx, "users")
	if err != nil || !slices.Equal(stale, []string{"user:1"}) {
		t.Fatalf("stale users: %v, %v", stale, err)
	}
	stalePosts, err := tc.stale(ctx, "posts")
	if err != nil || len(stalePosts) != 21 || stalePosts[0] != "post:0" || stalePosts[20] != "post:20" {
		t.Fatalf("stale posts: %v, %v", stalePosts, err)
	}
	users, err := tc.entries(ctx, "users")
	if err != nil || !slices.Equal(users, []string{"config", "user:2"}) {
		t.Fatalf("users' entries after the sweep: %v, %v", users, err)
	}
	posts, err := tc.entries(ctx, "posts")
	if err != nil || len(posts) != 19 {
		t.Fatalf("posts' entries after the sweep: %d, %v", len(posts), err)
	}
	n, err := tc.flush(ctx, "users", "posts")
	// config, user:2, the 19 live posts (the 21 stale ones are the
	// server's to expire) and both entry sets.
	if err != nil || n != 2+19+2 {
		t.Fatalf("flush deleted %d, %v", n, err)
	}
	if left, err := c.Exists(ctx, "config", "user:2", "post:39", entriesKey("users")).Result(); err != nil || left != 0 {
		t.Fatalf("%d keys left after the flush, %v", left, err)
	}
	if card, err := c.ZCard(ctx, entriesKey("team:a")).Result(); err != nil || card != 1 {
		t.Fatalf("another tag's entries: %d, %v", card, err)
	}
}
