package server

// Eviction against redis-server 7.0: Redis's own unit/maxmemory cases
// (which skip external servers, so their assertions are carried here),
// read-your-writes at the bound under every policy, noeviction's -OOM,
// and what OBJECT, INFO and the keyspace events say of eviction. Each
// assertion runs against both servers in the same test; the bound is set
// from what each counts against it (Redis: used_memory; here the store's
// cost, which is what --max-memory bounds).

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/engine"
)

// boundServer is one of the two servers of an eviction test: a client in
// its default configuration, and what the server counts against its
// maxmemory.
type boundServer struct {
	name string
	c    *redis.Client
	used func() int64
}

// boundServers starts a redis-server and this server and returns both.
func boundServers(t *testing.T) []boundServer {
	t.Helper()
	redisAddr := startRedis(t)
	rc := redis.NewClient(&redis.Options{Addr: redisAddr})
	t.Cleanup(func() { rc.Close() })
	store, err := engine.New(engine.Options{MaxMemory: 64 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(store.Close)
	ts := startServer(t, Options{Store: store})
	oc := redis.NewClient(&redis.Options{Addr: ts.addr})
	t.Cleanup(func() { oc.Close() })
	return []boundServer{
		{name: "redis", c: rc, used: func() int64 { return infoInt(t, rc, "memory", "used_memory") }},
		{name: "ours", c: oc, used: func() int64 { return store.Stats().Cost }},
	}
}

// infoInt reads an integer field of an INFO section.
func infoInt(t *testing.T, c *redis.Client, section, field string) int64 {
	t.Helper()
	v := infoField(t, c, section, field)
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		t.Fatalf("INFO %s: %q", field, v)
	}
	return n
}

// bindAbove flushes srv and sets its maxmemory to what it uses plus room,
// with policy.
func (srv boundServer) bindAbove(t *testing.T, room int64, policy string) int64 {
	t.Helper()
	ctx := context.Background()
	if err := srv.c.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	limit := srv.used() + room
	for _, kv := range [][2]string{{"maxmemory", strconv.FormatInt(limit, 10)}, {"maxmemory-policy", policy}} {
		if err := srv.c.ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			t.Fatalf("%s: CONFIG SET %s %s: %v", srv.name, kv[0], kv[1], err)
		}
	}
	return limit
}

func randomKey() string { return "key:" + strconv.Itoa(rand.IntN(1_000_000_000)) }

// Redis's "is the memory limit honoured?": keys written past the bound
// under each evicting policy keep the server within it.
func TestEvictionHonoursTheBound(t *testing.T) {
	ctx := context.Background()
	for _, srv := range boundServers(t) {
		for _, policy := range []string{"allkeys-random", "allkeys-lru", "allkeys-lfu", "volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"} {
			limit := srv.bindAbove(t, 100<<10, policy)
			numkeys := 0
			for {
				if err := srv.c.SetEx(ctx, randomKey(), "x", 10000*time.Second).Err(); err != nil {
					t.Fatalf("%s %s: SETEX: %v", srv.name, policy, err)
				}
				numkeys++
				if srv.used()+4096 > limit {
					break
				}
			}
			if numkeys <= 10 {
				t.Fatalf("%s %s: the bound was reached after %d keys", srv.name, policy, numkeys)
			}
			for range numkeys {
				if err := srv.c.SetEx(ctx, randomKey(), "x", 10000*time.Second).Err(); err != nil {
					t.Fatalf("%s %s: SETEX at the bound: %v", srv.name, policy, err)
				}
			}
			if used := srv.used(); used >= limit+4096 {
				t.Errorf("%s %s: used %d past the limit %d", srv.name, policy, used, limit)
			}
			if infoInt(t, srv.c, "stats", "evicted_keys") == 0 {
				t.Errorf("%s %s: INFO evicted_keys is 0 past the bound", srv.name, policy)
			}
		}
	}
}

// Redis's "only allkeys-* should remove non-volatile keys": past the
// bound with keys without a TTL, the allkeys policies evict and the
// volatile ones refuse writes with -OOM.
func TestEvictionOnlyAllKeysRemovesPersistentKeys(t *testing.T) {
	ctx := context.Background()
	for _, srv := range boundServers(t) {
		for _, policy := range []string{"allkeys-random", "allkeys-lru", "volatile-lru", "volatile-random", "volatile-ttl"} {
			limit := srv.bindAbove(t, 100<<10, policy)
			numkeys := 0
			for {
				if err := srv.c.Set(ctx, randomKey(), "x", 0).Err(); err != nil {
					t.Fatalf("%s %s: SET: %v", srv.name, policy, err)
				}
				numkeys++
				if srv.used()+4096 > limit {
					break
				}
			}
			var oom error
			for range numkeys {
				if err := srv.c.Set(ctx, randomKey(), "x", 0).Err(); err != nil && strings.Contains(err.Error(), "used memory") {
					oom = err
				}
			}
			if strings.HasPrefix(policy, "allkeys-") {
				if used := srv.used(); used >= limit+4096 {
					t.Errorf("%s %s: used %d past the limit %d", srv.name, policy, used, limit)
				}
				continue
			}
			if oom == nil {
				t.Errorf("%s %s: no -OOM writing past the bound with no key to evict", srv.name, policy)
			} else if got, want := oom.Error(), "OOM command not allowed when used memory > 'maxmemory'."; got != want {
				t.Errorf("%s %s: %q, want %q", srv.name, policy, got, want)
			}
		}
	}
}

// Redis's "policy volatile-* should only remove volatile keys".
func TestEvictionVolatilePoliciesKeepPersistentKeys(t *testing.T) {
	ctx := context.Background()
	for _, srv := range boundServers(t) {
		for _, policy := range []string{"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl"} {
			limit := srv.bindAbove(t, 100<<10, policy)
			numkeys := 0
			for {
				key := "key:" + strconv.Itoa(numkeys)
				var err error
				if numkeys%2 == 1 {
					err = srv.c.SetEx(ctx, key, "x", 10000*time.Second).Err()
				} else {
					err = srv.c.Set(ctx, key, "x", 0).Err()
				}
				if err != nil {
					t.Fatalf("%s %s: %v", srv.name, policy, err)
				}
				if srv.used()+4096 > limit {
					break
				}
				numkeys++
			}
			for j := range numkeys {
				srv.c.SetEx(ctx, "foo:"+strconv.Itoa(j), "x", 10000*time.Second)
			}
			if used := srv.used(); used >= limit+4096 {
				t.Errorf("%s %s: used %d past the limit %d", srv.name, policy, used, limit)
			}
			for j := 0; j < numkeys; j += 2 {
				if n := srv.c.Exists(ctx, "key:"+strconv.Itoa(j)).Val(); n != 1 {
					t.Fatalf("%s %s: key:%d, which has no TTL, was evicted", srv.name, policy, j)
				}
			}
		}
	}
}

// At the bound, under every policy, an acknowledged SET is readable by the
// next command, and a lock taken with SET NX PX is held: what a session
// store, a rate limiter or a lock library needs. The store is kept past
// its bound by the writes themselves, so each write evicts.
func TestEvictionReadYourWritesAtTheBound(t *testing.T) {
	ctx := context.Background()
	const rounds = 1000
	for _, srv := range boundServers(t) {
		for _, policy := range engine.PolicyNames() {
			volatile := strings.HasPrefix(policy, "volatile-")
			ttl := time.Duration(0)
			if volatile {
				ttl = time.Hour // keys a volatile policy may evict
			}
			limit := srv.bindAbove(t, 1<<20, policy)
			value := strings.Repeat("v", 100)
			for i := 0; srv.used() < limit; i++ {
				if err := srv.c.Set(ctx, fmt.Sprint("fill:", i), value, ttl).Err(); err != nil {
					break // noeviction: full
				}
			}
			before := infoInt(t, srv.c, "stats", "evicted_keys")
			missing, lost, acked := 0, 0, 0
			for i := range rounds {
				key, lock := fmt.Sprint("rw:", i), fmt.Sprint("lock:", i)
				if srv.c.Set(ctx, key, value, ttl).Err() == nil {
					acked++
					if got, err := srv.c.Get(ctx, key).Result(); err != nil || got != value {
						missing++
					}
				}
				if ok, err := srv.c.SetNX(ctx, lock, "token", 30*time.Second).Result(); err == nil && ok {
					acked++
					if got, err := srv.c.Get(ctx, lock).Result(); err != nil || got != "token" {
						lost++
					}
				}
			}
			if missing > 0 || lost > 0 {
				t.Errorf("%s %s: %d acknowledged SETs missing on the next command, %d locks not held", srv.name, policy, missing, lost)
			}
			evicted := infoInt(t, srv.c, "stats", "evicted_keys") - before
			switch {
			case policy == "noeviction" && (acked > 0 || evicted > 0):
				t.Errorf("%s noeviction: %d writes acknowledged and %d keys evicted past the bound", srv.name, acked, evicted)
			case policy != "noeviction" && evicted < int64(rounds):
				t.Errorf("%s %s: %d keys evicted during %d writes: the test ran below the bound", srv.name, policy, evicted, rounds)
			}
		}
	}
}

// noeviction refuses writes past the bound with Redis's -OOM and keeps
// serving reads and the writes that give memory back.
func TestNoEvictionRefusesWritesAndServesReads(t *testing.T) {
	ctx := context.Background()
	for _, srv := range boundServers(t) {
		srv.bindAbove(t, 100<<10, "noeviction")
		var err error
		i := 0
		for ; err == nil && i < 100000; i++ {
			err = srv.c.Set(ctx, fmt.Sprint("k:", i), strings.Repeat("v", 100), 0).Err()
		}
		if err == nil || err.Error() != "OOM command not allowed when used memory > 'maxmemory'." {
			t.Fatalf("%s: writing past the bound: %v", srv.name, err)
		}
		if err := srv.c.LPush(ctx, "list", "x").Err(); err == nil || !strings.HasPrefix(err.Error(), "OOM ") {
			t.Errorf("%s: LPUSH past the bound: %v", srv.name, err)
		}
		if got := srv.c.Get(ctx, "k:0").Val(); got != strings.Repeat("v", 100) {
			t.Errorf("%s: GET past the bound: %q", srv.name, got)
		}
		if n := srv.c.Del(ctx, "k:0", "k:1", "k:2").Val(); n != 3 {
			t.Errorf("%s: DEL past the bound removed %d", srv.name, n)
		}
		if n := infoInt(t, srv.c, "stats", "evicted_keys"); n != 0 {
			t.Errorf("%s: noeviction evicted %d keys", srv.name, n)
		}
	}
}

// OBJECT FREQ and OBJECT IDLETIME answer by the policy in force, as Redis
// does, with its errors for the one not tracked.
func TestObjectFreqAndIdleTimeFollowThePolicy(t *testing.T) {
	ctx := context.Background()
	servers := boundServers(t)
	reply := func(c *redis.Client, args ...any) string {
		v, err := c.Do(ctx, args...).Result()
		if err != nil {
			return "ERR " + err.Error()
		}
		return fmt.Sprint(v)
	}
	for _, policy := range engine.PolicyNames() {
		var got [2][2]string
		for i, srv := range servers {
			srv.bindAbove(t, 64<<20, policy)
			srv.c.Set(ctx, "k", "v", 0)
			got[i] = [2]string{reply(srv.c, "OBJECT", "FREQ", "k"), reply(srv.c, "OBJECT", "IDLETIME", "k")}
		}
		if got[0] != got[1] {
			t.Errorf("%s: OBJECT FREQ, IDLETIME: redis %q, ours %q", policy, got[0], got[1])
		}
	}
}

// An evicted key is published as the "evicted" keyspace event and counted
// in INFO's evicted_keys, one for one.
func TestEvictedKeyspaceEvents(t *testing.T) {
	ctx := context.Background()
	for _, srv := range boundServers(t) {
		// 1 MiB: the subscriber's connection and its output count in
		// Redis's used_memory.
		srv.bindAbove(t, 1<<20, "allkeys-lru")
		if err := srv.c.ConfigSet(ctx, "notify-keyspace-events", "Ee").Err(); err != nil {
			t.Fatal(err)
		}
		sub := srv.c.Subscribe(ctx, "__keyevent@0__:evicted")
		if _, err := sub.Receive(ctx); err != nil {
			t.Fatal(err)
		}
		// Written until keys are evicted, and as many again.
		written := 0
		for i := 0; written == 0 || i < 2*written; i++ {
			if err := srv.c.Set(ctx, fmt.Sprint("k:", i), strings.Repeat("v", 100), 0).Err(); err != nil {
				t.Fatalf("%s: SET: %v", srv.name, err)
			}
			if written == 0 && i%500 == 499 && infoInt(t, srv.c, "stats", "evicted_keys") > 0 {
				written = i + 1
			}
			if i > 1_000_000 {
				t.Fatalf("%s: nothing evicted", srv.name)
			}
		}
		evicted := infoInt(t, srv.c, "stats", "evicted_keys")
		events := 0
		for int64(events) < evicted {
			m, err := sub.ReceiveTimeout(ctx, 5*time.Second)
			if err != nil {
				break
			}
			msg, ok := m.(*redis.Message)
			if !ok {
				continue
			}
			if n := srv.c.Exists(ctx, msg.Payload).Val(); n != 0 {
				t.Errorf("%s: %s was published as evicted but exists", srv.name, msg.Payload)
			}
			events++
		}
		if int64(events) != evicted {
			t.Errorf("%s: %d evicted events for %d evicted keys", srv.name, events, evicted)
		}
		sub.Close()
		srv.c.ConfigSet(ctx, "notify-keyspace-events", "")
	}
}
