// Package engine is stampedeless's envelope store: a memory-bounded map of
// keys to values with two deadlines each, knowing nothing about the network.
//
// # Where keys live
//
// Keys, values, deadlines and fill metadata are records packed into the
// mapped segments of a slab arena (engine/internal/slab), outside Go's heap.
// Each of 256 shards finds its records through a pointer-free open-addressing
// index, one uint64 per slot (24 bits of the key's hash and the record's
// location) and a 32-bit access stamp beside it (access.go), and compares
// the full key in the record. The collector scans
// neither, so its work does not grow with the number of keys, and values are
// not garbage it must find: a freed record's space is reused by compaction
// (see compact.go). Reads copy values out of the arena, or, with View and
// AppendValue, hand them to a function under the shard's read lock without
// copying.
//
// # Read-your-writes
//
// ristretto applies writes asynchronously and may drop them under
// contention. The store therefore does not read through ristretto at all: the
// index is the authoritative copy of every live key, updated under the
// shard's lock before a write returns, so a write is visible to every later
// read on any goroutine. ristretto is used for what it is good at, deciding
// what to keep: it knows each key by its 64-bit hash with a cost and nothing
// else (no second copy of key or value), a sample of reads feeds its
// frequency sketch (see readSampleEvery), and its eviction and admission
// callbacks remove keys from the index and free their records.
//
// Every change of the index that ristretto must know of is queued, in the
// order the shard's lock saw it, and sent to ristretto in that order by one
// goroutine at a time (feed); so ristretto's last word on a hash is always
// the index's. ristretto drops a Set when its buffer is full, and drops an
// update of a key it holds silently; the feeder waits for ristretto to drain
// every feedWaitEvery sends, so its buffer is never full and nothing is
// dropped.
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
	"bytes"
	"cmp"
	"errors"
	"hash/maphash"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/ristretto/v2"

	"github.com/stampedeless/stampedeless/engine/internal/slab"
)

// DefaultMaxMemory is the memory bound used when Options.MaxMemory is zero.
const DefaultMaxMemory = 1 << 30

// NoMaxMemory, as Options.MaxMemory, means no memory bound: Redis's
// maxmemory 0. Nothing is evicted and nothing is refused for size; the
// process grows until the machine runs out.
const NoMaxMemory = -1

// unbounded is the bound applied inside the store when there is none: far
// above any real size, and small enough that sums of costs never overflow.
const unbounded = math.MaxInt64 / 4

// EntryOverhead is the cost in bytes charged for each entry on top of its key
// and value (and fill metadata): the record's header in the arena (7), the
// entry's share of its shard's index (about 25: 8 bytes a slot and its
// 4-byte access stamp, access.go, measured 25.2 a key at a million keys;
// 17 before the stamps), ristretto's bookkeeping of
// its hash (about 156: its store slot and its policy's cost slot), and 20
// for the collector: ristretto's maps are on Go's heap, and with the
// process's memory limit (Options.OwnsProcess) the collector needs room
// above them or it runs without pause. Measured with bench/policymem and
// bench/compare; bench/README.md's results have the breakdown. That
// is the cost as keys are added; under a churn of new keys ristretto's
// maps fill with deleted slots and grow as if the keys were three times
// as many (at a 64 MiB bound, 156,000 keys: its store 210 bytes a key, its
// policy's costs 43, the index 27 before its access stamps), and the drift charge (chargeDrift)
// counts the difference.
const EntryOverhead = 208

// readSampleEvery: one read in this many, picked at random, is reported to
// ristretto's frequency sketch, hit or miss (as ristretto's own Get does).
// A report is a second lookup of the key's hash, in ristretto's own store.
// Reporting one read in four saved about a sixth of the CPU of a GET of
// random keys when the store kept whole entries in ristretto, but it costs
// precision the bound cannot spare: on bench/compare's hit-ratio trace at a
// 64 MiB bound (and 180 bytes of EntryOverhead), with the sketch at one
// counter per 64 bytes of bound every read reported reached a hit ratio of
// 0.793 and one in two 0.788; at one counter per 32 bytes, every read 0.804
// and one in four 0.788.
const readSampleEvery = 1

// A key whose LFU counter (access.go) is at least hotCounter has had a
// thousand reads or more in the last minutes (the counter climbs
// logarithmically, by one in (counter-5)*10+1 reads, and falls by one a
// minute); only one of its reads in hotSampleEvery is reported to
// ristretto's sketch. Its counters stop at 15 and halve every NumCounters
// reports, so such a key stays at the top of the sketch on a sixteenth of
// its reads, and a hot key's GET (one key, pipelined) no longer spends a
// seventh of its time telling ristretto what it knows.
const (
	hotCounter     = 20
	hotSampleEvery = 16
)

// readBatch is how many reports of reads ristretto gathers (per P) before
// its goroutine applies them to the sketch. A batch not yet full when the
// collector clears sync.Pool's stripes is lost, a few hundred reads now and
// then: nothing the sketch, which halves its counters every NumCounters
// reads, would notice.
const readBatch = 1024

// numShards is a power of two; a key's shard is the top bits of its hash, so
// SCAN can walk the hash space in order.
const (
	shardBits = 8
	numShards = 1 << shardBits
)

// ErrTooLarge is returned by writes whose entry alone would exceed the memory bound.
var ErrTooLarge = errors.New("engine: entry larger than max memory")

// ErrOOM is returned by writes under the noeviction policy while the store
// holds more than its memory bound.
var ErrOOM = errors.New("engine: used memory over max memory and eviction disabled")

// Options configures a Store. The zero value is usable.
type Options struct {
	// MaxMemory bounds the summed cost of all entries, in bytes.
	// If zero, DefaultMaxMemory is used; NoMaxMemory (any negative value)
	// sets no bound.
	MaxMemory int64
	// Policy is what happens when MaxMemory is reached; the zero value is
	// AllKeysLFU.
	Policy EvictionPolicy
	// Now returns the current time. If nil, time.Now is used. Tests set it to
	// move time without sleeping.
	Now func() time.Time
	// ExpireInterval is how often the background sweeper samples keys with a
	// deadline and removes expired ones. If zero, 100ms is used.
	ExpireInterval time.Duration
	// OwnsProcess says the store is what the process's memory is for: New
	// charges what the process holds on Go's heap before any key against
	// the bound (chargeBaseline), and every 10 ms near the bound
	// (watchMemory) it sets Go's soft memory limit
	// (runtime/debug.SetMemoryLimit) to what the process may take besides
	// the store's arena, so that garbage cannot carry the process past
	// the bound (see processLimit). Leave it unset where the store is one
	// part of a larger program, or where GOMEMLIMIT is set.
	OwnsProcess bool
}

// Store is the envelope store. All methods are safe for concurrent use.
// Keys and values passed in are copied, and so are values returned.
type Store struct {
	shards  [numShards]shard
	seed    maphash.Seed
	arena   slab.Arena
	policy  *ristretto.Cache[uint64, struct{}]
	nowFunc func() time.Time

	maxMemory atomic.Int64
	evictWith atomic.Uint32 // EvictionPolicy
	used      atomic.Int64  // summed cost of the entries in the indexes
	external  atomic.Int64  // bytes charged with Charge, drift included
	// drift is the part of external that chargeDrift charges: what the
	// process holds beyond what its entries and users are charged, and
	// pressure, its part for the process being past its budget. Only
	// watchMemory changes them.
	drift, pressure int64
	// holes is Go's heap's free room in its in-use spans, as chargeDrift
	// last read it (peakSlack); squeezed, that the process is near its aim
	// (the compactor then wins back more).
	holes    atomic.Int64
	squeezed atomic.Bool

	feeder feeder

	// compactMu is held while a segment is being compacted, so Flush and
	// Close never unmap one under the compactor.
	compactMu   sync.Mutex
	compactKick chan struct{}

	// Counters not kept per shard because the policy goroutine or the sweeper
	// own them.
	evicted     atomic.Int64 // entries removed by ristretto's eviction
	rejected    atomic.Int64 // new entries refused by ristretto's admission policy
	expired     atomic.Int64 // entries removed because their stale deadline passed
	flushes     atomic.Uint64
	compactions atomic.Int64 // segments compacted

	heapHandles atomic.Uint64 // the last handle given to a heap-held collection
	lists       listConfig    // list-max-listpack-size (list.go)

	zsetConfig listpackConfig // zset-max-listpack-entries and -value (zset.go)
	hashConfig listpackConfig // hash-max-listpack-entries and -value (hash.go)
	intsetMax  atomic.Int64   // set-max-intset-entries (set.go)

	// clock is the access clock in unix seconds (access.go), set by the
	// sweeper when sweptClock: Options.Now was not given.
	clock      atomic.Uint32
	sweptClock bool

	hllSparseMax atomic.Int64 // hll-sparse-max-bytes (hll.go)

	ownsProcess bool

	listener atomic.Pointer[Listener] // told of every change (notify.go)
	changes  atomic.Uint64            // counted by notify
	section  Section                  // the atomic section (section.go)

	// quiet makes ristretto's callbacks ignore what they are told: while
	// Flush clears ristretto and after Close, ristretto reports every item
	// it drops, and the index no longer holds them.
	quiet atomic.Bool
	// readSinceClear: a read was reported to ristretto since it was last
	// cleared. With the feeder's sentSinceClear it spares a FLUSHALL of
	// an empty store ristretto's Clear, which walks its whole sketch
	// (about a millisecond at any bound from 256 MB, where the sketch
	// stops growing).
	readSinceClear atomic.Bool

	stop   chan struct{}
	bg     sync.WaitGroup // the sweeper, the compactor and asynchronous flushes
	closed atomic.Bool    // Close was called; ristretto no longer takes items

	// loadFeeds are the feeds of loaded keys to ristretto (bulk.go) and
	// tellAll's, in bg too; loadFeeding counts them, for a cheap look in
	// feeder.feed. told: ristretto is told of every key (see feed).
	loadFeeds   sync.WaitGroup
	loadFeeding atomic.Int32
	told        atomic.Bool
}

// listpackConfig is a pair of Redis's *-max-listpack-entries and
// *-max-listpack-value parameters, as CONFIG SET sets them.
type listpackConfig struct{ entries, value atomic.Int64 }

func (c *listpackConfig) set(entries, value int64) {
	c.entries.Store(entries)
	c.value.Store(value)
}

func (c *listpackConfig) get() (entries, value int64) { return c.entries.Load(), c.value.Load() }

// shard is one lock domain of the key space.
type shard struct {
	mu       sync.RWMutex        // protects every field below but the counters
	index    slab.Index          // live records, plus expired ones not yet swept
	volatile int                 // records in index that have a stale deadline
	sweepAt  int                 // index slot the sweeper resumes from
	fences   map[string][]*Fence // fills in progress, by key; lazily initialized
	// heap holds the collections too big for their compact encoding, by
	// handle (types.go); lazily initialized.
	heap map[uint64]heapObject

	hits   atomic.Int64
	misses atomic.Int64
	_      [64]byte // keep neighbouring shards' locks off one cache line
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

// New returns a Store. Close releases its goroutines and memory.
func New(opts Options) (*Store, error) {
	maxCost := opts.MaxMemory
	switch {
	case maxCost == 0:
		maxCost = DefaultMaxMemory
	case maxCost < 0:
		maxCost = 0 // no bound, as MaxMemory reports it
	}
	s := &Store{
		seed:        maphash.MakeSeed(),
		nowFunc:     opts.Now,
		stop:        make(chan struct{}),
		compactKick: make(chan struct{}, 1),
		ownsProcess: opts.OwnsProcess,
	}
	if s.nowFunc == nil {
		s.nowFunc = time.Now
		s.sweptClock = true
		s.tickClock()
	}
	s.maxMemory.Store(maxCost)
	s.evictWith.Store(uint32(opts.Policy))
	s.SetZSetListpackLimits(DefaultZSetListpackEntries, DefaultZSetListpackValue)
	s.SetHashListpackLimits(DefaultHashListpackEntries, DefaultHashListpackValue)
	s.SetIntsetLimit(DefaultIntsetEntries)
	s.hllSparseMax.Store(DefaultHLLSparseMaxBytes)
	s.lists.size.Store(ListMaxListpackSize)
	policy, err := ristretto.NewCache(&ristretto.Config[uint64, struct{}]{
		// Without a bound nothing is evicted and the sketch is idle; it is
		// sized for the default bound, in case CONFIG SET sets one later.
		NumCounters: numCounters(cmp.Or(maxCost, DefaultMaxMemory)),
		MaxCost:     s.policyMaxCost(),
		// Reads reach the sketch in batches of this many per P, each a
		// channel send that wakes ristretto's goroutine: at 64 (ristretto's
		// advice) the wakes were a twentieth of a pipelined GET's time.
		BufferItems:        readBatch,
		IgnoreInternalCost: true, // EntryOverhead already covers it
		OnEvict:            s.onEvict,
		OnReject:           s.onReject,
	})
	if err != nil {
		return nil, err
	}
	s.policy = policy
	s.feeder.policy = policy
	s.feeder.closed = &s.closed
	s.feeder.over = s.overBound
	s.feeder.farOver = s.farOverBound
	s.feeder.loading = s.waitLoadFeedIfOver
	if s.ownsProcess {
		s.chargeBaseline()
	}

	interval := opts.ExpireInterval
	if interval <= 0 {
		interval = 100 * time.Millisecond
	}
	s.bg.Add(2)
	go s.sweep(interval)
	go s.compactor()
	if s.ownsProcess {
		s.bg.Add(1)
		go s.watchMemory(interval)
	}
	return s, nil
}

// chargeBaseline charges what the process holds on Go's heap before any
// key, ristretto's sketch (about 4 bytes a counter) included, as Redis's
// used_memory counts its own baseline against maxmemory: the entries get
// the bound less it. At most a quarter of the bound is charged so, so
// that a tiny bound still holds keys.
func (s *Store) chargeBaseline() {
	runtime.GC()
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(live)
	s.Charge(min(int64(live[0].Value.Uint64()), s.MaxMemory()/4))
}

// numCounters sizes ristretto's frequency sketch: one counter per 64 bytes
// of capacity, about five per expected entry of a small value (ristretto
// advises ten), bounded so an empty server stays small. The sketch halves
// its counts after as many reports as it has counters, so this is also how
// long it remembers: more counters raise the hit ratio (one per 32 bytes:
// 0.804 instead of 0.793 on bench/compare's trace), but a counter costs
// about 3.2 bytes (4 bits in each of the sketch's 4 rows, and its
// doorkeeper's Bloom filter), all allocated up front and outside the
// entries' charges: here 5% of the bound, and 13 MiB at the cap of 4M
// counters.
func numCounters(maxCost int64) int64 {
	n := maxCost / 64
	return min(max(n, 1<<12), 1<<22)
}

// policyMaxCost is the bound ristretto enforces: what the memory bound
// leaves the entries beside the bytes Charge counted (at least one byte), or
// none under noeviction, where writes are refused instead.
func (s *Store) policyMaxCost() int64 {
	if s.EvictionPolicy() == NoEviction {
		return math.MaxInt64 / 4
	}
	return max(s.bound()-s.external.Load(), 1)
}

// bound is the memory bound the store enforces: MaxMemory, or with no
// bound one that is never reached.
func (s *Store) bound() int64 {
	if n := s.maxMemory.Load(); n > 0 {
		return n
	}
	return unbounded
}

// Close stops the store's goroutines and unmaps its records. Writes that
// race with it are kept but no longer tracked; the store should not be used
// afterwards.
func (s *Store) Close() {
	s.closed.Store(true)
	close(s.stop)
	s.bg.Wait()
	s.quiet.Store(true)
	s.compactMu.Lock()
	// No feeder is sending while ristretto closes its buffer; later ones
	// find it closed.
	s.feeder.sendMu.Lock()
	s.policy.Close()
	s.dropAll()
	s.feeder.sendMu.Unlock()
	s.compactMu.Unlock()
}

// MaxMemory returns the current memory bound, 0 if there is none (as
// Redis's maxmemory reports it).
func (s *Store) MaxMemory() int64 { return s.maxMemory.Load() }

// Sync waits until the eviction policy has applied every write made before
// the call, and every removal it caused, so Stats and the keyspace hold still
// until the next write. Serving never needs it; tests and benchmarks that
// count evictions do.
func (s *Store) Sync() {
	s.loadFeeds.Wait()
	// ristretto's callbacks queue removals while it applies the changes;
	// send those too.
	for {
		s.feeder.sync()
		if s.feeder.pending.Load() == 0 {
			return
		}
	}
}

// SetMaxMemory changes the memory bound at run time; shrinking it makes
// ristretto evict as new entries arrive. Zero (or less) removes the bound,
// as CONFIG SET maxmemory 0 does in Redis.
func (s *Store) SetMaxMemory(n int64) {
	s.maxMemory.Store(max(n, 0))
	s.policy.UpdateMaxCost(s.policyMaxCost())
	s.tellIfPastHalf()
}

// Charge counts delta bytes (negative: given back) that a user of the
// store keeps on its entries' behalf, outside the store (swr's tag index),
// against the memory bound: entries get what the bound leaves, and
// ristretto evicts as new entries arrive if that shrank. Under noeviction
// they count towards the use that refuses writes.
func (s *Store) Charge(delta int64) {
	s.external.Add(delta)
	s.policy.UpdateMaxCost(s.policyMaxCost())
}

// EvictionPolicy returns what the store does when it reaches MaxMemory.
func (s *Store) EvictionPolicy() EvictionPolicy { return EvictionPolicy(s.evictWith.Load()) }

// SetEvictionPolicy changes the eviction policy at run time.
func (s *Store) SetEvictionPolicy(p EvictionPolicy) {
	s.evictWith.Store(uint32(p))
	s.policy.UpdateMaxCost(s.policyMaxCost())
	s.tellIfPastHalf()
}

// overBound reports whether the entries cost more than ristretto may keep
// of them, so that it must evict (never under noeviction).
func (s *Store) overBound() bool {
	return s.EvictionPolicy() != NoEviction && s.used.Load() > s.policyMaxCost()
}

// waitLoadFeedIfOver waits, if the store is over its bound, for the feeds
// of loaded keys to ristretto to end (Loader.Done): ristretto must know
// every key before it chooses what to evict, and keys it has not heard of
// do not count against its bound.
func (s *Store) waitLoadFeedIfOver() {
	if s.loadFeeding.Load() > 0 && s.overBound() {
		s.loadFeeds.Wait()
	}
}

// farOverBound reports whether the entries cost more than ristretto may
// keep of them by more than overSlack.
func (s *Store) farOverBound() bool {
	return s.EvictionPolicy() != NoEviction && s.used.Load() > s.policyMaxCost()+s.overSlack()
}

// overSlack is how far the entries may pass what ristretto may keep before
// writers wait for it to evict: a thirty-second of the bound, at least
// 1 MiB (the bound's promise leaves the process 15% of it and 24 MiB).
func (s *Store) overSlack() int64 { return max(s.bound()/32, 1<<20) }

// admit returns the error a write of an entry costing cost gets before it
// changes anything: ErrTooLarge if the entry alone exceeds the bound, ErrOOM
// if eviction is off and the store is already over it (Redis refuses
// writes then, whatever their size).
func (s *Store) admit(cost int64) error {
	if err := s.fits(cost); err != nil {
		return err
	}
	if s.EvictionPolicy() == NoEviction && s.used.Load()+s.external.Load() > s.bound() {
		return ErrOOM
	}
	return nil
}

// fits returns ErrTooLarge if an entry costing cost alone exceeds the
// bound.
func (s *Store) fits(cost int64) error {
	if cost > s.bound() {
		return ErrTooLarge
	}
	return nil
}

func (s *Store) now() int64 { return s.nowFunc().UnixNano() }

// Now is the store's clock (Options.Now), the one clock of the server that
// keys expire by; what the server stamps with a time reads it too.
func (s *Store) Now() time.Time { return s.nowFunc() }

func (s *Store) hash(key []byte) uint64 { return maphash.Bytes(s.seed, key) }

func (s *Store) shardOf(h uint64) *shard { return &s.shards[h>>(64-shardBits)] }

func (s *Store) shardFor(key []byte) *shard { return s.shardOf(s.hash(key)) }

func (s *Store) hashString(key string) uint64 { return maphash.String(s.seed, key) }

func (s *Store) shardForString(key string) *shard { return s.shardOf(s.hashString(key)) }

// tagOf is the part of a hash the index keeps: the bits after the shard's.
func tagOf(h uint64) uint32 { return uint32(h << shardBits >> (64 - slab.TagBits)) }

// entryCost is what an entry of this size is charged against MaxMemory.
func entryCost(keyLen, valueLen int) int64 {
	return int64(keyLen) + int64(valueLen) + EntryOverhead
}

// slot is a key found in its shard's index: where its slot is and its
// parsed record. It is valid until the shard's lock is released or the
// index changes.
type slot struct {
	pos int
	loc slab.Loc
	rec record
}

// findLocked looks key up in sh, whose lock the caller holds.
func (s *Store) findLocked(sh *shard, h uint64, key []byte) (slot, bool) {
	pos, ok := sh.index.Find(tagOf(h), func(loc slab.Loc) bool {
		return bytes.Equal(recordKey(s.arena.Block(loc)), key)
	})
	if !ok {
		return slot{}, false
	}
	loc := sh.index.Loc(pos)
	return slot{pos: pos, loc: loc, rec: parseRecord(s.arena.Block(loc))}, true
}

// storeLocked writes a record for r.key in sh, replacing the one in old if
// found, and queues the new cost for ristretto. The caller holds sh.mu for
// writing, and must call s.feed after releasing it.
// A key it adds is told as Created.
func (s *Store) storeLocked(sh *shard, h uint64, old slot, found bool, r newRecord) error {
	err := s.storeCopyLocked(sh, h, old, found, r)
	if !found && err == nil {
		s.notifyQuiet(Created, r.key)
	}
	return err
}

// storeCopyLocked is storeLocked of a copy of a key that is elsewhere
// (the shared tier's), which is no key created.
func (s *Store) storeCopyLocked(sh *shard, h uint64, old slot, found bool, r newRecord) error {
	changed, err := s.placeLocked(sh, h, old, found, r)
	if changed {
		s.queueCostLocked(sh, h)
	}
	return err
}

// placeLocked is storeLocked but for telling ristretto: changed reports
// whether the cost of hash h changed, so that ristretto must learn it.
func (s *Store) placeLocked(sh *shard, h uint64, old slot, found bool, r newRecord) (changed bool, err error) {
	if r.valueLen() > maxRecordValue {
		return false, ErrTooLarge
	}
	if found && r.outside && r.grow == nil && !old.rec.onHeap() && !r.onHeap() {
		if b := s.arena.Block(old.loc); len(b) == r.size() {
			return s.overwriteLocked(sh, old, b, r), nil
		}
	}
	loc, err := s.arena.Alloc(r.size(), r.write)
	if err != nil {
		return false, err
	}
	cost := r.cost()
	var oldCost int64
	if found {
		// Read before the old record's bytes are freed: its segment may
		// be unmapped with them.
		oldCost = old.rec.cost()
		if old.rec.onHeap() && (!r.onHeap() || heapHandle(r.value) != heapHandle(old.rec.value)) {
			sh.freeHeapLocked(&old.rec)
		}
		sh.index.Replace(old.pos, loc)
		s.used.Add(cost - oldCost)
		s.arena.Free(old.loc)
		if old.rec.stale != 0 {
			sh.volatile--
		}
	} else {
		if !sh.index.Insert(tagOf(h), loc, s.freshStamp()) {
			s.arena.Free(loc)
			return false, ErrTooLarge
		}
		s.used.Add(cost)
	}
	if r.stale != 0 {
		sh.volatile++
	}
	s.kickCompactor()
	return !found || cost != oldCost, nil
}

// overwriteLocked writes r over the record in old, whose block b is
// exactly r's size: a SET of a value as long as the one it replaces (a
// counter, a session, a pipelined SET of one key) takes no block from the
// arena, frees none and leaves compaction nothing to do. Readers hold the
// shard's read lock, so nobody sees the bytes change. r's key and value
// must lie outside the arena (newRecord.outside), or writing could
// overwrite them before they are copied. It reports whether the cost
// changed, as placeLocked does.
func (s *Store) overwriteLocked(sh *shard, old slot, b []byte, r newRecord) (changed bool) {
	oldCost, cost := old.rec.cost(), r.cost()
	sh.staleChangedLocked(old.rec.stale, r.stale)
	r.write(b)
	s.used.Add(cost - oldCost)
	return cost != oldCost
}

// staleChangedLocked keeps sh.volatile, its count of keys with a
// deadline, when a record written in place has its stale deadline go from
// was to is. The caller holds sh.mu for writing.
func (sh *shard) staleChangedLocked(was, is int64) {
	switch {
	case was == 0 && is != 0:
		sh.volatile++
	case was != 0 && is == 0:
		sh.volatile--
	}
}

// setDeadlinesLocked changes the deadlines of the record in sl, in place if
// it has room for them. The caller holds sh.mu for writing.
func (s *Store) setDeadlinesLocked(sh *shard, h uint64, sl slot, fresh, stale int64) error {
	if sl.rec.deadlines == 0 && fresh == 0 && stale == 0 {
		return nil
	}
	if sl.rec.deadlines == 0 {
		return s.storeLocked(sh, h, sl, true, sl.rec.renewed(fresh, stale))
	}
	sh.staleChangedLocked(sl.rec.stale, stale)
	// Readers hold the shard's read lock, so nobody sees the bytes change.
	putDeadlines(s.arena.Block(sl.loc)[sl.rec.deadlines:], fresh, stale)
	return nil
}

// removeLocked takes the entry in sl out of sh and frees its record,
// telling no listener. Each kind of removal (delete, expire, evict, drop)
// has its own function that calls it and says why. The caller holds sh.mu
// for writing and must call s.feed after releasing it, unless it is
// ristretto's goroutine.
func (s *Store) removeLocked(sh *shard, h uint64, sl slot) {
	sh.index.Delete(sl.pos)
	sh.freeHeapLocked(&sl.rec)
	if sl.rec.stale != 0 {
		sh.volatile--
	}
	s.used.Add(-sl.rec.cost())
	s.arena.Free(sl.loc)
	s.queueCostLocked(sh, h)
	s.kickCompactor()
}

// deleteLocked removes a live key on a client's request (DEL, GETDEL,
// EXPIRE in the past, a fill learning the key is gone).
func (s *Store) deleteLocked(sh *shard, h uint64, sl slot) { s.removeTellingLocked(sh, h, sl, Deleted) }

// expireLocked removes a key found past its stale deadline.
func (s *Store) expireLocked(sh *shard, h uint64, sl slot) {
	s.removeTellingLocked(sh, h, sl, Expired)
	s.expired.Add(1)
}

// removeTellingLocked is removeLocked that tells the listener why. The
// key is told while its record is still allocated: it aliases the arena.
func (s *Store) removeTellingLocked(sh *shard, h uint64, sl slot, why ChangeKind) {
	s.notify(why, sl.rec.key)
	s.removeLocked(sh, h, sl)
}

// hashCostLocked is what ristretto must be charged for hash h: the summed
// cost of the keys in sh with that full hash (two keys share one only by a
// 64-bit collision), or -1, meaning ristretto must forget h.
func (s *Store) hashCostLocked(sh *shard, h uint64) int64 {
	var cost int64
	found := false
	s.eachWithHashLocked(sh, h, func(sl slot) {
		cost += sl.rec.cost()
		found = true
	})
	if !found {
		return -1
	}
	return cost
}

// eachWithHashLocked calls fn for every key in sh whose hash is h. fn must
// not change the index.
func (s *Store) eachWithHashLocked(sh *shard, h uint64, fn func(slot)) {
	sh.index.ForTag(tagOf(h), func(pos int, loc slab.Loc) bool {
		if rec := parseRecord(s.arena.Block(loc)); s.hash(rec.key) == h {
			fn(slot{pos: pos, loc: loc, rec: rec})
		}
		return true
	})
}

// noteRead reports a read of the key with hash h to the eviction policy;
// found says the key was there, and kind what the read did to its LFU
// counter. Once the entries cost half of what ristretto may keep
// (pastHalf), every read is reported, hit or miss (as ristretto's own
// Get does), one time in readSampleEvery, and a hot key's one time in
// hotSampleEvery. Below that, only a read that grew the key's counter is:
// the counter grows on a key's first reads and ever more rarely after
// (logarithmically), so the sketch still ranks the keys read before the
// store fills by how often they were read, and a scan that fills the
// store does not push them out, at a few reports a key instead of one a
// read.
func (s *Store) noteRead(h uint64, found bool, kind access) {
	if !s.pastHalf() {
		if found && kind == accessGrew {
			s.policyGet(h)
		}
		return
	}
	if kind == accessHot {
		if rand.Uint32()%hotSampleEvery == 0 {
			s.policyGet(h)
		}
		return
	}
	if readSampleEvery == 1 || rand.Uint32()%readSampleEvery == 0 {
		s.policyGet(h)
	}
}

// policyGet reports a read of hash h to ristretto, and that it was told
// one since its last Clear.
func (s *Store) policyGet(h uint64) {
	if !s.readSinceClear.Load() {
		s.readSinceClear.Store(true)
	}
	s.policy.Get(h)
}

// onReject runs on ristretto's goroutine when it refuses an item.
func (s *Store) onReject(item *ristretto.Item[struct{}]) {
	if s.quiet.Load() {
		return
	}
	// ristretto also reports a second Set of a hash that was still queued
	// as a rejection, after applying its cost. That key is stored; keep it.
	if _, stored := s.policy.GetTTL(item.Key); stored {
		return
	}
	s.rejected.Add(s.evictHash(item.Key, Rejected))
}

// onEvict runs on ristretto's goroutine for every hash its policy evicts.
func (s *Store) onEvict(item *ristretto.Item[struct{}]) {
	if s.quiet.Load() {
		return
	}
	s.evicted.Add(s.evictHash(item.Key, Evicted))
}

// evictHash removes the keys with hash h because ristretto no longer holds
// it, tells the listener why, and returns how many it removed. It runs on the goroutine that drains
// ristretto's buffer, so it must not send to ristretto: the removal it
// queues (for a write of h that ristretto has yet to see) is sent by the
// next feed.
func (s *Store) evictHash(h uint64, why ChangeKind) int64 {
	sh := s.shardOf(h)
	sh.mu.Lock()
	defer sh.mu.Unlock()
	var n int64
	for {
		var victim slot
		found := false
		s.eachWithHashLocked(sh, h, func(sl slot) {
			if !found {
				victim, found = sl, true
			}
		})
		if !found {
			return n
		}
		s.removeTellingLocked(sh, h, victim, why)
		n++
	}
}
