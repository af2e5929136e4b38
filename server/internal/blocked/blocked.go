// Package blocked is the registry of clients blocked on keys (BLPOP and
// its kin, XREAD's and XREADGROUP's waits), as Redis's blocked.c keeps it.
package blocked

import (
	"sync"
	"sync/atomic"

	"github.com/stampedeless/stampedeless/engine"
)

// dbKey is a key of a database.
type dbKey struct {
	db  int
	key string
}

// The registry of clients blocked on keys, as Redis's blocked.c keeps it:
// a command that found nothing to take (BLPOP on empty keys) registers a
// Client and waits outside the atomic section, holding no lock. A
// write to a key some client waits on marks the key ready (the store's
// listener, which runs under the key's shard lock, only marks); the
// connection that wrote serves the ready keys before its reply goes out
// (Registry.ServeReady, which the server's dispatcher calls after every
// write command), or, for a write inside EXEC or a script, once the
// section's commands have all run. A ready key serves the clients
// blocked on it in the order they blocked, each through the function its
// command gave, until one finds nothing to take.
//
// Each element goes to exactly one client: a Client's state moves
// once from waiting, under its own mutex, either to served (by whoever
// serves it, who holds that mutex while the engine pops) or to timed out,
// unblocked or gone (by the client itself or CLIENT UNBLOCK). A client
// that leaves first is never served; one served first gets its reply.
//
// The registry knows nothing of lists: BZPOPMIN, BZPOPMAX and BZMPOP
// block through it with a serve function of their own. Its zero value is
// not ready: Init it.
type Registry struct {
	// listen is told +1 when the first client blocks and -1 when the last
	// is no more: while any is, the store's changes are to be fed to
	// KeyWritten.
	listen func(delta int)

	mu sync.Mutex // guards the maps
	// byKey are the clients blocked on each key, oldest first; lazily
	// initialized.
	byKey map[dbKey][]*Client
	// byID are the blocked clients by connection id, for CLIENT UNBLOCK.
	byID map[int64]*Client
	// ready are the keys written since they were last served.
	ready map[dbKey]struct{}

	clients   atomic.Int64 // blocked clients: INFO blocked_clients; 0 lets writes skip the registry
	haveReady atomic.Bool  // ready is not empty
}

// State is where a blocked client is in its life.
type State uint8

// The states of a blocked client.
const (
	Waiting    State = iota
	Served           // serve took what it waited for
	TimedOut         // its timeout passed, or CLIENT UNBLOCK TIMEOUT
	Unblocked        // CLIENT UNBLOCK ERROR
	Disconnect       // the client closed its connection
)

// Client is one client blocked on keys.
type Client struct {
	id   int64
	keys []dbKey // owned copies, in the client's database

	// serve tries to serve the client from the ready key: it runs the
	// engine operation and keeps what it must reply, and reports whether
	// the client is done (served or answered an error). It runs under mu,
	// on the goroutine of the connection that wrote the key.
	serve func(key []byte) bool
	// Reader: serving takes nothing from the key (XREAD), so a reader
	// that cannot be served says nothing of the clients after it. Set it
	// before the client can be served.
	Reader bool

	// listed: b is in the registry's maps; guarded by the registry's mu.
	listed bool

	mu    sync.Mutex // guards state
	state State
	done  chan struct{} // closed when state leaves Waiting
}

// Init readies r, telling listen when the store's changes start and stop
// mattering to it (+1, -1).
func (r *Registry) Init(listen func(delta int)) { r.listen = listen }

// Block registers a client of connection id blocked on keys of database
// db, served by serve. The caller waits on Done, outside the atomic
// section, and then unregisters it.
func (r *Registry) Block(id int64, db int, keys [][]byte, serve func(key []byte) bool) *Client {
	b := &Client{id: id, serve: serve, done: make(chan struct{})}
	seen := make(map[string]bool, len(keys))
	for _, k := range keys {
		if !seen[string(k)] {
			seen[string(k)] = true
			b.keys = append(b.keys, dbKey{db, string(k)})
		}
	}
	r.mu.Lock()
	if r.byKey == nil {
		r.byKey = make(map[dbKey][]*Client)
		r.byID = make(map[int64]*Client)
		r.ready = make(map[dbKey]struct{})
	}
	for _, k := range b.keys {
		r.byKey[k] = append(r.byKey[k], b)
	}
	r.byID[id] = b
	b.listed = true
	r.mu.Unlock()
	if r.clients.Add(1) == 1 {
		r.listen(1)
	}
	return b
}

// Done is closed when b stops waiting: served, timed out, unblocked or
// gone.
func (b *Client) Done() <-chan struct{} { return b.done }

// State is where b is.
func (b *Client) State() State {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.state
}

// Finish moves b from waiting to state, unless it has left waiting
// already; it reports whether it did.
func (b *Client) Finish(state State) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state != Waiting {
		return false
	}
	b.state = state
	close(b.done)
	return true
}

// TryServe serves b from key if it still waits, and reports whether it
// is done (served now or before).
func (b *Client) TryServe(key []byte) (done bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state != Waiting {
		return true
	}
	if !b.serve(key) {
		return false
	}
	b.state = Served
	close(b.done)
	return true
}

// Unregister removes b from the registry, if it is still there.
func (r *Registry) Unregister(b *Client) {
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
		r.listen(-1)
	}
}

// KeyWritten marks key ready if a client is blocked on it. It is the
// store's listener's part: under the key's shard lock, quick.
func (r *Registry) KeyWritten(ch engine.Change) {
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

// HaveReady reports whether a key is ready, for ServeReady.
func (r *Registry) HaveReady() bool { return r.haveReady.Load() }

// Clients is how many clients are blocked.
func (r *Registry) Clients() int64 { return r.clients.Load() }

// ServeReady serves every ready key's blocked clients, oldest first,
// until each key has nothing more to give; serving may make other keys
// ready (BLMOVE's destination), which are served too. It runs in the
// atomic section of the command that made them ready.
func (r *Registry) ServeReady() {
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
		waiters := append([]*Client(nil), r.byKey[key]...)
		r.mu.Unlock()
		for _, b := range waiters {
			if !b.TryServe([]byte(key.key)) {
				if b.Reader {
					continue
				}
				break // nothing left for the next one either
			}
			r.Unregister(b)
		}
	}
}

// Unblock implements CLIENT UNBLOCK's effect on the client of connection
// id: it ends its wait as a timeout, or with an error if withError. It
// reports whether the client was blocked.
func (r *Registry) Unblock(id int64, withError bool) bool {
	r.mu.Lock()
	b := r.byID[id]
	r.mu.Unlock()
	if b == nil {
		return false
	}
	state := TimedOut
	if withError {
		state = Unblocked
	}
	return b.Finish(state)
}

// IsBlocked reports whether the client of connection id is blocked on
// keys, for CLIENT LIST's b flag.
func (r *Registry) IsBlocked(id int64) bool {
	if r.clients.Load() == 0 {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.byID[id]
	return ok
}
