package server

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stampedeless/stampedeless/engine"
)

// The registry of clients blocked on keys, as Redis's blocked.c keeps it:
// a command that found nothing to take (BLPOP on empty keys) registers a
// blockedClient and waits outside the atomic section, holding no lock. A
// write to a key some client waits on marks the key ready (the store's
// listener, which runs under the key's shard lock, only marks); the
// connection that wrote serves the ready keys before its reply goes out
// (serveBlocked, which the dispatcher calls after every write command),
// or, for a write inside EXEC or a script, once the
// section's commands have all run. A ready key serves the clients
// blocked on it in the order they blocked, each through the function its
// command gave, until one finds nothing to take.
//
// Each element goes to exactly one client: a blockedClient's state moves
// once from waiting, under its own mutex, either to served (by whoever
// serves it, who holds that mutex while the engine pops) or to timed out,
// unblocked or gone (by the client itself or CLIENT UNBLOCK). A client
// that leaves first is never served; one served first gets its reply.
//
// The registry knows nothing of lists: BZPOPMIN, BZPOPMAX and BZMPOP
// block through it with a serve function of their own.
type blockRegistry struct {
	mu sync.Mutex // guards the maps
	// byKey are the clients blocked on each key, oldest first; lazily
	// initialized.
	byKey map[dbKey][]*blockedClient
	// byID are the blocked clients by connection id, for CLIENT UNBLOCK.
	byID map[int64]*blockedClient
	// ready are the keys written since they were last served.
	ready map[dbKey]struct{}

	clients   atomic.Int64 // blocked clients: INFO blocked_clients; 0 lets writes skip the registry
	haveReady atomic.Bool  // ready is not empty
}

// blockState is where a blocked client is in its life.
type blockState uint8

const (
	blockWaiting    blockState = iota
	blockServed                // serve took what it waited for
	blockTimedOut              // its timeout passed, or CLIENT UNBLOCK TIMEOUT
	blockUnblocked             // CLIENT UNBLOCK ERROR
	blockDisconnect            // the client closed its connection
)

// blockedClient is one client blocked on keys.
type blockedClient struct {
	id   int64
	keys []dbKey // owned copies, in the client's database

	// serve tries to serve the client from the ready key: it runs the
	// engine operation and keeps what it must reply, and reports whether
	// the client is done (served or answered an error). It runs under mu,
	// on the goroutine of the connection that wrote the key.
	serve func(key []byte) bool
	// reader: serving takes nothing from the key (XREAD), so a reader
	// that cannot be served says nothing of the clients after it.
	reader bool

	// listed: b is in the registry's maps; guarded by the registry's mu.
	listed bool

	mu    sync.Mutex // guards state
	state blockState
	done  chan struct{} // closed when state leaves blockWaiting
}

// block registers a client of connection id blocked on keys, served by
// serve. The caller waits on it with wait, outside the atomic section.
func (s *Server) block(id int64, db int, keys [][]byte, serve func(key []byte) bool) *blockedClient {
	b := &blockedClient{id: id, serve: serve, done: make(chan struct{})}
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if !seen[string(k)] {
			seen[string(k)] = true
			b.keys = append(b.keys, dbKey{db, string(k)})
		}
	}
	r := &s.blocked
	r.mu.Lock()
	if r.byKey == nil {
		r.byKey = make(map[dbKey][]*blockedClient)
		r.byID = make(map[int64]*blockedClient)
		r.ready = make(map[dbKey]struct{})
	}
	for _, k := range b.keys {
		r.byKey[k] = append(r.byKey[k], b)
	}
	r.byID[id] = b
	b.listed = true
	r.mu.Unlock()
	if r.clients.Add(1) == 1 {
		s.consumeChanges(1)
	}
	return b
}

// finish moves b from waiting to state, unless it has left waiting
// already; it reports whether it did.
func (b *blockedClient) finish(state blockState) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state != blockWaiting {
		return false
	}
	b.state = state
	close(b.done)
	return true
}

// tryServe serves b from key if it still waits, and reports whether it
// is done (served now or before).
func (b *blockedClient) tryServe(key []byte) (done bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state != blockWaiting {
		return true
	}
	if !b.serve(key) {
		return false
	}
	b.state = blockServed
	close(b.done)
	return true
}

// unregister removes b from the registry, if it is still there.
func (s *Server) unregister(b *blockedClient) {
	r := &s.blocked
	r.mu.Lock()
	if !b.listed {
		r.mu.Unlock()
		return
	}
	b.listed = false
	for _, k := range b.keys {
		list := r.byKey[k]
		for i, other := range list {
			if other == b {
				list = append(list[:i:i], list[i+1:]...)
				break
			}
		}
		if len(list) == 0 {
			delete(r.byKey, k)
		} else {
			r.byKey[k] = list
		}
	}
	if r.byID[b.id] == b {
		delete(r.byID, b.id)
	}
	r.mu.Unlock()
	if r.clients.Add(-1) == 0 {
		s.consumeChanges(-1)
	}
}

// keyWritten marks key ready if a client is blocked on it. It is the
// store's listener's part (keyChanged): under the key's shard lock, quick.
func (r *blockRegistry) keyWritten(ch engine.Change) {
	// A removed key is ready too: a reader blocked in a stream's group is
	// answered that the key went (Redis signals a deleted stream).
	switch ch.Kind {
	case engine.Written, engine.Deleted, engine.Expired, engine.Evicted, engine.Flushed, engine.Swapped:
	default:
		return
	}
	if r.clients.Load() == 0 {
		return
	}
	if ch.Kind == engine.Flushed || ch.Kind == engine.Swapped {
		// Every key of the database went, or is another's now: each
		// waiter of it is asked, as Redis signals every stream a flush
		// removes and SWAPDB scans for ready keys.
		r.mu.Lock()
		for k := range r.byKey {
			if ch.DB == engine.AllDatabases || k.db == ch.DB {
				r.ready[k] = struct{}{}
			}
		}
		r.haveReady.Store(len(r.ready) > 0)
		r.mu.Unlock()
		return
	}
	r.mu.Lock()
	if k := (dbKey{ch.DB, string(ch.Key)}); r.byKey[k] != nil {
		r.ready[k] = struct{}{}
		r.haveReady.Store(true)
	}
	r.mu.Unlock()
}

// serveBlocked serves the clients blocked on the keys c's command made
// ready, unless c runs inside EXEC or a script, whose end serves them
// (Redis serves them after the whole transaction, as if it were one
// command). It runs in the atomic section c's command holds.
func (s *Server) serveBlocked(c *Conn) {
	if c.tx.inSection || !s.blocked.haveReady.Load() {
		return
	}
	s.serveReady()
}

// serveReady serves every ready key's blocked clients, oldest first,
// until each key has nothing more to give; serving may make other keys
// ready (BLMOVE's destination), which are served too.
func (s *Server) serveReady() {
	r := &s.blocked
	for {
		r.mu.Lock()
		var key dbKey
		for k := range r.ready {
			key = k
			break
		}
		if len(r.ready) == 0 {
			r.haveReady.Store(false)
			r.mu.Unlock()
			return
		}
		delete(r.ready, key)
		waiters := append([]*blockedClient(nil), r.byKey[key]...)
		r.mu.Unlock()
		for _, b := range waiters {
			if !b.tryServe([]byte(key.key)) {
				if b.reader {
					continue
				}
				break // nothing left for the next one either
			}
			s.unregister(b)
		}
	}
}

// unblockClient implements CLIENT UNBLOCK's effect on the client of
// connection id: it ends its wait as a timeout, or with an error if
// withError. It reports whether the client was blocked.
func (s *Server) unblockClient(id int64, withError bool) bool {
	r := &s.blocked
	r.mu.Lock()
	b := r.byID[id]
	r.mu.Unlock()
	if b == nil {
		return false
	}
	state := blockTimedOut
	if withError {
		state = blockUnblocked
	}
	return b.finish(state)
}

// isBlocked reports whether the client of connection id is blocked on
// keys, for CLIENT LIST's b flag.
func (r *blockRegistry) isBlocked(id int64) bool {
	if r.clients.Load() == 0 {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.byID[id]
	return ok
}

// waitBlocked waits, where c may wait, until b is served, its timeout
// (0: none) passes, CLIENT UNBLOCK ends it or the client disconnects;
// then it unregisters b and replies: reply if it was served, else
// timedOut, or the UNBLOCKED error.
func (c *Conn) waitBlocked(b *blockedClient, timeout time.Duration, reply, timedOut func()) {
	c.Await(func(ctx context.Context) func() {
		var expired <-chan time.Time
		if timeout > 0 {
			t := time.NewTimer(timeout)
			defer t.Stop()
			expired = t.C
		}
		select {
		case <-b.done:
		case <-expired:
			b.finish(blockTimedOut)
		case <-ctx.Done():
			b.finish(blockDisconnect)
		}
		c.srv.unregister(b)
		b.mu.Lock()
		state := b.state
		b.mu.Unlock()
		return func() {
			switch state {
			case blockServed:
				reply()
			case blockUnblocked:
				c.w.Error("UNBLOCKED client unblocked via CLIENT UNBLOCK")
			default:
				timedOut()
			}
		}
	})
}

// awaitBlocked serves b at once from the first of keys that can serve it,
// which a write made before b was registered may have filled (its
// listener found no one blocked), then waits for it (waitBlocked). What
// reply writes must not alias the handler's arguments, which the reader
// reuses.
func (c *Conn) awaitBlocked(b *blockedClient, keys [][]byte, timeout time.Duration, reply, timedOut func()) {
	for _, k := range keys {
		if b.tryServe(k) {
			break
		}
	}
	c.waitBlocked(b, timeout, reply, timedOut)
}
