package cluster

import (
	"context"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/swr"
)

// PURGE.TAG across the fleet (swr.PurgeFleet). The shared tier finds an
// entry by tag through one set per tag, <prefix>tag:{<tag>}, listing the
// keys published with the tag (tagAddScript); the entry's own "tags" field
// says whether it still carries it (purgeKeyScript). A purge is announced
// on the event channel as msgPurge and acknowledged like an invalidation.

// A Client is the PurgeFleet a Filler shares purges through.
var _ swr.PurgeFleet = (*Client)(nil)

// purgeChunk bounds the keys of one purge announcement; more keys go in
// more messages.
const purgeChunk = 10_000

// indexTags lists key in the sets of e's tags, before its publication. An
// error only marks Redis down: the entry is then not found by a purge in
// the shared tier until it expires.
func (t *dbTier) indexTags(ctx context.Context, key string, e swr.FleetEntry) {
	if len(e.Tags) == 0 {
		return
	}
	ctx, cancel := t.opCtx(ctx)
	defer cancel()
	at, now := entryExpireAt(e), strconv.FormatInt(t.opts.Now().UnixMilli(), 10)
	_, err := t.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, tag := range e.Tags {
			tagAddScript.Eval(ctx, p, []string{t.keys.tag(tag)}, key, at, now)
		}
		return nil
	})
	if err != nil {
		t.check(err)
	}
}

// purgeShared purges tags in the database's part of the shared tier: the keys
// listed in the tags' sets that may allows (nil: all) and whose entries
// carry one of the tags are deleted, or with soft made stale at now (unix
// nanoseconds). It returns those keys. With Redis down it returns
// ErrUnavailable at once.
func (t *dbTier) purgeShared(ctx context.Context, tags []string, soft bool, now int64, may swr.KeyFilter) ([]string, error) {
	if !t.up.Load() {
		return nil, ErrUnavailable
	}
	sctx, cancel := t.opCtx(ctx)
	members := make([]*redis.StringSliceCmd, len(tags))
	_, err := t.rdb.Pipelined(sctx, func(p redis.Pipeliner) error {
		for i, tag := range tags {
			members[i] = p.SMembers(sctx, t.keys.tag(tag))
		}
		return nil
	})
	cancel()
	if err != nil {
		return nil, t.check(err)
	}
	seen := make(map[string]struct{})
	var keys []string
	for _, m := range members {
		for _, k := range m.Val() {
			if _, dup := seen[k]; !dup && (may == nil || may(k)) {
				seen[k] = struct{}{}
				keys = append(keys, k)
			}
		}
	}
	if len(keys) == 0 {
		return nil, nil
	}
	args := []any{boolArg(soft), strconv.FormatInt(toMillis(now), 10)}
	for _, tag := range tags {
		args = append(args, tag)
	}
	pctx, cancel := t.opCtx(ctx)
	defer cancel()
	results := make([]*redis.Cmd, len(keys))
	// EVAL, not EVALSHA, in a pipeline, as Written does.
	_, err = t.rdb.Pipelined(pctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			results[i] = purgeKeyScript.Eval(pctx, p, []string{t.keys.value(k), t.keys.lease(k)}, args...)
		}
		return nil
	})
	if err != nil {
		return nil, t.check(err)
	}
	var purged []string
	for i, r := range results {
		if n, _ := r.Int(); n == 1 {
			purged = append(purged, keys[i])
		}
	}
	return purged, nil
}

// announcePurge tells the other replicas of a purge and
// returns once every replica heard recently acknowledged it, or after the
// Redis timeout. The keys go in messages of at most purgeChunk; the first
// carries the tags.
func (t *dbTier) announcePurge(ctx context.Context, tags, keys []string, soft bool) error {
	if !t.up.Load() {
		return ErrUnavailable
	}
	for first := true; first || len(keys) > 0; first = false {
		n := min(len(keys), purgeChunk)
		fields := append([]string{boolArg(soft), strconv.Itoa(len(tags))}, tags...)
		fields = append(fields, keys[:n]...)
		keys, tags = keys[n:], nil
		inv := t.beginInvalidation(message{kind: msgPurge, keys: fields})
		if err := t.send(inv.msg); err != nil {
			inv.end()
			return t.check(err)
		}
		inv.await(ctx)
		inv.end()
	}
	return nil
}

// PurgeShared purges tags in database db's part of the shared tier
// (swr.PurgeFleet; purgeShared).
func (c *Client) PurgeShared(ctx context.Context, db int, tags []string, soft bool, now int64, may swr.KeyFilter) ([]string, error) {
	return c.in(db).purgeShared(ctx, tags, soft, now, may)
}

// AnnouncePurge tells the other replicas of a purge in database db
// (swr.PurgeFleet; announcePurge).
func (c *Client) AnnouncePurge(ctx context.Context, db int, tags, keys []string, soft bool) error {
	return c.in(db).announcePurge(ctx, tags, keys, soft)
}

// WatchPurges sets the function that applies the purges other replicas
// announce (swr.PurgeFleet), each in its database.
func (c *Client) WatchPurges(apply func(db int, tags, keys []string, soft bool)) {
	c.purges.Store(&apply)
}

// heardPurge applies a purge another replica announced, then acknowledges
// it.
func (t *dbTier) heardPurge(m message) {
	defer t.ack(m)
	apply := t.purges.Load()
	if apply == nil || len(m.keys) < 2 {
		return
	}
	n, err := strconv.Atoi(m.keys[1])
	if err != nil || n < 0 || n > len(m.keys)-2 {
		return
	}
	t.m.InvalidationsReceived.Inc()
	(*apply)(t.db, m.keys[2:2+n], m.keys[2+n:], m.keys[0] == "1")
}
