package cluster

import (
	"context"
	"crypto/sha1"
	"encoding/hex"

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

// reconcileBatch is how many keys one round trip of Reconcile checks.
const reconcileBatch = 512

// Reconcile drops from the local store every key whose copy is not the
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
	store := c.opts.Store
	var cursor uint64
	for {
		var keys []string
		cursor, keys = store.Scan(cursor, engine.ScanFilter{}, reconcileBatch)
		for len(keys) > 0 {
			n := min(len(keys), reconcileBatch)
			d, err := c.reconcile(ctx, keys[:n])
			checked, dropped = checked+n, dropped+d
			if err != nil {
				return checked, dropped, err
			}
			keys = keys[n:]
		}
		if cursor == 0 {
			return checked, dropped, nil
		}
	}
}

// reconcile is Reconcile for keys, in one round trip.
func (c *Client) reconcile(ctx context.Context, keys []string) (dropped int, err error) {
	store := c.opts.Store
	fences := make([]*engine.Fence, len(keys))
	cmds := make([]*redis.Cmd, len(keys))
	ctx, cancel := c.opCtx(ctx)
	defer cancel()
	_, err = c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			fences[i] = store.Fence([]byte(k))
			env, found := store.Export([]byte(k))
			if !found {
				continue // gone meanwhile: nothing to check
			}
			e := entryOf(env)
			sum := sha1.Sum(e.Value)
			typ := ""
			if e.Type != engine.TypeString {
				typ = e.Type.String()
			}
			// EVAL, not EVALSHA: a NOSCRIPT error would show only after
			// the whole pipeline ran (as in Written).
			cmds[i] = sameScript.Eval(ctx, p, []string{c.names.value(k)},
				hex.EncodeToString(sum[:]), typ, formatMillis(e.FreshUntil), formatMillis(e.StaleUntil))
		}
		return nil
	})
	if err != nil {
		for _, f := range fences {
			f.Release()
		}
		return 0, c.check(err)
	}
	for i, cmd := range cmds {
		if cmd == nil {
			fences[i].Release()
			continue
		}
		if same, _ := cmd.Int(); same == 1 {
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
