// Package pubsub is the registry of subscriptions: which connections
// subscribe to each channel, pattern and shard channel, each connection's
// own (Subscriptions), and who a message reaches. The server writes the
// confirmations and pushes the messages; it holds the registry's lock
// while it does (Lock, RLock), so that a message never reaches a
// connection before the confirmation of the subscription it came through,
// nor after the confirmation of its end.
package pubsub

import (
	"iter"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/stampedeless/stampedeless/internal/glob"
)

// Kind is a kind of subscription: to a channel (SUBSCRIBE), a pattern
// (PSUBSCRIBE) or a shard channel (SSUBSCRIBE). Without a Redis Cluster,
// shard channels are a namespace of their own that patterns do not see,
// and otherwise behave as channels do.
type Kind int

// The kinds of subscription.
const (
	Channel Kind = iota
	Pattern
	Shard
	// Kinds is the number of kinds.
	Kinds
)

// Words are the words of each kind's confirmations and messages.
var Words = [Kinds]struct{ Subscribe, Unsubscribe, Message string }{
	Channel: {"subscribe", "unsubscribe", "message"},
	Pattern: {"psubscribe", "punsubscribe", "pmessage"},
	Shard:   {"ssubscribe", "sunsubscribe", "smessage"},
}

// Registry is the server's subscriptions, of connections of type C.
// Publishers hold mu for reading while they push, and (un)subscribing
// holds it for writing while the confirmation is queued.
type Registry[C comparable] struct {
	mu      sync.RWMutex
	subs    [Kinds]map[string]*subscribers[C]
	clients int // connections with a subscription
	// delivered counts messages queued for subscribers.
	delivered atomic.Int64
}

// subscribers are the connections subscribed to one name.
type subscribers[C comparable] struct {
	name  []byte // the channel or pattern, for matching without converting
	conns map[C]struct{}
}

// Subscriptions are one connection's. The connection's loop (or its
// continuation) changes them holding the registry for writing; counts are
// also read by other connections (CLIENT LIST).
type Subscriptions struct {
	names  [Kinds]map[string]struct{}
	counts [Kinds]atomic.Int32
}

// Count is the number a confirmation of kind reports: channels and
// patterns together, or shard channels alone, as in Redis.
func (s *Subscriptions) Count(kind Kind) int64 {
	if kind == Shard {
		return int64(s.counts[Shard].Load())
	}
	return int64(s.counts[Channel].Load() + s.counts[Pattern].Load())
}

// Of is how many subscriptions of kind alone there are.
func (s *Subscriptions) Of(kind Kind) int32 { return s.counts[kind].Load() }

// Total is every subscription: a RESP2 connection with any is in
// subscriber mode.
func (s *Subscriptions) Total() int {
	return int(s.counts[Channel].Load() + s.counts[Pattern].Load() + s.counts[Shard].Load())
}

// Sorted are the names of kind, sorted; the connection's own goroutine
// asks, or one holding the registry.
func (s *Subscriptions) Sorted(kind Kind) []string {
	return slices.Sorted(maps.Keys(s.names[kind]))
}

// All are every subscription's kind and name; with the registry held.
func (s *Subscriptions) All() iter.Seq2[Kind, string] {
	return func(yield func(Kind, string) bool) {
		for kind := range Kinds {
			for name := range s.names[kind] {
				if !yield(kind, name) {
					return
				}
			}
		}
	}
}

// Lock and Unlock hold the registry for writing: to (un)subscribe and
// confirm it.
func (r *Registry[C]) Lock()   { r.mu.Lock() }
func (r *Registry[C]) Unlock() { r.mu.Unlock() }

// RLock and RUnlock hold it for reading: to look at subscriptions that
// must not change meanwhile.
func (r *Registry[C]) RLock()   { r.mu.RLock() }
func (r *Registry[C]) RUnlock() { r.mu.RUnlock() }

// AddLocked subscribes c, whose subscriptions are mine, to name; with the
// registry held for writing.
func (r *Registry[C]) AddLocked(c C, mine *Subscriptions, kind Kind, name []byte) {
	names := &mine.names[kind]
	if _, ok := (*names)[string(name)]; ok {
		return
	}
	if *names == nil {
		*names = make(map[string]struct{})
	}
	key := string(name)
	(*names)[key] = struct{}{}
	if r.subs[kind] == nil {
		r.subs[kind] = make(map[string]*subscribers[C])
	}
	set := r.subs[kind][key]
	if set == nil {
		set = &subscribers[C]{name: []byte(key), conns: make(map[C]struct{})}
		r.subs[kind][key] = set
	}
	set.conns[c] = struct{}{}
	if mine.Total() == 0 {
		r.clients++
	}
	mine.counts[kind].Add(1)
}

// RemoveLocked unsubscribes c, whose subscriptions are mine, from name;
// with the registry held for writing.
func (r *Registry[C]) RemoveLocked(c C, mine *Subscriptions, kind Kind, name string) {
	names := mine.names[kind]
	if _, ok := names[name]; !ok {
		return
	}
	delete(names, name)
	if set := r.subs[kind][name]; set != nil {
		delete(set.conns, c)
		if len(set.conns) == 0 {
			delete(r.subs[kind], name)
		}
	}
	mine.counts[kind].Add(-1)
	if mine.Total() == 0 {
		r.clients--
	}
}

// Leave drops every subscription of c, whose subscriptions are mine: a
// closing connection's.
func (r *Registry[C]) Leave(c C, mine *Subscriptions) {
	if mine.Total() == 0 {
		return
	}
	r.mu.Lock()
	for kind := range Kinds {
		for name := range mine.names[kind] {
			r.RemoveLocked(c, mine, kind, name)
		}
	}
	r.mu.Unlock()
}

// Publish calls deliver, holding the registry for reading, for each
// subscription a message to channel of kind reaches: the channel's
// subscribers (pattern nil), then, for a channel, those of each pattern
// that matches it. A connection subscribed both to the channel and to a
// matching pattern is called twice. It returns how many were called, and
// counts them as delivered.
func (r *Registry[C]) Publish(kind Kind, channel []byte, deliver func(c C, pattern []byte)) (n int64) {
	r.mu.RLock()
	defer func() {
		r.mu.RUnlock()
		r.delivered.Add(n)
	}()
	if set := r.subs[kind][string(channel)]; set != nil {
		for c := range set.conns {
			deliver(c, nil)
			n++
		}
	}
	if kind != Channel || len(r.subs[Pattern]) == 0 {
		return n
	}
	subject := string(channel)
	for _, set := range r.subs[Pattern] {
		if !glob.Match(set.name, subject) {
			continue
		}
		for c := range set.conns {
			deliver(c, set.name)
			n++
		}
	}
	return n
}

// Names are the names of kind with subscribers that match pattern (all
// unless matching), sorted (Redis's order is its hash table's).
func (r *Registry[C]) Names(kind Kind, matching bool, pattern []byte) []string {
	var names []string
	r.mu.RLock()
	for name := range r.subs[kind] {
		if !matching || glob.Match(pattern, name) {
			names = append(names, name)
		}
	}
	r.mu.RUnlock()
	slices.Sort(names)
	return names
}

// NumSub is how many connections subscribe to each of names, of kind.
func (r *Registry[C]) NumSub(kind Kind, names [][]byte) []int64 {
	counts := make([]int64, len(names))
	r.mu.RLock()
	for i, name := range names {
		if set := r.subs[kind][string(name)]; set != nil {
			counts[i] = int64(len(set.conns))
		}
	}
	r.mu.RUnlock()
	return counts
}

// Count is how many names of kind have subscribers.
func (r *Registry[C]) Count(kind Kind) int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return len(r.subs[kind])
}

// Clients is how many connections have a subscription.
func (r *Registry[C]) Clients() int {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.clients
}

// Delivered is how many messages were queued for subscribers.
func (r *Registry[C]) Delivered() int64 { return r.delivered.Load() }
