package cluster

import (
	"context"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/swr"
)

// Fault copies keys of database db from the shared tier into the local
// store (fault).
func (c *Client) Fault(ctx context.Context, db int, keys [][]byte) { c.in(db).fault(ctx, keys) }

// faults reports whether fault would ask Redis for any of keys of database
// db (faults).
func (c *Client) Faults(db int, keys [][]byte) bool { return c.in(db).faults(keys) }

// Entry returns the shared tier's entry for key of database db (entry).
func (c *Client) Entry(ctx context.Context, db int, key string) (swr.FleetEntry, bool, error) {
	return c.in(db).entry(ctx, key)
}

// Written pushes the local state of keys of database db to the shared tier
// and drops them from the other replicas (written).
func (c *Client) Written(ctx context.Context, db int, keys [][]byte) { c.in(db).written(ctx, keys) }

// fault copies keys from the shared tier into the local store where the
// store does not have them, so that every command sees what a client wrote
// on another replica; several keys cost one round trip. A client write of a
// key while Redis answers wins (engine.Fence). Errors only mark Redis down:
// the command then runs on the local tier alone.
func (t *dbTier) fault(ctx context.Context, keys [][]byte) {
	if !t.up.Load() {
		return
	}
	store := t.store
	var missing [][]byte // as Faults finds them
	for _, k := range keys {
		if !t.local(k) {
			missing = append(missing, k)
		}
	}
	if len(missing) == 0 {
		return
	}
	fences := make([]*engine.Fence, len(missing))
	for i, k := range missing {
		fences[i] = store.Fence(k)
	}
	ctx, cancel := t.opCtx(ctx)
	defer cancel()
	cmds := make([]*redis.MapStringStringCmd, len(missing))
	_, err := t.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range missing {
			cmds[i] = p.HGetAll(ctx, t.keys.value(string(k)))
		}
		return nil
	})
	if err != nil {
		for _, f := range fences {
			f.Release()
		}
		t.check(err)
		return
	}
	for i, k := range missing {
		e, err := decodeEntry(cmds[i].Val())
		if err != nil || e.Missing {
			fences[i].Release()
			t.m.SharedLookups.WithLabelValues("miss").Inc()
			continue
		}
		t.m.SharedLookups.WithLabelValues("hit").Inc()
		t.storeLocal(k, e, fences[i])
	}
}

// Faults reports whether Fault would ask Redis for any of keys: Redis is
// up and the store lacks one.
func (t *dbTier) faults(keys [][]byte) bool {
	if !t.up.Load() {
		return false
	}
	for _, k := range keys {
		if !t.local(k) {
			return true
		}
	}
	return false
}

// local reports whether the local store has key live, reading neither its
// value nor a counter: the shared tier's check before every read.
func (t *dbTier) local(key []byte) bool {
	_, found := t.store.TypeOf(key)
	return found
}

// entry returns the shared tier's entry for key, if it has one: one round
// trip, no lease.
func (t *dbTier) entry(ctx context.Context, key string) (swr.FleetEntry, bool, error) {
	if !t.up.Load() {
		return swr.FleetEntry{}, false, ErrUnavailable
	}
	ctx, cancel := t.opCtx(ctx)
	defer cancel()
	h, err := t.rdb.HGetAll(ctx, t.keys.value(key)).Result()
	if err != nil {
		return swr.FleetEntry{}, false, t.check(err)
	}
	if len(h) == 0 {
		return swr.FleetEntry{}, false, nil
	}
	e, err := decodeEntry(h)
	if err != nil {
		return swr.FleetEntry{}, false, err
	}
	return e, true, nil
}

// storeLocal copies a shared entry into the local tier under fence. Fault
// runs before the command that needs the key enters the store's atomic
// section, so the copy enters it for its write.
func (t *dbTier) storeLocal(key []byte, e swr.FleetEntry, fence *engine.Fence) {
	var err error
	t.store.Section().Shared(0, func() { _, err = t.store.Set(key, e.Value, e.SetOptions(fence)) })
	if err != nil {
		// Too large for this replica's --max-memory: it stays in Redis only.
		fence.Release()
	}
}

// written makes the shared tier follow a client write of keys on this
// replica, then drops the keys from every other replica. For each key the
// local entry (or its absence, after DEL) is written to Redis, clearing any
// fill lease so that a fill that started earlier cannot publish over it.
// It returns when every replica heard in the last seconds acknowledged the
// invalidation, or after the Redis timeout: a later read on any of them
// sees the write. With Redis down it does nothing; the write stays local.
func (t *dbTier) written(ctx context.Context, keys [][]byte) {
	if !t.up.Load() || len(keys) == 0 {
		return
	}
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = string(k)
	}
	inv := t.beginInvalidation(message{kind: msgWrite, keys: names})
	defer inv.end()
	wctx, cancel := t.opCtx(ctx)
	defer cancel()
	var err error
	if len(keys) == 1 {
		// One round trip writes the key and announces it.
		args := append([]any{t.keys.events(), inv.msg.encode()}, t.writeArgs(keys[0])...)
		err = writeScript.Run(wctx, t.rdb, t.writeKeys(names[0]), args...).Err()
	} else {
		// EVAL, not EVALSHA, in a pipeline: a NOSCRIPT error would only show
		// after the whole pipeline ran. The announcement follows once every
		// key is written: in a Redis Cluster they may be on several nodes.
		_, err = t.rdb.Pipelined(wctx, func(p redis.Pipeliner) error {
			for i, k := range keys {
				args := append([]any{t.keys.events(), ""}, t.writeArgs(k)...)
				writeScript.Eval(wctx, p, t.writeKeys(names[i]), args...)
			}
			return nil
		})
		if err == nil {
			err = t.rdb.Publish(wctx, t.keys.events(), inv.msg.encode()).Err()
		}
	}
	if err != nil && t.check(err) != nil {
		return
	}
	inv.await(ctx)
}

func (t *dbTier) writeKeys(key string) []string {
	return []string{t.keys.value(key), t.keys.lease(key)}
}

// writeArgs are writeScript's arguments for key's local state, of any
// type.
func (t *dbTier) writeArgs(key []byte) []any {
	env, found := t.store.Export(key)
	if !found {
		return []any{"-1"}
	}
	e := entryOf(env)
	return append([]any{entryExpireAt(e)}, entryFields(e)...)
}

// Flushed empties database db's part of the shared tier and that database
// on every replica, after a client's FLUSHDB here; with engine.AllDatabases,
// every database's, after FLUSHALL. The loader registrations and the fill
// slots stay: they are configuration and state, not cache. It scans the
// whole prefix on every master of a Redis Cluster.
func (c *Client) Flushed(ctx context.Context, db int) {
	if !c.up.Load() {
		return
	}
	t, pattern, msg := c.in(0), c.names.pattern(), message{kind: msgFlushAll}
	if db != engine.AllDatabases {
		t, msg = c.in(db), message{kind: msgFlush}
		pattern = t.keys.pattern() // database 0's: the whole prefix, filtered
	}
	flush := func(ctx context.Context, node scanner) error {
		var cursor uint64
		for {
			sctx, cancel := c.opCtx(ctx)
			keys, next, err := node.Scan(sctx, cursor, pattern, 1000).Result()
			if err == nil && len(keys) > 0 {
				// One UNLINK per key: a Redis Cluster refuses multi-key
				// commands across slots, even on one node.
				p := node.Pipeline()
				for _, k := range keys {
					if d := c.names.cacheKeyDB(k); d >= 0 && (db == engine.AllDatabases || d == db) {
						p.Unlink(sctx, k)
					}
				}
				_, err = p.Exec(sctx)
			}
			cancel()
			if err != nil {
				return err
			}
			if cursor = next; cursor == 0 {
				return nil
			}
		}
	}
	var err error
	if cc, ok := c.rdb.(*redis.ClusterClient); ok {
		err = cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			return flush(ctx, node)
		})
	} else if node, ok := c.rdb.(scanner); ok {
		err = flush(ctx, node)
	}
	if err != nil && c.check(err) != nil {
		return
	}
	inv := c.beginInvalidation(msg)
	defer inv.end()
	if err := t.send(inv.msg); err != nil {
		c.check(err)
		return
	}
	inv.await(ctx)
}

// invalidation is an invalidation on its way to the fleet.
type invalidation struct {
	c   *Client
	msg message
	w   *ackWait // nil when no other replica is heard
}

// beginInvalidation numbers m and registers for its acknowledgements by
// every replica heard recently, before m is sent, so that none is missed.
func (c *Client) beginInvalidation(m message) *invalidation {
	m.sender, m.id = c.id, c.nextID.Add(1)
	inv := &invalidation{c: c, msg: m}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.peers) > 0 {
		inv.w = &ackWait{want: make(map[string]bool, len(c.peers)), done: make(chan struct{})}
		for id := range c.peers {
			inv.w.want[id] = true
		}
		c.acks[m.id] = inv.w
	}
	return inv
}

// await waits, once the invalidation was sent, until every replica
// expected acknowledged it, or the Redis timeout passed.
func (inv *invalidation) await(ctx context.Context) {
	c := inv.c
	c.m.InvalidationsSent.Inc()
	if inv.w == nil {
		return
	}
	timer := time.NewTimer(c.opts.Timeout)
	defer timer.Stop()
	select {
	case <-inv.w.done:
	case <-timer.C:
		c.log.Debug("not every replica acknowledged an invalidation in time")
	case <-ctx.Done():
	}
}

// end forgets the invalidation's acknowledgements.
func (inv *invalidation) end() {
	if inv.w != nil {
		inv.c.mu.Lock()
		delete(inv.c.acks, inv.msg.id)
		inv.c.mu.Unlock()
	}
}
