// Package engine is stampedeless's envelope store: a memory-bounded map of
// keys to values with two deadlines each, knowing nothing about the network.
//
// # Read-your-writes
//
// ristretto applies new keys asynchronously, may drop a Set under contention
// and keeps the first of two Sets of a new key that overlap. The store
// therefore does not read through ristretto at all: the authoritative copy of
// every live key is a sharded Go map, updated under the shard's lock before a
// write returns, so a write is visible to every later read on any goroutine.
// ristretto is used for what it is good at, deciding what to keep: each entry
// is registered with it under a unique uint64 id, a sample of reads feeds its
// frequency sketch (see readSampleEvery), and its eviction and admission
// callbacks remove entries from the map.
//
// Because the ristretto key is an id handed out by the store, two different keys
// can never collide inside ristretto, and a read always compares the full key.
//
// # Changes and atomic batches
//
// A Listener (Store.Listen) is told synchronously of every change a reader
// would see, eviction and expiry included; the server's WATCH is built on
// it. The Section (Store.Section) lets one user run a batch of calls that
// no other user interleaves with (EXEC), while ordinary users hold it
// shared around their calls.
package engine

import (
	"errors"
	"hash/maphash"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/ristretto/v2"
)

// DefaultMaxMemory is the memory bound used when Options.MaxMemory is zero.
const DefaultMaxMemory = 1 << 30

// EntryOverhead is the cost in bytes charged for each entry on top of its key
// and value: the entry struct, its slot in the shard map, the value's
// allocation rounding, and ristretto's own per-item store slot and policy
// bookkeeping. Measured (bench/compare's memory test, and a heap profile of
// 1,000,000 entries with 11-byte keys and 100-byte values): about 310 bytes
// of live heap per entry beyond its key and value.
const EntryOverhead = 320

// readSampleEvery: one hit in this many, picked at random, is reported to
// ristretto's frequency sketch. A report is a second lookup of a key just
// found, in ristretto's own store; counting every read took about a sixth
// of the CPU of a GET of random keys. The sketch only compares frequencies,
// which a uniform sample keeps for every key read more than a few times; its
// 4-bit counters then saturate at about 60 reads instead of 15.
// TestReadsKeepHotKeys shows hot keys still outlive a churn of keys written
// once.
const readSampleEvery = 4

// numShards is a power of two; a key's shard is the top bits of its hash, so
// SCAN can walk the hash space in order.
const (
	shardBits = 8
	numShards = 1 << shardBits
)

// ErrTooLarge is returned by writes whose entry alone would exceed the memory bound.
var ErrTooLarge = errors.New("engine: entry larger than max memory")

// Options configures a Store. The zero value is usable.
type Options struct {
	// MaxMemory bounds the summed cost of all entries, in bytes.
	// If zero, DefaultMaxMemory is used.
	MaxMemory int64
	// Now returns the current time. If nil, time.Now is used. Tests set it to
	// move time without sleeping.
	Now func() time.Time
	// ExpireInterval is how often the background sweeper samples keys with a
	// deadline and removes expired ones. If zero, 100ms is used.
	ExpireInterval time.Duration
}

// Store is the envelope store. All methods are safe for concurrent use.
// Keys and values passed in are copied; values returned are shared and must
// not be modified by the caller (the store itself never modifies the bytes
// of a value it has returned).
type Store struct {
	shards  [numShards]shard
	seed    maphash.Seed
	policy  *ristretto.Cache[uint64, *entry]
	nowFunc func() time.Time

	nextID atomic.Uint64

	// Counters not kept per shard because the policy goroutine or the sweeper
	// own them.
	bound    atomic.Int64 // the memory bound, MaxMemory
	external atomic.Int64 // bytes charged with Charge
	evicted  atomic.Int64 // entries removed by ristretto's eviction
	rejected atomic.Int64 // new entries refused by ristretto's admission policy
	expired  atomic.Int64 // entries removed because their stale deadline passed
	flushes  atomic.Uint64

	listener atomic.Pointer[Listener] // told of every change (notify.go)
	section  Section                  // the atomic section (section.go)

	stop   chan struct{}
	bg     sync.WaitGroup // the sweeper and asynchronous flushes
	closed atomic.Bool    // Close was called; ristretto no longer takes items
}

// shard is one lock domain of the key space.
type shard struct {
	mu       sync.RWMutex        // protects every field below but the counters
	m        map[string]*entry   // live entries, plus expired ones not yet swept
	volatile int                 // entries in m that have a stale deadline
	recheck  []*entry            // entries whose cost update ristretto may have dropped
	fences   map[string][]*Fence // fills in progress, by key; lazily initialized

	hits   atomic.Int64
	misses atomic.Int64
	_      [64]byte // keep neighbouring shards' locks off one cache line
}

// entry is one stored key. Its plain fields other than id and key (which
// never change) are guarded by the owning shard's mu; the atomic ones are
// also read by ristretto's goroutine and the sweeper.
type entry struct {
	key        string
	value      []byte
	freshUntil int64 // unix nanoseconds; equals staleUntil for plain writes
	staleUntil int64 // unix nanoseconds; 0 means the entry never expires
	fill       *FillMeta

	id      uint64       // this entry's key in ristretto, unique for the store's life
	cost    atomic.Int64 // what ristretto should be charged; read by its Cost hook
	charged atomic.Int64 // what ristretto's Cost hook last charged
	queued  atomic.Bool  // in its shard's recheck list
	dead    atomic.Bool  // removed from its shard; ristretto callbacks ignore it
}

// FillMeta is what a read-through fill remembers about the origin's answer.
type FillMeta struct {
	// Loader is the name of the loader that filled the entry.
	Loader string
	// ETag and LastModified are the origin's validators, sent back on refresh.
	ETag         string
	LastModified string
	// LoadTime is how long the fill took (the origin call, or the
	// application's lease from token to FILL.SET): the delta of early
	// refresh (swr's XFetch).
	LoadTime time.Duration
}

// New returns a Store. Close releases its goroutines.
func New(opts Options) (*Store, error) {
	maxCost := opts.MaxMemory
	if maxCost <= 0 {
		maxCost = DefaultMaxMemory
	}
	s := &Store{
		seed:    maphash.MakeSeed(),
		nowFunc: opts.Now,
		stop:    make(chan struct{}),
	}
	if s.nowFunc == nil {
		s.nowFunc = time.Now
	}
	for i := range s.shards {
		s.shards[i].m = make(map[string]*entry)
	}
	policy, err := ristretto.NewCache(&ristretto.Config[uint64, *entry]{
		NumCounters:        numCounters(maxCost),
		MaxCost:            maxCost,
		BufferItems:        64,
		IgnoreInternalCost: true, // EntryOverhead already covers it
		Cost:               policyCost,
		OnEvict:            s.onEvict,
		OnReject:           s.onReject,
	})
	if err != nil {
		return nil, err
	}
	s.policy = policy
	s.bound.Store(maxCost)

	interval := opts.ExpireInterval
	if interval <= 0 {
		interval = 100 * time.Millisecond
	}
	s.bg.Add(1)
	go s.sweep(interval)
	return s, nil
}

// policyCost is ristretto's Cost hook, called as it applies each queued Set.
// A Set registering an entry may still be queued when ristretto rejects or
// evicts that entry: a second write changed the entry's cost before
// ristretto applied the first Set, or a writer re-registered it while it was
// being evicted. ristretto then adds the dead entry again, and nothing can
// Del it: the callbacks that killed it run on the goroutine draining the
// buffer, and the writer checked e.dead before it died. Charging a dead entry
// nothing keeps such orphans from crowding out live entries, which they did
// by most of MaxMemory under churn; they go when eviction samples them.
//
// It also records what was charged, so the sweeper can tell whether an
// update of an entry's cost was applied or dropped.
func policyCost(e *entry) int64 {
	var cost int64
	if !e.dead.Load() {
		cost = e.cost.Load()
	}
	e.charged.Store(cost)
	return cost
}

// chargeLocked records e's new cost and reports whether ristretto must be
// told. ristretto drops an update of an entry it holds, while reporting
// success, when its buffer is full; so an existing entry whose cost changed
// is also queued for the sweeper, which re-sends the update until the Cost
// hook has charged it. The caller holds sh.mu.
func (sh *shard) chargeLocked(e *entry, cost int64, isNew bool) bool {
	if e.cost.Swap(cost) == cost {
		return false
	}
	if !isNew && !e.queued.Swap(true) {
		sh.recheck = append(sh.recheck, e)
	}
	return true
}

// recheckCosts re-sends the cost updates of sh that ristretto has not
// applied yet, keeping the ones still pending for the next round.
func (s *Store) recheckCosts(sh *shard) {
	sh.mu.Lock()
	pending := sh.recheck
	sh.recheck = nil
	sh.mu.Unlock()
	var again []*entry
	for _, e := range pending {
		if e.dead.Load() || e.charged.Load() == e.cost.Load() {
			e.queued.Store(false)
			continue
		}
		s.policy.Set(e.id, e, 0)
		again = append(again, e)
	}
	if len(again) > 0 {
		sh.mu.Lock()
		sh.recheck = append(sh.recheck, again...)
		sh.mu.Unlock()
	}
}

// numCounters sizes ristretto's frequency sketch: about one counter per 128
// bytes of capacity, which is roughly ten per expected entry of a small
// value, bounded so an empty server stays small.
func numCounters(maxCost int64) int64 {
	n := maxCost / 128
	return min(max(n, 1<<12), 1<<23)
}

// Close stops the store's goroutines. Writes that race with it are kept in
// the map but no longer tracked; the store should not be used afterwards.
func (s *Store) Close() {
	s.closed.Store(true)
	close(s.stop)
	s.bg.Wait()
	s.policy.Close()
}

// MaxMemory returns the current memory bound.
func (s *Store) MaxMemory() int64 { return s.bound.Load() }

// Sync waits until the eviction policy has applied every write made before
// the call, so Stats and the keyspace hold still until the next write.
// Serving never needs it; tests and benchmarks that count evictions do.
func (s *Store) Sync() { s.policy.Wait() }

// SetMaxMemory changes the memory bound at run time; shrinking it makes
// ristretto evict as new entries arrive.
func (s *Store) SetMaxMemory(n int64) {
	if n <= 0 {
		n = DefaultMaxMemory
	}
	s.bound.Store(n)
	s.applyBound()
}

// Charge counts delta bytes (negative: given back) that a user of the
// store keeps on its entries' behalf, outside the store (swr's tag index),
// against the memory bound: entries get what the bound leaves, and
// ristretto evicts as new entries arrive if that shrank.
func (s *Store) Charge(delta int64) {
	s.external.Add(delta)
	s.applyBound()
}

// applyBound gives the entries the bound less what Charge counted, at
// least one byte.
func (s *Store) applyBound() {
	s.policy.UpdateMaxCost(max(s.bound.Load()-s.external.Load(), 1))
}

func (s *Store) now() int64 { return s.nowFunc().UnixNano() }

func (s *Store) hash(key []byte) uint64 { return maphash.Bytes(s.seed, key) }

func (s *Store) shardOf(h uint64) *shard { return &s.shards[h>>(64-shardBits)] }

func (s *Store) shardFor(key []byte) *shard { return s.shardOf(s.hash(key)) }

func (s *Store) hashString(key string) uint64 { return maphash.String(s.seed, key) }

func (s *Store) shardForString(key string) *shard { return s.shardOf(s.hashString(key)) }

// entryCost is what an entry of this size is charged against MaxMemory.
func entryCost(keyLen, valueLen int) int64 {
	return int64(keyLen) + int64(valueLen) + EntryOverhead
}

// expiredAt reports whether e is past its stale deadline at now.
func (e *entry) expiredAt(now int64) bool {
	return e.staleUntil != 0 && e.staleUntil <= now
}

// register tells ristretto about a new entry, or about a new cost of an
// existing one. It must be called without any shard lock held, since it may
// wait for ristretto's buffer and ristretto's callbacks take shard locks.
func (s *Store) register(e *entry) {
	// Set returns false when ristretto's buffer is full and it dropped a new
	// item. An entry ristretto does not know about would never be evicted,
	// so wait for the buffer to drain and try again.
	for !s.policy.Set(e.id, e, 0) {
		// A closed ristretto refuses every Set and Wait returns at once:
		// a late write (a fill finishing after shutdown) must not spin.
		if e.dead.Load() || s.closed.Load() {
			return
		}
		s.policy.Wait()
	}
	// A concurrent delete may have marked e dead and called Del before our
	// Set was queued; Del again so ristretto does not keep an orphan.
	if e.dead.Load() {
		s.policy.Del(e.id)
	}
}

// noteRead reports, one time in readSampleEvery, a read of the entry with
// ristretto id id to the eviction policy.
func (s *Store) noteRead(id uint64) {
	if rand.Uint32()%readSampleEvery == 0 {
		s.policy.Get(id)
	}
}

// unregister removes entries from ristretto after they left their shard.
func (s *Store) unregister(dead []*entry) {
	for _, e := range dead {
		s.policy.Del(e.id)
	}
}

// removeLocked takes e out of sh. The caller holds sh.mu and must call
// unregister(e) once it has released it.
func (sh *shard) removeLocked(e *entry) {
	delete(sh.m, e.key)
	if e.staleUntil != 0 {
		sh.volatile--
	}
	e.dead.Store(true)
}

// onReject runs on ristretto's goroutine when it refuses an item.
func (s *Store) onReject(item *ristretto.Item[*entry]) {
	// ristretto also reports a second Set of an id that was still queued as
	// a rejection, after applying its cost. That entry is stored; keep it.
	if _, stored := s.policy.GetTTL(item.Key); stored {
		return
	}
	if s.dropFromPolicy(item.Value, Rejected) {
		s.rejected.Add(1)
	}
}

// onEvict runs on ristretto's goroutine for every entry its policy evicts.
func (s *Store) onEvict(item *ristretto.Item[*entry]) {
	if s.dropFromPolicy(item.Value, Evicted) {
		s.evicted.Add(1)
	}
}

// dropFromPolicy removes e from its shard because ristretto no longer holds
// it, and tells the listener why. It reports whether e was still live. It
// must not call back into ristretto's buffer: it runs on the goroutine that
// drains it.
func (s *Store) dropFromPolicy(e *entry, why ChangeKind) bool {
	if e == nil || e.dead.Load() {
		return false
	}
	sh := s.shardForString(e.key)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	if sh.m[e.key] != e {
		return false
	}
	sh.removeLocked(e)
	s.notifyRemoved(why, e)
	return true
}
