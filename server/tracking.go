package server

import (
	"bytes"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/resp"
)

// Server-assisted client-side caching (CLIENT TRACKING), with Redis 7's
// semantics: in the default mode the server remembers which keys each
// tracking client read and tells it once one of them may read differently;
// in BCAST mode it tells every change of a key under the client's prefixes,
// gathered per command (bcastBatch).
//
// The store's listener (engine.Listener) reports every change as it
// happens, under the key's shard lock, so an invalidation is queued on the
// reader's connection (its outbox, never I/O) before the writing call
// returns, and so before the writer is answered. A tracking connection is
// in push mode for as long as tracking is on, so that pushes never land
// inside a reply.
//
// One race has no counterpart in single-threaded Redis: a client reads a
// key, another writes it before the reader's reply is queued, and the
// invalidation would then reach the reader before the reply holding the
// value it invalidates, which the reader would cache for good. A command's
// keys are therefore registered before it runs (a read after the write
// sees the new value) and stay "in flight" until its reply is queued: an
// invalidation of an in-flight key, or a flush while replies are pending,
// waits on the connection and is queued right after the replies. That also
// gives Redis 7.2's order for a client's own changes: after its reply.
//
// Lock order: LOCKS.md, at the repository root.

// invalidateChannel is where a RESP2 redirect target, a subscriber, gets
// its invalidations, as a message on this channel.
const invalidateChannel = "__redis__:invalidate"

// DefaultTrackingTableMaxKeys is Redis's tracking-table-max-keys default.
const DefaultTrackingTableMaxKeys = 1_000_000

// Why an invalidation was sent: the label of
// stampedeless_tracking_invalidations_total.
const (
	invWrite     = iota // a write, DEL, a fill or refresh that stored a value
	invExpired          // the key expired
	invEvicted          // the eviction policy removed it
	invFlush            // FLUSHALL or FLUSHDB (one null per client)
	invReplica          // another replica wrote it (--redis)
	invTableFull        // dropped from a full tracking table
	invReasons
)

var invReasonNames = [invReasons]string{"write", "expired", "evicted", "flush", "replica", "table_full"}

// tracking is the server's tracking state: the table of keys tracking
// clients read, the BCAST prefixes, and the clients with tracking on.
type tracking struct {
	srv *Server

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
	clients map[int64]*Conn
	// keys maps a key to the clients that may cache it (default mode);
	// items is how many ids it holds in all.
	keys  map[string][]int64
	items int
	// prefixes maps a BCAST prefix to the clients tracking it.
	prefixes map[string]map[*Conn]struct{}
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

	sent [invReasons]prometheus.Counter
}

// tracker is one connection's tracking state. Its fields are guarded by mu,
// since the listener reads them from any goroutine, except caching, which
// the connection's loop (or continuation) alone uses.
type tracker struct {
	mu sync.Mutex
	on bool
	// The modes of CLIENT TRACKING ON; broken: the redirect target closed.
	bcast, optin, optout, noloop, broken bool
	// redirect is the id invalidations go to (0: this connection), and
	// redirTo that connection.
	redirect int64
	redirTo  *Conn
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

	// caching: CLIENT CACHING was given for the next command (or the next
	// transaction).
	caching bool
	// batch collects the BCAST invalidations of the connection's command,
	// transaction or script running now (bcastBatch), nil between them;
	// only the goroutine running the connection's commands uses it.
	batch *bcastBatch
}

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
	owner *Conn
	// byPrefix maps a prefix to its changed keys; guarded by tracking.mu.
	byPrefix map[string]map[string]batchedKey
}

// batchedKey is a key's last change in a batch: why, and whether the
// batch's owner was its one writer (NOLOOP: not sent to the owner).
type batchedKey struct {
	reason uint8
	own    bool
}

func (tr *tracking) init(s *Server) {
	tr.srv = s
	tr.clients = make(map[int64]*Conn)
	tr.keys = make(map[string][]int64)
	tr.prefixes = make(map[string]map[*Conn]struct{})
	tr.writers = make(map[string]int)
	tr.pending = make(map[string][]*bcastBatch)
	tr.maxKeys.Store(DefaultTrackingTableMaxKeys)
	for i, name := range invReasonNames {
		tr.sent[i] = s.metrics.TrackingInvalidations.WithLabelValues(name)
	}
}

// trackOptions are CLIENT TRACKING ON's options.
type trackOptions struct {
	redirTo                      *Conn
	bcast, optin, optout, noloop bool
	prefixes                     [][]byte
}

// enable turns tracking on for c, or changes its modes, as Redis's
// enableTracking: BCAST prefixes add to those c has. c's event loop (or
// its continuation) calls it; c must be in push mode.
func (tr *tracking) enable(c *Conn, o trackOptions) {
	t := &c.track
	defer tr.lock(t)()
	if !t.on {
		tr.clients[c.id] = c
		if tr.active.Add(1) == 1 {
			tr.srv.consumeChanges(1)
		}
	}
	if t.noloop != o.noloop {
		tr.noloop.Add(map[bool]int64{true: 1, false: -1}[o.noloop])
	}
	c.tracked = true
	t.on, t.broken = true, false
	t.bcast, t.optin, t.optout, t.noloop = o.bcast, o.optin, o.optout, o.noloop
	t.redirTo, t.redirect = o.redirTo, 0
	if o.redirTo != nil {
		t.redirect = o.redirTo.id
	}
	if !o.bcast {
		return
	}
	if len(o.prefixes) == 0 {
		o.prefixes = [][]byte{nil}
	}
	for _, p := range o.prefixes {
		if _, ok := slices.BinarySearch(t.prefixes, string(p)); ok {
			continue
		}
		set := tr.prefixes[string(p)]
		if set == nil {
			set = make(map[*Conn]struct{})
			tr.prefixes[string(p)] = set
			tr.bcasting.Add(1)
		}
		set[c] = struct{}{}
		i, _ := slices.BinarySearch(t.prefixes, string(p))
		t.prefixes = slices.Insert(t.prefixes, i, string(p))
	}
}

// disable turns tracking off for c; c's goroutine calls it, as it calls
// enable. Its ids stay in the table, to be skipped (disableTracking in
// Redis). What it held back is dropped: the caller has queued it first if
// it is to be sent.
func (tr *tracking) disable(c *Conn) {
	t := &c.track
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
	delete(tr.clients, c.id)
	if tr.active.Add(-1) == 0 {
		tr.srv.consumeChanges(-1)
		// Unwatched, the table would go stale: writes and flushes no
		// longer reach it. Redis keeps it to the next write of each key,
		// or flush; either would find no client tracking.
		clear(tr.keys)
		tr.items = 0
	}
	t.on, t.bcast, t.optin, t.optout, t.noloop, t.broken = false, false, false, false, false, false
	t.redirect, t.redirTo, t.prefixes = 0, nil, nil
	t.busy, t.inflight, t.deferred, t.writing = false, nil, nil, nil
	t.caching = false
	c.tracked = false
}

// lock takes mu and t.mu, in the lock order, and returns their unlock.
func (tr *tracking) lock(t *tracker) (unlock func()) {
	tr.mu.Lock()
	t.mu.Lock()
	return func() {
		t.mu.Unlock()
		tr.mu.Unlock()
	}
}

// prefixOverlap is Redis's error for BCAST prefixes that overlap with one
// another or with those c has, or "".
func (t *tracker) prefixOverlap(prefixes [][]byte) string {
	overlap := func(a, b []byte) bool { return bytes.HasPrefix(a, b) || bytes.HasPrefix(b, a) }
	t.mu.Lock()
	mine := slices.Clone(t.prefixes)
	t.mu.Unlock()
	for i, p := range prefixes {
		for _, m := range mine {
			if overlap([]byte(m), p) {
				return "ERR Prefix '" + string(p) + "' overlaps with an existing prefix '" + m +
					"'. Prefixes for a single client must not overlap."
			}
		}
		for _, q := range prefixes[i+1:] {
			if overlap(p, q) {
				return "ERR Prefix '" + string(p) + "' overlaps with another provided prefix '" + string(q) +
					"'. Prefixes for a single client must not overlap."
			}
		}
	}
	return ""
}

// tracksReads reports whether cmd's keys are remembered for a client that
// tracks them: Redis's readonly commands (not pub/sub's), and GETFILL and
// FILL.LEASE, which write only to read through and answer the key's value.
func (cmd *command) tracksReads() bool {
	return cmd.Flags&commands.Readonly != 0 && cmd.Flags&commands.PubSub == 0 || cmd.Flags&commands.TrackRead != 0
}

// beforeCommand is called before cmd runs on c, holding the store's atomic
// section, when c tracks or NOLOOP clients exist. It puts cmd's keys in
// flight for c, remembers those it reads, and with NOLOOP clients
// registers a write's keys as written by c. The returned func is called
// once the handler has returned.
func (tr *tracking) beforeCommand(c *Conn, cmd *command, args [][]byte) (after func()) {
	return tr.beforeKeys(c, cmd, cmd.keys(args), nil, false)
}

// beforeScriptCall is beforeCommand for a command a script of c's runs
// (cmd with args; declared, the script's KEYS): the script's reads are
// c's, as are its writes for NOLOOP. A read remembers the keys it reads,
// as Redis 7.2 does, and the first read of the script the declared keys
// too, as Redis 7.0 does (which tracks only those, once the script has
// run a read command): a client of either is told of every key it may
// have cached.
func (tr *tracking) beforeScriptCall(c *Conn, cmd *command, args, declared [][]byte) (after func()) {
	return tr.beforeKeys(c, cmd, cmd.keys(args), declared, true)
}

// beforeKeys is beforeCommand given cmd's keys, and alsoRead, keys put in
// flight and remembered with them if cmd reads; script says a script of
// c's runs cmd.
func (tr *tracking) beforeKeys(c *Conn, cmd *command, keys, alsoRead [][]byte, script bool) (after func()) {
	if len(alsoRead) > 0 && cmd.tracksReads() {
		keys = append(slices.Clip(keys), alsoRead...)
	}
	var names, writing []string
	noloop := tr.noloop.Load() > 0 && cmd.Flags&commands.Write != 0
	batch, owned := c.track.batch, false
	if batch == nil && len(keys) > 0 && tr.bcasting.Load() > 0 {
		batch, owned = &bcastBatch{owner: c}, true
		c.track.batch = batch
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
	if c.tracked {
		t := &c.track
		t.mu.Lock()
		t.busy = true
		for _, k := range keys {
			t.inflight = append(t.inflight, string(k))
		}
		t.writing, t.scriptWriting = writing, script
		remember = t.on && !t.bcast && cmd.tracksReads() && !(t.optin && !t.caching) && !(t.optout && t.caching)
		t.mu.Unlock()
	}
	if remember && len(keys) > 0 {
		tr.remember(c.id, keys)
	}
	if names == nil && !owned {
		return func() {}
	}
	return func() {
		if writing != nil {
			c.track.mu.Lock()
			c.track.writing = nil
			c.track.mu.Unlock()
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
			c.track.batch = nil
			tr.broadcast(batch)
		}
	}
}

// batchFor makes what c runs until end is called one batch of BCAST
// invalidations, sent by end: EXEC's commands, a script's calls. c holds
// the section exclusively. Inside another batch (a script in EXEC) it adds
// to that one.
func (tr *tracking) batchFor(c *Conn) (end func()) {
	if c.track.batch != nil || tr.bcasting.Load() == 0 {
		return func() {}
	}
	b := &bcastBatch{owner: c}
	c.track.batch = b
	tr.mu.Lock()
	tr.exclusive = b
	tr.mu.Unlock()
	return func() {
		c.track.batch = nil
		tr.mu.Lock()
		tr.exclusive = nil
		tr.mu.Unlock()
		tr.broadcast(b)
	}
}

// unpendLocked removes one registration of b for key from pending. The
// caller holds mu.
func (tr *tracking) unpendLocked(key string, b *bcastBatch) {
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
func (tr *tracking) broadcast(b *bcastBatch) {
	type message struct {
		clients []*Conn
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
			if c == b.owner && slices.Contains(m.own, true) && c.track.noloopOn() {
				keys = nil
				for i, k := range m.keys {
					if !m.own[i] {
						keys = append(keys, k)
					}
				}
			}
			if len(keys) > 0 {
				c.invalidate(invalidation{keys: keys}, true, false)
			}
		}
	}
}

// noloopOn reports whether t tracks with NOLOOP.
func (t *tracker) noloopOn() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.noloop
}

// writesOwn reports whether t's connection runs a write command naming
// key now (NOLOOP clients exist), not from a script: Redis 7.0 records a
// script's BCAST changes as its Lua client's, which no NOLOOP leaves out.
// The caller holds tracking.mu.
func (t *tracker) writesOwn(key string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return !t.scriptWriting && slices.Contains(t.writing, key)
}

// remember records that client id may cache keys, and makes room in a
// full table by invalidating other keys for their readers, as Redis's
// trackingLimitUsedSlots does.
func (tr *tracking) remember(id int64, keys [][]byte) {
	type drop struct {
		key     string
		readers []*Conn
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
			c.invalidate(oneKey(d.key, invTableFull), false, true)
		}
	}
}

// trim drops keys from the table until it fits tracking-table-max-keys.
func (tr *tracking) trim() { tr.remember(0, nil) }

// takeReadersLocked removes key from the table and appends to into its
// readers that still track. The caller holds mu.
func (tr *tracking) takeReadersLocked(key string, into *[]*Conn) {
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

// changed is the store's listener's part for tracking: it invalidates the
// key for the clients that may cache it and for the BCAST clients whose
// prefix it has, and drops it from the table, as Redis's
// trackingInvalidateKey does. It runs under the key's shard lock and does
// no I/O: messages are queued in outboxes.
func (tr *tracking) changed(ch engine.Change) {
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
	var bcast, readers []*Conn
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
		batch.byPrefix[p][key] = batchedKey{reason: reason, own: soleWriter && batch.owner.track.writesOwn(key)}
	}
	tr.takeReadersLocked(key, &readers)
	tr.mu.Unlock()
	inv := oneKey(key, reason)
	for _, c := range bcast {
		c.invalidate(inv, true, soleWriter)
	}
	for _, c := range readers {
		c.invalidate(inv, false, soleWriter)
	}
}

// flushed sends every tracking client a null invalidation (all its keys)
// and empties the table, as Redis's trackingInvalidateKeysOnFlush.
func (tr *tracking) flushed() {
	tr.mu.Lock()
	clients := make([]*Conn, 0, len(tr.clients))
	for _, c := range tr.clients {
		clients = append(clients, c)
	}
	clear(tr.keys)
	tr.items = 0
	tr.mu.Unlock()
	for _, c := range clients {
		c.invalidate(invalidation{all: true}, false, false)
	}
}

// invalidate sends inv to c, or to its redirect target, or holds it back
// while c has the key in flight. bcast says whether it comes from a BCAST
// prefix or from the table; mine, whether c's own command may be the key's
// one writer (for NOLOOP).
func (c *Conn) invalidate(inv invalidation, bcast, mine bool) {
	t := &c.track
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.on || t.bcast != bcast && !inv.all {
		return
	}
	if t.noloop && mine && len(inv.keys) == 1 && slices.Contains(t.writing, inv.keys[0].key) {
		return
	}
	if t.busy && (inv.all || slices.ContainsFunc(inv.keys, func(k invKey) bool { return slices.Contains(t.inflight, k.key) })) {
		t.deferred = append(t.deferred, inv)
		return
	}
	c.sendLocked(inv)
}

// sendLocked queues inv for c's client, as Redis's sendTrackingMessage: a
// RESP3 push on c, or on its redirect target, which in RESP2 gets it as a
// message on __redis__:invalidate if it is a subscriber; nothing for a
// RESP2 connection without a redirect. The caller holds c.track.mu.
func (c *Conn) sendLocked(inv invalidation) {
	t := &c.track
	target := c
	if t.redirect != 0 {
		if r := t.redirTo; r == nil || r.gone.Load() {
			t.broken = true
			if c.w.Protocol() == 3 {
				id := t.redirect
				c.push(func(w *resp.Writer) {
					w.Push(2)
					w.BulkString("tracking-redir-broken")
					w.Int(id)
				})
			}
			return
		}
		target = t.redirTo
	}
	if target.w.Protocol() != 3 && (target == c || target.subs.total() == 0) {
		return
	}
	push := target.push
	if target != c {
		push = target.pushOut // a RESP3 target need not subscribe
	}
	if !push(func(w *resp.Writer) { writeInvalidation(w, inv) }) {
		return
	}
	if inv.all {
		c.srv.tracking.sent[invFlush].Inc()
	}
	for _, k := range inv.keys {
		c.srv.tracking.sent[k.reason].Inc()
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

// releaseTracked queues what c held back, now that the replies of the
// commands that had its keys in flight are queued: called by c's goroutine
// after each write into c's outbox.
func (c *Conn) releaseTracked() {
	t := &c.track
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
			c.sendLocked(inv)
		}
	}
}

// stats are INFO's tracking fields.
func (tr *tracking) stats() (clients, keys, items, prefixes int) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return len(tr.clients), len(tr.keys), tr.items, len(tr.prefixes)
}

// registerTrackingMetrics exports the tracking table's size.
func (s *Server) registerTrackingMetrics() {
	tr := &s.tracking
	gauge := func(name, help string, field func(clients, keys, items, prefixes int) int) {
		s.metrics.Gauge(name, help, func() float64 { return float64(field(tr.stats())) })
	}
	gauge("tracking_clients", "Connections with CLIENT TRACKING on (INFO tracking_clients).",
		func(clients, _, _, _ int) int { return clients })
	gauge("tracking_keys", "Keys in the tracking table: read by a client that may cache them (INFO tracking_total_keys).",
		func(_, keys, _, _ int) int { return keys })
	gauge("tracking_items", "Client ids in the tracking table, over all keys (INFO tracking_total_items).",
		func(_, _, items, _ int) int { return items })
	gauge("tracking_prefixes", "BCAST prefixes tracked (INFO tracking_total_prefixes).",
		func(_, _, _, prefixes int) int { return prefixes })
}

// trackInfo is what CLIENT TRACKINGINFO, GETREDIR and LIST show of a
// connection's tracking.
type trackInfo struct {
	on, bcast, optin, optout, noloop, broken bool
	redirect                                 int64
	prefixes                                 []string
}

func (t *tracker) info() trackInfo {
	t.mu.Lock()
	defer t.mu.Unlock()
	return trackInfo{on: t.on, bcast: t.bcast, optin: t.optin, optout: t.optout, noloop: t.noloop,
		broken: t.broken, redirect: t.redirect, prefixes: slices.Clone(t.prefixes)}
}

// cmdClientTracking implements CLIENT TRACKING ON|OFF [REDIRECT id]
// [PREFIX prefix ...] [BCAST] [OPTIN] [OPTOUT] [NOLOOP] with Redis 7's
// checks and errors, in its order: the options first (OFF checks them
// too), then ON's combinations. Tracking puts the connection in push mode.
func cmdClientTracking(c *Conn, args [][]byte) {
	var o trackOptions
	var redir int64
	for j := 3; j < len(args); j++ {
		more := j+1 < len(args)
		switch a := args[j]; {
		case resp.EqualFold(a, "redirect") && more:
			j++
			if redir != 0 {
				c.w.Error("ERR A client can only redirect to a single other client")
				return
			}
			id, ok := resp.ParseInt(args[j])
			if !ok {
				c.w.Error(commands.ErrNotInteger)
				return
			}
			redir = id
			if o.redirTo = c.srv.clientByID(id); o.redirTo == nil {
				c.w.Error("ERR The client ID you want redirect to does not exist")
				return
			}
		case resp.EqualFold(a, "bcast"):
			o.bcast = true
		case resp.EqualFold(a, "optin"):
			o.optin = true
		case resp.EqualFold(a, "optout"):
			o.optout = true
		case resp.EqualFold(a, "noloop"):
			o.noloop = true
		case resp.EqualFold(a, "prefix") && more:
			j++
			o.prefixes = append(o.prefixes, args[j])
		default:
			c.w.Error(commands.ErrSyntax)
			return
		}
	}
	switch {
	case resp.EqualFold(args[2], "on"):
		if errText := c.track.checkOn(o); errText != "" {
			c.w.Error(errText)
			return
		}
		c.startPushing()
		c.srv.tracking.enable(c, o)
		c.w.OK()
	case resp.EqualFold(args[2], "off"):
		c.trackingOff()
		c.w.OK()
	default:
		c.w.Error(commands.ErrSyntax)
	}
}

// checkOn is Redis's error for CLIENT TRACKING ON with options o, given the
// modes t has, or "".
func (t *tracker) checkOn(o trackOptions) string {
	ti := t.info()
	switch {
	case !o.bcast && len(o.prefixes) > 0:
		return "ERR PREFIX option requires BCAST mode to be enabled"
	case ti.on && ti.bcast != o.bcast:
		return "ERR You can't switch BCAST mode on/off before disabling tracking for this client, and then re-enabling it with a different mode."
	case o.bcast && (o.optin || o.optout):
		return "ERR OPTIN and OPTOUT are not compatible with BCAST"
	case o.optin && o.optout:
		return "ERR You can't specify both OPTIN mode and OPTOUT mode"
	case o.optin && ti.optout || o.optout && ti.optin:
		return "ERR You can't switch OPTIN/OPTOUT mode before disabling tracking for this client, and then re-enabling it with a different mode."
	case o.bcast:
		return t.prefixOverlap(o.prefixes)
	}
	return ""
}

// trackingOff disables tracking. What c held back is queued first, after
// the replies before it, as Redis would have sent it already; push mode
// ends unless c is a subscriber.
func (c *Conn) trackingOff() {
	if !c.tracked {
		return
	}
	c.w.Flush()
	c.srv.tracking.disable(c)
	if c.subs.total() == 0 {
		c.stopPushing()
	}
}

// clientByID is the open connection with id, or nil.
func (s *Server) clientByID(id int64) *Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	for c := range s.conns {
		if c.id == id {
			return c
		}
	}
	return nil
}

// cmdClientCaching implements CLIENT CACHING YES|NO: in OPTIN mode YES
// tracks the next command's keys, in OPTOUT mode NO does not.
func cmdClientCaching(c *Conn, args [][]byte) {
	ti := c.track.info()
	switch {
	case !ti.on:
		c.w.Error("ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled")
	case resp.EqualFold(args[2], "yes") && !ti.optin:
		c.w.Error("ERR CLIENT CACHING YES is only valid when tracking is enabled in OPTIN mode.")
	case resp.EqualFold(args[2], "no") && !ti.optout:
		c.w.Error("ERR CLIENT CACHING NO is only valid when tracking is enabled in OPTOUT mode.")
	case resp.EqualFold(args[2], "yes"), resp.EqualFold(args[2], "no"):
		c.track.caching = true
		c.w.OK()
	default:
		c.w.Error(commands.ErrSyntax)
	}
}

// cmdClientGetRedir implements CLIENT GETREDIR: the redirect target's id,
// 0 for none, -1 when tracking is off.
func cmdClientGetRedir(c *Conn, _ [][]byte) {
	ti := c.track.info()
	if !ti.on {
		c.w.Int(-1)
		return
	}
	c.w.Int(ti.redirect)
}

// cmdClientTrackingInfo implements CLIENT TRACKINGINFO: a map of flags (a
// set), redirect and prefixes, as Redis 7.
func cmdClientTrackingInfo(c *Conn, _ [][]byte) {
	ti := c.track.info()
	flags := []string{"off"}
	redirect := int64(-1)
	if ti.on {
		flags[0], redirect = "on", ti.redirect
		for _, f := range []struct {
			set  bool
			name string
		}{
			{ti.bcast, "bcast"}, {ti.optin, "optin"}, {ti.optin && c.track.caching, "caching-yes"},
			{ti.optout, "optout"}, {ti.optout && c.track.caching, "caching-no"},
			{ti.noloop, "noloop"}, {ti.broken, "broken_redirect"},
		} {
			if f.set {
				flags = append(flags, f.name)
			}
		}
	}
	c.w.Map(3)
	c.w.BulkString("flags")
	c.w.Set(len(flags))
	for _, f := range flags {
		c.w.BulkString(f)
	}
	c.w.BulkString("redirect")
	c.w.Int(redirect)
	c.w.BulkString("prefixes")
	c.w.Array(len(ti.prefixes))
	for _, p := range ti.prefixes {
		c.w.BulkString(p)
	}
}
