// Package watch is WATCH's registry: the keys each client watches, and
// whether one of them changed since, from the store's changes, as Redis
// decides it (a write, a removal of a key that was live, a flush, a SWAPDB
// as touchAllWatchedKeysInDb). MULTI/EXEC is the server's; it asks
// Unchanged holding the store's atomic section.
package watch

import (
	"sync"

	"github.com/stampedeless/stampedeless/engine"
)

// dbKey is a key of a database.
type dbKey struct {
	db  int
	key string
}

// Registry records the keys clients WATCH and marks a client dirty, so
// that its EXEC runs nothing, when the store reports a change to one of
// them. Its listener (Changed) runs under the changed key's shard lock
// (see engine.Listener), so it only looks up a map and sets flags (lock
// order: LOCKS.md, at the repository root). Its zero value is not ready:
// Init it.
type Registry struct {
	store *engine.Store
	// listen is told +1 when the first key is watched and -1 when the
	// last is no more: while any is, the store's changes are to be fed to
	// Changed.
	listen func(delta int)

	mu      sync.Mutex
	keys    map[dbKey][]*watchedKey // by key, the clients watching it
	clients int                     // clients watching at least one key
}

// watchedKey is one client's watch of one key.
type watchedKey struct {
	dbKey
	client *Client
	// live: the key was live when watched. Removing it is then a change,
	// and EXEC runs nothing if it is no longer live (it expired). Removing
	// a key that was not live (an expired entry swept away) changes
	// nothing a reader sees, as in Redis.
	live bool
	// stale: the key was in the store past its deadline when watched (or
	// a SWAPDB put such a key in its place), Redis's wk->expired: a SWAPDB
	// that leaves it missing or stale is no change (swapped).
	stale bool
}

// Init readies w to read the keys it is asked about from store, telling
// listen when the store's changes start and stop mattering to it (+1, -1).
func (w *Registry) Init(store *engine.Store, listen func(delta int)) {
	w.store, w.listen = store, listen
}

// Client is one connection's watches; its fields are guarded by the
// Registry's mu. The zero value watches nothing.
type Client struct {
	// watching are the keys it WATCHes; dirty, whether one of them
	// changed since (Redis's CLIENT_DIRTY_CAS).
	watching []*watchedKey
	dirty    bool
}

// Watch adds keys of database db to c's watched keys. A client whose watched keys already
// changed gains nothing by watching more; as Redis, it is left as it is.
func (w *Registry) Watch(c *Client, db int, keys [][]byte) {
	var added []*watchedKey
	w.mu.Lock()
	if c.dirty {
		w.mu.Unlock()
		return
	}
	for _, k := range keys {
		if c.watchesLocked(db, k) {
			continue
		}
		// Live until the store says otherwise below: a removal that
		// races with this WATCH then counts as a change, which is safe.
		wk := &watchedKey{dbKey: dbKey{db, string(k)}, client: c, live: true}
		if w.keys == nil {
			w.keys = make(map[dbKey][]*watchedKey)
		}
		if len(w.keys) == 0 {
			w.listen(1)
		}
		w.keys[wk.dbKey] = append(w.keys[wk.dbKey], wk)
		if len(c.watching) == 0 {
			w.clients++
		}
		c.watching = append(c.watching, wk)
		added = append(added, wk)
	}
	w.mu.Unlock()
	// Registered first, read after: a write in between marks c dirty
	// rather than go unseen. The store is read without mu (lock order).
	for _, wk := range added {
		if present, expired := w.store.DB(wk.db).Present([]byte(wk.key)); !present || expired {
			w.mu.Lock()
			wk.live, wk.stale = false, present
			w.mu.Unlock()
		}
	}
}

// watchesLocked reports whether c watches key of database db. The caller
// holds mu.
func (c *Client) watchesLocked(db int, key []byte) bool {
	for _, wk := range c.watching {
		if wk.db == db && wk.key == string(key) {
			return true
		}
	}
	return false
}

// Unwatch forgets c's watched keys and whether they changed (UNWATCH, and
// the end of a transaction).
func (w *Registry) Unwatch(c *Client) {
	w.mu.Lock()
	w.unwatchLocked(c)
	c.dirty = false
	w.mu.Unlock()
}

// unwatchLocked removes c's watched keys from the registry. The caller
// holds mu.
func (w *Registry) unwatchLocked(c *Client) {
	if len(c.watching) == 0 {
		return
	}
	for _, wk := range c.watching {
		list := w.keys[wk.dbKey]
		for i, other := range list {
			if other == wk {
				list = append(list[:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(w.keys, wk.dbKey)
		} else {
			w.keys[wk.dbKey] = list
		}
	}
	w.clients--
	c.watching = nil
	if len(w.keys) == 0 {
		w.listen(-1)
	}
}

// Dirty reports whether one of c's watched keys changed.
func (w *Registry) Dirty(c *Client) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return c.dirty
}

// Unchanged reports, for EXEC, whether none of c's watched keys changed
// since WATCH and every one that was live then still is (Redis 7 counts a
// key that expired meanwhile as changed, even before anything removes
// it), and unwatches them. EXEC calls it holding the store's atomic
// section, so the answer holds until its commands have run.
func (w *Registry) Unchanged(c *Client) bool {
	w.mu.Lock()
	dirty := c.dirty
	var live []dbKey
	for _, wk := range c.watching {
		if wk.live {
			live = append(live, wk.dbKey)
		}
	}
	w.unwatchLocked(c)
	c.dirty = false
	w.mu.Unlock()
	if dirty {
		return false
	}
	for _, k := range live {
		if _, ok := w.store.DB(k.db).Peek([]byte(k.key)); !ok {
			return false
		}
	}
	return true
}

// Changed is the store's listener's part for WATCH: it marks dirty every
// client watching a key that changed. A write always changes the key, and
// so does another replica's (Invalidated); a removal only if the key was
// live when watched; FLUSHDB and FLUSHALL remove every key that was; a
// SWAPDB decides as Redis's touchAllWatchedKeysInDb (swapped).
func (w *Registry) Changed(ch engine.Change) {
	if ch.Kind == engine.Swapped {
		w.swapped(ch.DB, ch.With)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var touched []*Client
	if ch.Kind == engine.Flushed {
		for k, list := range w.keys {
			if ch.DB != engine.AllDatabases && k.db != ch.DB {
				continue
			}
			for _, wk := range list {
				if wk.live {
					touched = append(touched, wk.client)
				}
			}
		}
	} else {
		for _, wk := range w.keys[dbKey{ch.DB, string(ch.Key)}] {
			if ch.Kind == engine.Written || ch.Kind == engine.Invalidated || wk.live {
				touched = append(touched, wk.client)
			}
		}
	}
	w.touchLocked(touched)
}

// touchLocked marks dirty the clients of touched. A dirty client's keys
// are unwatched at once, as in Redis, since nothing can make its EXEC run
// any more. The caller holds mu.
func (w *Registry) touchLocked(touched []*Client) {
	for _, c := range touched {
		if !c.dirty {
			c.dirty = true
			w.unwatchLocked(c)
		}
	}
}

// swapped applies SWAPDB to the keys watched in database db, which now
// holds what database with held, as Redis's touchAllWatchedKeysInDb: a key
// in neither database is untouched; a key that was stale when watched is
// untouched if it is now missing (and no longer stale: deleted keys are
// not) or stale again; a missing key replaced by a stale one becomes
// stale, untouched; any other is touched. The store is read (no shard lock
// is held for Swapped) without mu, then mu is taken to apply.
func (w *Registry) swapped(db, with int) {
	type look struct {
		key                            string
		inEmptied, present, nowExpired bool
	}
	w.mu.Lock()
	var looks []look
	for k := range w.keys {
		if k.db == db {
			looks = append(looks, look{key: k.key})
		}
	}
	w.mu.Unlock()
	for i := range looks {
		l := &looks[i]
		l.inEmptied, _ = w.store.DB(with).Present([]byte(l.key)) // what db held
		l.present, l.nowExpired = w.store.DB(db).Present([]byte(l.key))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var touched []*Client
	for _, l := range looks {
		if !l.inEmptied && !l.present {
			continue
		}
		for _, wk := range w.keys[dbKey{db, l.key}] {
			switch {
			case wk.stale && !l.present:
				wk.stale = false // a stale key deleted: no change a reader sees
				continue
			case wk.stale && l.nowExpired:
				continue // stale, and stale again
			case !wk.stale && !l.inEmptied && l.nowExpired:
				wk.stale = true // nothing, replaced by a stale key
				continue
			}
			touched = append(touched, wk.client)
		}
	}
	w.touchLocked(touched)
}

// Info is what CLIENT LIST says of c's watches: how many keys it
// watches, and whether one of them changed.
func (w *Registry) Info(c *Client) (keys int, dirty bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(c.watching), c.dirty
}

// Stats is what INFO says of WATCH, as Redis 7.4's watching_clients and
// total_watched_keys: how many clients watch keys, and how many distinct
// keys are watched.
func (w *Registry) Stats() (clients, keys int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.clients, len(w.keys)
}
