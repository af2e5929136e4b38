// Package tracking is the state of server-assisted client-side caching
// (CLIENT TRACKING), with Redis 7's semantics: the table of the keys each
// tracking client read (default mode), told once one of them may read
// differently; the BCAST prefixes, whose clients are told of every change
// of a key under them, gathered per command (a batch); and each
// connection's Tracker. The server wires it: it parses CLIENT TRACKING,
// feeds the store's changes (Table.Changed) and the commands' keys
// (Table.Before), and delivers the messages on its connections (Client).
//
// The store's listener reports every change as it happens, under the
// key's shard lock, so an invalidation is queued on the reader's
// connection (its outbox, never I/O) before the writing call returns, and
// so before the writer is answered. A tracking connection is in push mode
// for as long as tracking is on, so that pushes never land inside a reply.
//
// One race has no counterpart in single-threaded Redis: a client reads a
// key, another writes it before the reader's reply is queued, and the
// invalidation would then reach the reader before the reply holding the
// value it invalidates, which the reader would cache for good. A command's
// keys are therefore registered before it runs (a read after the write
// sees the new value) and stay "in flight" until its reply is queued: an
// invalidation of an in-flight key, or a flush while replies are pending,
// waits on the connection and is queued right after the replies
// (Table.Release). That also gives Redis 7.2's order for a client's own
// changes: after its reply.
//
// Lock order: LOCKS.md, at the repository root.
package tracking

import (
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/resp"
)

// DefaultMaxKeys is Redis's tracking-table-max-keys default.
const DefaultMaxKeys = 1_000_000

// invalidateChannel is where a RESP2 redirect target, a subscriber, gets
// its invalidations, as a message on this channel.
const invalidateChannel = "__redis__:invalidate"

// Why an invalidation was sent: the label of
// stampedeless_tracking_invalidations_total.
const (
	invWrite     = iota // a write, DEL, a fill or refresh that stored a value
	invExpired          // the key expired
	invEvicted          // the eviction policy removed it
	invFlush            // FLUSHALL or FLUSHDB (one null per client)
	invReplica          // another replica wrote it (--redis)
	invTableFull        // dropped from a full tracking table
	// Reasons is the number of reasons.
	Reasons
)

// ReasonNames are the reasons' labels, by reason.
var ReasonNames = [Reasons]string{"write", "expired", "evicted", "flush", "replica", "table_full"}

// Client is a connection as the table knows it. The server gives the same
// value for a connection every time: the table compares them.
type Client interface {
	// ID is the connection's id, which REDIRECT names.
	ID() int64
	// Tracker is the connection's tracking state.
	Tracker() *Tracker
	// Gone reports whether the connection has closed.
	Gone() bool
	// Protocol is the connection's RESP version, 2 or 3.
	Protocol() int
	// Subscribed reports whether the connection has a subscription.
	Subscribed() bool
	// Push queues a push message in the connection's outbox, in line with
	// its replies; PushOut, one that another connection's invalidations
	// bring. Each reports whether it was queued.
	Push(fn func(w *resp.Writer)) bool
	PushOut(fn func(w *resp.Writer)) bool
}

// Table is the server's tracking state: the table of keys tracking
// clients read, the BCAST prefixes, and the clients with tracking on. Its
// zero value is not ready: Init it.
type Table struct {
	// listen is told +1 when the first client turns tracking on and -1
	// when the last turns it off: while any does, the store's changes are
	// to be fed to Changed.
	listen func(delta int)
	// sent counts an invalidation sent, by reason.
	sent func(reason int)

	// active is len(clients), for the listener's quick way out.
	active atomic.Int64
	// noloop is how many clients track with NOLOOP; while there are any,
	// every write command registers its keys in writers.
	noloop atomic.Int64
	// maxKeys is tracking-table-max-keys; 0: no bound.
	maxKeys atomic.Int64
	// bcasting is len(prefixes): while there are any, every keyspace
	// command registers its keys in pending.
	bcasting atomic.Int64

	mu sync.Mutex
	// clients are the connections with tracking on, by id. The table holds
	// ids, as Redis's does: a client that turns tracking off or closes
	// leaves its ids behind, skipped and dropped with their key.
	clients map[int64]Client
	// keys maps a key to the clients that may cache it (default mode);
	// items is how many ids it holds in all.
	keys  map[string][]int64
	items int
	// prefixes maps a BCAST prefix to the clients tracking it.
	prefixes map[string]map[Client]struct{}
	// writers counts, for each key, the write commands running now that
	// name it, while any client uses NOLOOP: a change is a NOLOOP client's
	// own only when its command is the one writer of the key.
	writers map[string]int
	// pending maps a key to the batches of the commands running now that
	// name it, while there are BCAST prefixes: a change of the key under a
	// prefix waits in the last of them until its command has run.
	pending map[string][]*bcastBatch
	// exclusive is the batch of the transaction or script holding the
	// section exclusively, where a change no command names waits (the
	// pops of the clients EXEC serves).
	exclusive *bcastBatch
}

// Tracker is one connection's tracking state. Its fields are guarded by
// mu, since the listener reads them from any goroutine, except tracked,
// Caching and batch, which the connection's loop (or continuation) alone
// uses.
type Tracker struct {
	mu sync.Mutex
	on bool
	// The modes of CLIENT TRACKING ON; broken: the redirect target closed.
	bcast, optin, optout, noloop, broken bool
	// redirect is the id invalidations go to (0: this connection), and
	// redirTo that connection.
	redirect int64
	redirTo  Client
	prefixes []string // BCAST, sorted
	// busy: the connection has run a command whose reply is not yet
	// queued in its outbox; inflight are those commands' keys. deferred
	// are invalidations held until those replies are queued.
	busy     bool
	inflight []string
	deferred []invalidation
	// writing are the keys of the write command running now, with NOLOOP;
	// scriptWriting, that a script of the connection's runs it.
	writing       []string
	scriptWriting bool

	// tracked is the loop's copy of on.
	tracked bool
	// Caching: CLIENT CACHING was given for the next command (or the next
	// transaction).
	Caching bool
	// batch collects the BCAST invalidations of the connection's command,
	// transaction or script running now (bcastBatch), nil between them.
	batch *bcastBatch
}

// Tracked reports whether tracking is on; only the connection's loop (or
// continuation) asks.
func (t *Tracker) Tracked() bool { return t.tracked }

// invalidation is one message to send: keys, or every key (all).
type invalidation struct {
	keys []invKey
	all  bool
}

// invKey is a key an invalidation names, and why.
type invKey struct {
	key    string
	reason uint8
}

// oneKey is the invalidation of one key.
func oneKey(key string, reason uint8) invalidation {
	return invalidation{keys: []invKey{{key, reason}}}
}

// bcastBatch collects the keys one command (a transaction, a script: what
// holds the section exclusively) changes under BCAST prefixes, sent once
// it has run: one message per prefix with its keys sorted and each once,
// as Redis 7.0 sends what it changed in an event loop iteration, from
// beforeSleep (trackingBroadcastInvalidationMessages). An MSET of three
// keys is then one message, as a client reading them in order expects.
type bcastBatch struct {
	owner Client
	// byPrefix maps a prefix to its changed keys; guarded by Table.mu.
	byPrefix map[string]map[string]batchedKey
}

// batchedKey is a key's last change in a batch: why, and whether the
// batch's owner was its one writer (NOLOOP: not sent to the owner).
type batchedKey struct {
	reason uint8
	own    bool
}

// Init readies tr: listen is told when the store's changes start and stop
// mattering to it (+1, -1), sent of each key (or flush) invalidated, by
// reason.
func (tr *Table) Init(listen func(delta int), sent func(reason int)) {
	tr.listen, tr.sent = listen, sent
	tr.clients = make(map[int64]Client)
	tr.keys = make(map[string][]int64)
	tr.prefixes = make(map[string]map[Client]struct{})
	tr.writers = make(map[string]int)
	tr.pending = make(map[string][]*bcastBatch)
	tr.maxKeys.Store(DefaultMaxKeys)
}

// MaxKeys is tracking-table-max-keys.
func (tr *Table) MaxKeys() int64 { return tr.maxKeys.Load() }

// SetMaxKeys sets tracking-table-max-keys, and drops keys from the table
// until it fits.
func (tr *Table) SetMaxKeys(n int64) {
	tr.maxKeys.Store(n)
	tr.remember(0, nil)
}

// Concerns reports whether the commands of the connection with t must be
// told to the table (Before): it tracks, or NOLOOP or BCAST clients exist.
func (tr *Table) Concerns(t *Tracker) bool {
	return t.tracked || tr.noloop.Load() > 0 || tr.bcasting.Load() > 0
}

// Options are CLIENT TRACKING ON's options.
type Options struct {
	RedirTo                      Client
	BCAST, OptIn, OptOut, NoLoop bool
	Prefixes                     [][]byte
}

// Enable turns tracking on for c, or changes its modes, as Redis's
// enableTracking: BCAST prefixes add to those c has. c's event loop (or
// its continuation) calls it; c must be in push mode.
func (tr *Table) Enable(c Client, o Options) {
	t := c.Tracker()
	defer tr.lock(t)()
	if !t.on {
		tr.clients[c.ID()] = c
		if tr.active.Add(1) == 1 {
			tr.listen(1)
		}
	}
	if t.noloop != o.NoLoop {
		tr.noloop.Add(map[bool]int64{true: 1, false: -1}[o.NoLoop])
	}
	t.tracked = true
	t.on, t.broken = true, false
	t.bcast, t.optin, t.optout, t.noloop = o.BCAST, o.OptIn, o.OptOut, o.NoLoop
	t.redirTo, t.redirect = o.RedirTo, 0
	if o.RedirTo != nil {
		t.redirect = o.RedirTo.ID()
	}
	if !o.BCAST {
		return
	}
	if len(o.Prefixes) == 0 {
		o.Prefixes = [][]byte{nil}
	}
	for _, p := range o.Prefixes {
		if _, ok := slices.BinarySearch(t.prefixes, string(p)); ok {
			continue
		}
		set := tr.prefixes[string(p)]
		if set == nil {
			set = make(map[Client]struct{})
			tr.prefixes[string(p)] = set
			tr.bcasting.Add(1)
		}
		set[c] = struct{}{}
		i, _ := slices.BinarySearch(t.prefixes, string(p))
		t.prefixes = slices.Insert(t.prefixes, i, string(p))
	}
}

// Disable turns tracking off for c; c's goroutine calls it, as it calls
// Enable. Its ids stay in the table, to be skipped (disableTracking in
// Redis). What it held back is dropped: the caller has queued it first if
// it is to be sent.
func (tr *Table) Disable(c Client) {
	t := c.Tracker()
	defer tr.lock(t)()
	if !t.on {
		return
	}
	for _, p := range t.prefixes {
		if set := tr.prefixes[p]; set != nil {
			delete(set, c)
			if len(set) == 0 {
				delete(tr.prefixes, p)
				tr.bcasting.Add(-1)
			}
		}
	}
	if t.noloop {
		tr.noloop.Add(-1)
	}
	delete(tr.clients, c.ID())
	if tr.active.Add(-1) == 0 {
		tr.listen(-1)
		// Unwatched, the table would go stale: writes and flushes no
		// longer reach it. Redis keeps it to the next write of each key,
		// or flush; either would find no client tracking.
		clear(tr.keys)
		tr.items = 0
	}
	t.on, t.bcast, t.optin, t.optout, t.noloop, t.broken = false, false, false, false, false, false
	t.redirect, t.redirTo, t.prefixes = 0, nil, nil
	t.busy, t.inflight, t.deferred, t.writing = false, nil, nil, nil
	t.Caching = false
	t.tracked = false
}

// lock takes mu and t.mu, in the lock order, and returns their unlock.
func (tr *Table) lock(t *Tracker) (unlock func()) {
	tr.mu.Lock()
	t.mu.Lock()
	return func() {
		t.mu.Unlock()
		tr.mu.Unlock()
	}
}

// Before is called before a command runs on c, holding the store's atomic
// section, when Concerns says so, with the command's keys; alsoRead are
// keys put in flight and remembered with them if the command reads
// (reads: it is one whose keys a tracking client may cache); write says
// it is a write command, script that a script of c's runs it. It puts the
// keys in flight for c, remembers those it reads, and with NOLOOP clients
// registers a write's keys as written by c. The returned func is called
// once the command has run.
func (tr *Table) Before(c Client, keys, alsoRead [][]byte, reads, write, script bool) (after func()) {
	if len(alsoRead) > 0 && reads {
		keys = append(slices.Clip(keys), alsoRead...)
	}
	t := c.Tracker()
	var names, writing []string
	noloop := tr.noloop.Load() > 0 && write
	batch, owned := t.batch, false
	if batch == nil && len(keys) > 0 && tr.bcasting.Load() > 0 {
		batch, owned = &bcastBatch{owner: c}, true
		t.batch = batch
	}
	if len(keys) > 0 && (noloop || batch != nil) {
		names = make([]string, len(keys))
		tr.mu.Lock()
		for i, k := range keys {
			names[i] = string(k)
			if noloop {
				tr.writers[names[i]]++
			}
			if batch != nil {
				tr.pending[names[i]] = append(tr.pending[names[i]], batch)
			}
		}
		tr.mu.Unlock()
		if noloop {
			writing = names
		}
	}
	remember := false
	if t.tracked {
		t.mu.Lock()
		t.busy = true
		for _, k := range keys {
			t.inflight = append(t.inflight, string(k))
		}
		t.writing, t.scriptWriting = writing, script
		remember = t.on && !t.bcast && reads && !(t.optin && !t.Caching) && !(t.optout && t.Caching)
		t.mu.Unlock()
	}
	if remember && len(keys) > 0 {
		tr.remember(c.ID(), keys)
	}
	if names == nil && !owned {
		return func() {}
	}
	return func() {
		if writing != nil {
			t.mu.Lock()
			t.writing = nil
			t.mu.Unlock()
		}
		tr.mu.Lock()
		for _, k := range writing {
			if tr.writers[k]--; tr.writers[k] <= 0 {
				delete(tr.writers, k)
			}
		}
		if batch != nil {
			for _, k := range names {
				tr.unpendLocked(k, batch)
			}
		}
		tr.mu.Unlock()
		if owned {
			t.batch = nil
			tr.broadcast(batch)
		}
	}
}

// BatchFor makes what c runs until end is called one batch of BCAST
// invalidations, sent by end: EXEC's commands, a script's calls. c holds
// the section exclusively. Inside another batch (a script in EXEC) it adds
// to that one.
func (tr *Table) BatchFor(c Client) (end func()) {
	t := c.Tracker()
	if t.batch != nil || tr.bcasting.Load() == 0 {
		return func() {}
	}
	b := &bcastBatch{owner: c}
	t.batch = b
	tr.mu.Lock()
	tr.exclusive = b
	tr.mu.Unlock()
	return func() {
		t.batch = nil
		tr.mu.Lock()
		tr.exclusive = nil
		tr.mu.Unlock()
		tr.broadcast(b)
	}
}

// unpendLocked removes one registration of b for key from pending. The
// caller holds mu.
func (tr *Table) unpendLocked(key string, b *bcastBatch) {
	bs := tr.pending[key]
	i := slices.Index(bs, b)
	if i < 0 {
		return
	}
	if bs = slices.Delete(bs, i, i+1); len(bs) == 0 {
		delete(tr.pending, key)
		return
	}
	tr.pending[key] = bs
}

// broadcast sends b's keys to the BCAST clients of their prefixes: a
// message per prefix, in the prefixes' order, as Redis walks its prefix
// table. A NOLOOP owner is not told of its own changes, and gets no
// message if they were all its own.
func (tr *Table) broadcast(b *bcastBatch) {
	type message struct {
		clients []Client
		keys    []invKey
		own     []bool
	}
	tr.mu.Lock()
	if len(b.byPrefix) == 0 {
		tr.mu.Unlock()
		return
	}
	msgs := make([]message, 0, len(b.byPrefix))
	for _, p := range slices.Sorted(maps.Keys(b.byPrefix)) {
		set := tr.prefixes[p]
		if len(set) == 0 {
			continue
		}
		var m message
		for c := range set {
			m.clients = append(m.clients, c)
		}
		changed := b.byPrefix[p]
		for _, k := range slices.Sorted(maps.Keys(changed)) {
			m.keys = append(m.keys, invKey{key: k, reason: changed[k].reason})
			m.own = append(m.own, changed[k].own)
		}
		msgs = append(msgs, m)
	}
	b.byPrefix = nil
	tr.mu.Unlock()
	for _, m := range msgs {
		for _, c := range m.clients {
			keys := m.keys
			if c == b.owner && slices.Contains(m.own, true) && c.Tracker().noloopOn() {
				keys = nil
				for i, k := range m.keys {
					if !m.own[i] {
						keys = append(keys, k)
					}
				}
			}
			if len(keys) > 0 {
				tr.invalidate(c, invalidation{keys: keys}, true, false)
			}
		}
	}
}

// noloopOn reports whether t tracks with NOLOOP.
func (t *Tracker) noloopOn() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.noloop
}

// writesOwn reports whether t's connection runs a write command naming
// key now (NOLOOP clients exist), not from a script: Redis 7.0 records a
// script's BCAST changes as its Lua client's, which no NOLOOP leaves out.
// The caller holds Table.mu.
func (t *Tracker) writesOwn(key string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.scriptWriting && slices.Contains(t.writing, key)
}

// remember records that client id may cache keys, and makes room in a
// full table by invalidating other keys for their readers, as Redis's
// trackingLimitUsedSlots does.
func (tr *Table) remember(id int64, keys [][]byte) {
	type drop struct {
		key     string
		readers []Client
	}
	var drops []drop
	tr.mu.Lock()
	for _, k := range keys {
		ids := tr.keys[string(k)]
		if !slices.Contains(ids, id) {
			tr.keys[string(k)] = append(ids, id)
			tr.items++
		}
	}
	if limit := tr.maxKeys.Load(); limit > 0 {
		for k := range tr.keys { // Go's map order is random enough
			if int64(len(tr.keys)) <= limit {
				break
			}
			d := drop{key: k}
			tr.takeReadersLocked(k, &d.readers)
			drops = append(drops, d)
		}
	}
	tr.mu.Unlock()
	for _, d := range drops {
		for _, c := range d.readers {
			tr.invalidate(c, oneKey(d.key, invTableFull), false, true)
		}
	}
}

// takeReadersLocked removes key from the table and appends to into its
// readers that still track. The caller holds mu.
func (tr *Table) takeReadersLocked(key string, into *[]Client) {
	ids, ok := tr.keys[key]
	if !ok {
		return
	}
	delete(tr.keys, key)
	tr.items -= len(ids)
	for _, id := range ids {
		if c := tr.clients[id]; c != nil {
			*into = append(*into, c)
		}
	}
}

// Changed is the store's listener's part for tracking: it invalidates the
// key for the clients that may cache it and for the BCAST clients whose
// prefix it has, and drops it from the table, as Redis's
// trackingInvalidateKey does. It runs under the key's shard lock and does
// no I/O: messages are queued in outboxes.
func (tr *Table) Changed(ch engine.Change) {
	if tr.active.Load() == 0 {
		return
	}
	var reason uint8
	switch ch.Kind {
	case engine.Flushed:
		tr.flushed()
		return
	case engine.Swapped:
		// Redis 7.0's SWAPDB invalidates nothing: the table knows keys
		// by name, not by database.
		return
	case engine.Expired:
		reason = invExpired
	case engine.Evicted:
		reason = invEvicted
	case engine.Invalidated:
		reason = invReplica
	default:
		reason = invWrite
	}
	var bcast, readers []Client
	key := string(ch.Key)
	tr.mu.Lock()
	// A change another replica made, or the store made, is no client's own.
	soleWriter := tr.writers[key] == 1 && (reason == invWrite)
	batch := tr.exclusive
	if bs := tr.pending[key]; len(bs) > 0 {
		batch = bs[len(bs)-1]
	}
	for p, set := range tr.prefixes {
		if !strings.HasPrefix(key, p) {
			continue
		}
		if batch == nil {
			for c := range set {
				bcast = append(bcast, c)
			}
			continue
		}
		if batch.byPrefix == nil {
			batch.byPrefix = make(map[string]map[string]batchedKey)
		}
		if batch.byPrefix[p] == nil {
			batch.byPrefix[p] = make(map[string]batchedKey)
		}
		batch.byPrefix[p][key] = batchedKey{reason: reason, own: soleWriter && batch.owner.Tracker().writesOwn(key)}
	}
	tr.takeReadersLocked(key, &readers)
	tr.mu.Unlock()
	inv := oneKey(key, reason)
	for _, c := range bcast {
		tr.invalidate(c, inv, true, soleWriter)
	}
	for _, c := range readers {
		tr.invalidate(c, inv, false, soleWriter)
	}
}

// flushed sends every tracking client a null invalidation (all its keys)
// and empties the table, as Redis's trackingInvalidateKeysOnFlush.
func (tr *Table) flushed() {
	tr.mu.Lock()
	clients := make([]Client, 0, len(tr.clients))
	for _, c := range tr.clients {
		clients = append(clients, c)
	}
	clear(tr.keys)
	tr.items = 0
	tr.mu.Unlock()
	for _, c := range clients {
		tr.invalidate(c, invalidation{all: true}, false, false)
	}
}

// invalidate sends inv to c, or to its redirect target, or holds it back
// while c has the key in flight. bcast says whether it comes from a BCAST
// prefix or from the table; mine, whether c's own command may be the key's
// one writer (for NOLOOP).
func (tr *Table) invalidate(c Client, inv invalidation, bcast, mine bool) {
	t := c.Tracker()
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.on || t.bcast != bcast && !inv.all {
		return
	}
	if t.noloop && mine && len(inv.keys) == 1 && slices.Contains(t.writing, inv.keys[0].key) {
		return
	}
	// Held back while c's command runs: its own keys, whose invalidation
	// Redis sends after the reply, and evictions. A write here evicts for
	// its own size as it runs, where Redis lets it pass the bound and
	// evicts before the next command, whose reply follows the message: held
	// back, the message comes between the two replies as there.
	if t.busy && (inv.all || slices.ContainsFunc(inv.keys, func(k invKey) bool {
		return k.reason == invEvicted || slices.Contains(t.inflight, k.key)
	})) {
		t.deferred = append(t.deferred, inv)
		return
	}
	tr.sendLocked(c, inv)
}

// sendLocked queues inv for c's client, as Redis's sendTrackingMessage: a
// RESP3 push on c, or on its redirect target, which in RESP2 gets it as a
// message on __redis__:invalidate if it is a subscriber; nothing for a
// RESP2 connection without a redirect. The caller holds c's Tracker's mu.
func (tr *Table) sendLocked(c Client, inv invalidation) {
	t := c.Tracker()
	target := c
	if t.redirect != 0 {
		if r := t.redirTo; r == nil || r.Gone() {
			t.broken = true
			if c.Protocol() == 3 {
				id := t.redirect
				c.Push(func(w *resp.Writer) {
					w.Push(2)
					w.BulkString("tracking-redir-broken")
					w.Int(id)
				})
			}
			return
		}
		target = t.redirTo
	}
	if target.Protocol() != 3 && (target == c || !target.Subscribed()) {
		return
	}
	push := target.Push
	if target != c {
		push = target.PushOut // a RESP3 target need not subscribe
	}
	if !push(func(w *resp.Writer) { writeInvalidation(w, inv) }) {
		return
	}
	if inv.all {
		tr.sent(invFlush)
	}
	for _, k := range inv.keys {
		tr.sent(int(k.reason))
	}
}

// writeInvalidation writes one invalidation message in w's protocol.
func writeInvalidation(w *resp.Writer, inv invalidation) {
	if w.Protocol() == 3 {
		w.Push(2)
		w.BulkString("invalidate")
	} else {
		w.Push(3)
		w.BulkString("message")
		w.BulkString(invalidateChannel)
	}
	if inv.all {
		w.Null()
		return
	}
	w.Array(len(inv.keys))
	for _, k := range inv.keys {
		w.BulkString(k.key)
	}
}

// Release queues what c held back, now that the replies of the commands
// that had its keys in flight are queued: called by c's goroutine after
// each write into c's outbox.
func (tr *Table) Release(c Client) {
	t := c.Tracker()
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.busy {
		return
	}
	t.busy = false
	t.inflight = t.inflight[:0]
	deferred := t.deferred
	t.deferred = nil
	for _, inv := range deferred {
		if t.on {
			tr.sendLocked(c, inv)
		}
	}
}

// Stats are INFO's tracking fields: the clients with tracking on, the
// keys in the table and the client ids over all of them, and the BCAST
// prefixes.
func (tr *Table) Stats() (clients, keys, items, prefixes int) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return len(tr.clients), len(tr.keys), tr.items, len(tr.prefixes)
}
