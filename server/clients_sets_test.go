package server

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stampedeless/stampedeless/commands"
)

// TestClientGoRedisTagSets runs the tag invalidation of cache frameworks
// through go-redis, against stampedeless and redis-server with the same
// assertions, in both protocols: each cached item is written with its tags
// in one MULTI/EXEC (the item, SADD to each tag's set, the tag's TTL);
// items are found by tag (SMEMBERS, SINTER, SUNION, SSCAN's iterator) and
// invalidated by tag under WATCH (SMEMBERS, then DEL of the items and the
// tag in a transaction that fails if the tag changed meanwhile).
func TestClientGoRedisTagSets(t *testing.T) {
	for _, target := range clientTargets(t) {
		for _, proto := range []int{2, 3} {
			t.Run(target.name+"/RESP"+strconv.Itoa(proto), func(t *testing.T) {
				c := redis.NewClient(&redis.Options{Addr: target.addr, Protocol: proto})
				t.Cleanup(func() { c.Close() })
				tagSetsScenario(t, c)
			})
		}
	}
}

// tagCache is the tag-aware cache of the scenario, over go-redis.
type tagCache struct{ c *redis.Client }

func tagKey(tag string) string { return "tag:" + tag }

// set writes key with its tags atomically.
func (tc tagCache) set(ctx context.Context, key, value string, tags ...string) error {
	_, err := tc.c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.Set(ctx, key, value, time.Hour)
		for _, tag := range tags {
			p.SAdd(ctx, tagKey(tag), key)
			p.Expire(ctx, tagKey(tag), 2*time.Hour)
		}
		return nil
	})
	return err
}

// invalidate deletes the items of tag and the tag, unless the tag changes
// between the read of its members and the deletion; it returns how many
// keys it deleted.
func (tc tagCache) invalidate(ctx context.Context, tag string, between func()) (int64, error) {
	var deleted int64
	err := tc.c.Watch(ctx, func(tx *redis.Tx) error {
		keys, err := tx.SMembers(ctx, tagKey(tag)).Result()
		if err != nil {
			return err
		}
		between()
		cmds, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Del(ctx, append(keys, tagKey(tag))...)
			return nil
		})
		if err == nil {
			deleted = cmds[0].(*redis.IntCmd).Val()
		}
		return err
	}, tagKey(tag))
	return deleted, err
}

func sortedResult(t *testing.T, what string, got []string, err error) []string {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	slices.Sort(got)
	return got
}

func wantStrings(t *testing.T, what string, got []string, err error, want ...string) {
	t.Helper()
	if got = sortedResult(t, what, got, err); !slices.Equal(got, want) {
		t.Fatalf("%s = %q, want %q", what, got, want)
	}
}

func tagSetsScenario(t *testing.T, c *redis.Client) {
	ctx := context.Background()
	if err := c.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	tc := tagCache{c}
	items := []struct {
		key  string
		tags []string
	}{
		{"product:1", []string{"products", "category:1"}},
		{"product:2", []string{"products", "category:2"}},
		{"product:3", []string{"products", "category:1", "featured"}},
		{"page:home", []string{"featured"}},
	}
	for _, it := range items {
		if err := tc.set(ctx, it.key, "v", it.tags...); err != nil {
			t.Fatalf("set %s: %v", it.key, err)
		}
	}

	m, err := c.SMembers(ctx, tagKey("products")).Result()
	wantStrings(t, "SMEMBERS products", m, err, "product:1", "product:2", "product:3")
	m, err = c.SInter(ctx, tagKey("products"), tagKey("category:1")).Result()
	wantStrings(t, "SINTER", m, err, "product:1", "product:3")
	m, err = c.SUnion(ctx, tagKey("category:2"), tagKey("featured")).Result()
	wantStrings(t, "SUNION", m, err, "page:home", "product:2", "product:3")
	m, err = c.SDiff(ctx, tagKey("products"), tagKey("featured")).Result()
	wantStrings(t, "SDIFF", m, err, "product:1", "product:2")
	if n, err := c.SInterCard(ctx, 0, tagKey("products"), tagKey("featured")).Result(); n != 1 || err != nil {
		t.Fatalf("SINTERCARD = %d, %v", n, err)
	}
	if n, err := c.SCard(ctx, tagKey("products")).Result(); n != 3 || err != nil {
		t.Fatalf("SCARD = %d, %v", n, err)
	}
	if ok, err := c.SIsMember(ctx, tagKey("featured"), "page:home").Result(); !ok || err != nil {
		t.Fatalf("SISMEMBER = %v, %v", ok, err)
	}
	if got, err := c.SMIsMember(ctx, tagKey("featured"), "page:home", "product:1").Result(); !slices.Equal(got, []bool{true, false}) || err != nil {
		t.Fatalf("SMISMEMBER = %v, %v", got, err)
	}
	members, err := c.SMembersMap(ctx, tagKey("category:1")).Result()
	if _, ok := members["product:3"]; !ok || len(members) != 2 || err != nil {
		t.Fatalf("SMembersMap = %v, %v", members, err)
	}
	var scanned []string
	iter := c.SScan(ctx, tagKey("products"), 0, "product:*", 1).Iterator()
	for iter.Next(ctx) {
		scanned = append(scanned, iter.Val())
	}
	wantStrings(t, "SSCAN iterator", scanned, iter.Err(), "product:1", "product:2", "product:3")

	// Pipelined reads and a failed type check in the same pipeline.
	cmds, err := c.Pipelined(ctx, func(p redis.Pipeliner) error {
		p.SCard(ctx, tagKey("featured"))
		p.SRandMemberN(ctx, tagKey("featured"), -3)
		p.Get(ctx, tagKey("featured"))
		p.SAdd(ctx, "product:1", "x")
		return nil
	})
	var redisErr redis.Error
	if !errors.As(err, &redisErr) || redisErr.Error() != commands.ErrWrongType {
		t.Fatalf("pipeline error = %v, want %s", err, commands.ErrWrongType)
	}
	if n := cmds[0].(*redis.IntCmd).Val(); n != 2 {
		t.Fatalf("pipelined SCARD = %d", n)
	}
	if drawn := cmds[1].(*redis.StringSliceCmd).Val(); len(drawn) != 3 {
		t.Fatalf("pipelined SRANDMEMBER -3 = %q", drawn)
	}
	for _, i := range []int{2, 3} {
		if err := cmds[i].Err(); err == nil || err.Error() != commands.ErrWrongType {
			t.Fatalf("pipelined command %d: %v", i, err)
		}
	}
	if ttl, err := c.TTL(ctx, tagKey("featured")).Result(); ttl <= time.Hour || err != nil {
		t.Fatalf("tag TTL = %v, %v", ttl, err)
	}

	// An invalidation whose tag changes under it fails; retried, it runs.
	_, err = tc.invalidate(ctx, "category:1", func() {
		if err := tc.set(ctx, "product:4", "v", "category:1"); err != nil {
			t.Fatal(err)
		}
	})
	if !errors.Is(err, redis.TxFailedErr) {
		t.Fatalf("invalidation raced by a write: %v, want %v", err, redis.TxFailedErr)
	}
	deleted, err := tc.invalidate(ctx, "category:1", func() {})
	if deleted != 4 || err != nil { // products 1, 3 and 4, and the tag
		t.Fatalf("invalidate category:1 = %d, %v", deleted, err)
	}
	if n, err := c.Exists(ctx, "product:1", "product:3", "product:4", tagKey("category:1")).Result(); n != 0 || err != nil {
		t.Fatalf("EXISTS after invalidation = %d, %v", n, err)
	}
	// Dangling members of other tags are cleaned up as frameworks do.
	if n, err := c.SRem(ctx, tagKey("products"), "product:1", "product:3").Result(); n != 2 || err != nil {
		t.Fatalf("SREM = %d, %v", n, err)
	}
	if moved, err := c.SMove(ctx, tagKey("featured"), tagKey("products"), "page:home").Result(); !moved || err != nil {
		t.Fatalf("SMOVE = %v, %v", moved, err)
	}
	if n, err := c.SUnionStore(ctx, "tag:all", tagKey("products"), tagKey("featured"), tagKey("category:2")).Result(); n != 3 || err != nil {
		t.Fatalf("SUNIONSTORE = %d, %v", n, err)
	}
	popped, err := c.SPopN(ctx, "tag:all", 5).Result()
	wantStrings(t, "SPOP 5", popped, err, "page:home", "product:2", "product:3")
	if n, err := c.Exists(ctx, "tag:all").Result(); n != 0 || err != nil {
		t.Fatalf("a set popped empty: EXISTS = %d, %v", n, err)
	}
}
