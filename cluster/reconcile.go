package cluster

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/engine"
)

// sameScript reports whether the shared tier's entry of a key is the one a
// replica holds: the same value (by its SHA-1, so that the value does not
// travel back), type and deadlines, and not a 404.
//
// KEYS: value. ARGV: the value's SHA-1 in hex, type ("" for a string),
// fresh and stale deadlines in ms ("" for none).
var sameScript = redis.NewScript(`
local h = redis.call('HMGET', KEYS[1], 'v', 'type', 'fresh', 'stale', 'missing')
if not h[1] or h[5] then
  return 0
end
if redis.sha1hex(h[1]) ~= ARGV[1] or (h[2] or '') ~= ARGV[2] or (h[3] or '') ~= ARGV[3] or (h[4] or '') ~= ARGV[4] then
  return 0
end
return 1
`)

// reconcileBatch is how many keys one round trip of Reconcile checks, and
// reconcileTimeout the least time it gives one, whatever --redis-timeout
// says: no client waits on it, and a round trip cut short would mark
// Redis down for the whole replica. (Four round trips in flight at once
// were not faster on two busy cores, and ran past 250 ms.)
const (
	reconcileBatch   = 256
	reconcileTimeout = 5 * time.Second
	// reconcileInline is the longest value checked by sending it back
	// (HMGET); a longer one is checked by its SHA-1 in a script.
	reconcileInline = 1024
)

// Reconcile drops from the local store (every database) every key whose copy is not the
// shared tier's entry, and returns how many keys it checked and dropped.
// It is for a replica that loaded a snapshot at start, before it serves:
// the snapshot holds what the replica held when it saved, and another
// replica may have written, deleted, refilled or purged a key since,
// announcing it while this one was not there to hear it. A key dropped is
// read from the shared tier again by the next command that names it, as
// any key the replica lacks. A key the shared tier no longer holds at all
// (deleted, expired or evicted by Redis) is dropped too: the snapshot
// cannot tell a DEL from an eviction. A key written here meanwhile
// (engine.Fence) is left alone.
//
// With Redis down it checks nothing and returns ErrUnavailable: the
// replica then serves its snapshot as it serves during an outage.
func (c *Client) Reconcile(ctx context.Context) (checked, dropped int, err error) {
	if !c.up.Load() {
		return 0, 0, ErrUnavailable
	}
	lctx, cancel := c.opCtx(ctx)
	err = c.loadScript(lctx, sameScript)
	cancel()
	if err != nil {
		return 0, 0, c.check(err)
	}
	for _, t := range c.dbs {
		var cursor uint64
		for {
			var keys []string
			cursor, keys = t.store.Scan(cursor, engine.ScanFilter{}, reconcileBatch)
			for len(keys) > 0 {
				n := min(len(keys), reconcileBatch)
				d, err := t.reconcile(ctx, keys[:n])
				checked, dropped = checked+n, dropped+d
				if err != nil {
					return checked, dropped, err
				}
				keys = keys[n:]
			}
			if cursor == 0 {
				break
			}
		}
	}
	return checked, dropped, nil
}

// loadScript loads script on Redis, on every master of a Redis Cluster,
// so that a pipeline can EVALSHA it.
func (c *Client) loadScript(ctx context.Context, script *redis.Script) error {
	if cc, ok := c.rdb.(*redis.ClusterClient); ok {
		return cc.ForEachMaster(ctx, func(ctx context.Context, node *redis.Client) error {
			return script.Load(ctx, node).Err()
		})
	}
	return script.Load(ctx, c.rdb).Err()
}

// reconcile is Reconcile for keys, in one round trip.
func (t *dbTier) reconcile(ctx context.Context, keys []string) (dropped int, err error) {
	store := t.store
	fences := make([]*engine.Fence, len(keys))
	// Per key, one of: the script's answer (a big value), or the shared
	// entry's fields (a small one, compared here) and the local entry.
	scripts := make([]*redis.Cmd, len(keys))
	fields := make([]*redis.SliceCmd, len(keys))
	locals := make([][]any, len(keys))
	ctx, cancel := context.WithTimeout(ctx, max(t.opts.Timeout, reconcileTimeout))
	defer cancel()
	_, err = t.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			fences[i] = store.Fence([]byte(k))
			env, found := store.Export([]byte(k))
			if !found {
				continue // gone meanwhile: nothing to check
			}
			e := entryOf(env)
			typ := ""
			if e.Type != engine.TypeString {
				typ = e.Type.String()
			}
			fresh, stale := formatMillis(e.FreshUntil), formatMillis(e.StaleUntil)
			if len(e.Value) <= reconcileInline {
				// HMGET is cheaper for Redis than a script, and a small
				// value costs little to send back.
				fields[i] = p.HMGet(ctx, t.keys.value(k), "v", "type", "fresh", "stale", "missing")
				locals[i] = []any{string(e.Value), typ, fresh, stale, nil}
				continue
			}
			sum := sha1.Sum(e.Value)
			// EVALSHA: loaded on every node above. Sending the script
			// with each key took most of a check of 1M keys.
			scripts[i] = sameScript.EvalSha(ctx, p, []string{t.keys.value(k)},
				hex.EncodeToString(sum[:]), typ, fresh, stale)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		for _, f := range fences {
			f.Release()
		}
		return 0, t.check(err)
	}
	for i := range keys {
		var same bool
		switch {
		case scripts[i] != nil:
			n, _ := scripts[i].Int()
			same = n == 1
		case fields[i] != nil:
			same = sameFields(fields[i].Val(), locals[i])
		default: // gone meanwhile
			same = true
		}
		if same {
			fences[i].Release()
			continue
		}
		var gone bool
		store.Section().Shared(0, func() { gone = store.DeleteFenced(fences[i]) })
		if gone {
			dropped++
		}
	}
	return dropped, nil
}

// sameFields reports whether HMGET's reply for v, type, fresh, stale and
// missing is want: a field HMGET finds missing is nil, as is want's for
// missing; want's empty strings are fields entryFields does not write.
func sameFields(got, want []any) bool {
	if len(got) != len(want) || got[0] == nil || got[4] != nil {
		return false
	}
	for i := 1; i < 4; i++ {
		g, _ := got[i].(string)
		if g != want[i] {
			return false
		}
	}
	v, _ := got[0].(string)
	return v == want[0]
}
