package resp

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/redis/rueidis"

	"github.com/stampedeless/stampedeless/internal/testwait"
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
