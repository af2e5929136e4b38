package server

import (
	"sync"

	"github.com/stampedeless/stampedeless/engine"
)

// dbKey is a key of a database, as the registries of keys clients wait on
// or watch hold them.
type dbKey struct {
	db  int
	key string
}

// watchRegistry records the keys clients WATCH and marks a client dirty,
// so that its EXEC runs nothing, when the store reports a change to one of
// them. Its listener runs under the changed key's shard lock (see
// engine.Listener), so it only looks up a map and sets flags (lock order:
// LOCKS.md, at the repository root).
type watchRegistry struct {
	srv *Server

	mu      sync.Mutex
	keys    map[dbKey][]*watchedKey // by key, the clients watching it
	clients int                     // clients watching at least one key
}

// watchedKey is one client's watch of one key.
type watchedKey struct {
	dbKey
	conn *Conn
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

// watch adds keys to c's watched keys. A client whose watched keys already
// changed gains nothing by watching more; as Redis, it is left as it is.
func (w *watchRegistry) watch(c *Conn, keys [][]byte) {
	var added []*watchedKey
	w.mu.Lock()
	if c.casDirty {
		w.mu.Unlock()
		return
	}
	db := int(c.db.Load())
	for _, k := range keys {
		if c.watchesLocked(db, k) {
			continue
		}
		// Live until the store says otherwise below: a removal that
		// races with this WATCH then counts as a change, which is safe.
		wk := &watchedKey{dbKey: dbKey{db, string(k)}, conn: c, live: true}
		if w.keys == nil {
			w.keys = make(map[dbKey][]*watchedKey)
		}
		if len(w.keys) == 0 {
			w.srv.consumeChanges(1)
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
		if present, expired := w.srv.store.DB(wk.db).Present([]byte(wk.key)); !present || expired {
			w.mu.Lock()
			wk.live, wk.stale = false, present
			w.mu.Unlock()
		}
	}
}

// watchesLocked reports whether c watches key of database db. The caller
// holds mu.
func (c *Conn) watchesLocked(db int, key []byte) bool {
	for _, wk := range c.watching {
		if wk.db == db && wk.key == string(key) {
			return true
		}
	}
	return false
}

// unwatch forgets c's watched keys and whether they changed (UNWATCH, and
// the end of a transaction).
func (w *watchRegistry) unwatch(c *Conn) {
	w.mu.Lock()
	w.unwatchLocked(c)
	c.casDirty = false
	w.mu.Unlock()
}

// unwatchLocked removes c's watched keys from the registry. The caller
// holds mu.
func (w *watchRegistry) unwatchLocked(c *Conn) {
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
		w.srv.consumeChanges(-1)
	}
}

// dirty reports whether one of c's watched keys changed.
func (w *watchRegistry) dirty(c *Conn) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return c.casDirty
}

// unchanged reports, for EXEC, whether none of c's watched keys changed
// since WATCH and every one that was live then still is (Redis 7 counts a
// key that expired meanwhile as changed, even before anything removes
// it), and unwatches them. EXEC calls it holding the store's atomic
// section, so the answer holds until its commands have run.
func (w *watchRegistry) unchanged(c *Conn) bool {
	w.mu.Lock()
	dirty := c.casDirty
	var live []dbKey
	for _, wk := range c.watching {
		if wk.live {
			live = append(live, wk.dbKey)
		}
	}
	w.unwatchLocked(c)
	c.casDirty = false
	w.mu.Unlock()
	if dirty {
		return false
	}
	for _, k := range live {
		if _, ok := w.srv.store.DB(k.db).Peek([]byte(k.key)); !ok {
			return false
		}
	}
	return true
}

// changed is the store's listener's part for WATCH: it marks dirty every
// client watching a key that changed. A write always changes the key, and
// so does another replica's (Invalidated); a removal only if the key was
// live when watched; FLUSHDB and FLUSHALL remove every key that was; a
// SWAPDB decides as Redis's touchAllWatchedKeysInDb (swapped).
func (w *watchRegistry) changed(ch engine.Change) {
	if ch.Kind == engine.Swapped {
		w.swapped(ch.DB, ch.With)
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var touched []*Conn
	if ch.Kind == engine.Flushed {
		for k, list := range w.keys {
			if ch.DB != engine.AllDatabases && k.db != ch.DB {
				continue
			}
			for _, wk := range list {
				if wk.live {
					touched = append(touched, wk.conn)
				}
			}
		}
	} else {
		for _, wk := range w.keys[dbKey{ch.DB, string(ch.Key)}] {
			if ch.Kind == engine.Written || ch.Kind == engine.Invalidated || wk.live {
				touched = append(touched, wk.conn)
			}
		}
	}
	w.touchLocked(touched)
}

// touchLocked marks dirty the clients of touched. A dirty client's keys
// are unwatched at once, as in Redis, since nothing can make its EXEC run
// any more. The caller holds mu.
func (w *watchRegistry) touchLocked(touched []*Conn) {
	for _, c := range touched {
		if !c.casDirty {
			c.casDirty = true
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
func (w *watchRegistry) swapped(db, with int) {
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
		l.inEmptied, _ = w.srv.store.DB(with).Present([]byte(l.key)) // what db held
		l.present, l.nowExpired = w.srv.store.DB(db).Present([]byte(l.key))
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	var touched []*Conn
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
			touched = append(touched, wk.conn)
		}
	}
	w.touchLocked(touched)
}

// watchInfo is what CLIENT LIST says of c's watches: how many keys it
// watches, and whether one of them changed.
func (w *watchRegistry) watchInfo(c *Conn) (keys int, dirty bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(c.watching), c.casDirty
}

// stats is what INFO says of WATCH, as Redis 7.4's watching_clients and
// total_watched_keys: how many clients watch keys, and how many distinct
// keys are watched.
func (w *watchRegistry) stats() (clients, keys int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.clients, len(w.keys)
}

// consumeChanges counts a consumer of the store's changes in (1) or out
// (-1). The store's listener is installed only while there is one, so that
// while nothing watches, a write costs the store one atomic load.
func (s *Server) consumeChanges(delta int) {
	s.changesMu.Lock()
	defer s.changesMu.Unlock()
	s.changeConsumers += delta
	switch {
	case delta > 0 && s.changeConsumers == 1:
		s.store.Listen(s.keyChanged)
	case s.changeConsumers == 0:
		s.store.Listen(nil)
	}
}

// keyChanged is the store's listener: it hands each change to the parts of
// the server that consume changes. It runs under the changed key's shard
// lock and must stay quick (engine.Listener).
func (s *Server) keyChanged(ch engine.Change) {
	if ch.Kind == engine.Created || ch.Kind == engine.Missed {
		// No value changed: only keyspace events tell of them.
		s.keyEvents.changed(ch)
		return
	}
	if ch.Unsignalled {
		// A stream's groups or last ID: its readers may answer otherwise
		// (NOGROUP), but no WATCH breaks and no cached read goes stale,
		// as in Redis, which signals no modified key for them.
		s.blocked.keyWritten(ch)
		return
	}
	s.watches.changed(ch)
	s.tracking.Changed(ch)
	s.blocked.keyWritten(ch)
	s.keyEvents.changed(ch)
}
