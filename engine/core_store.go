// Package engine is stampedeless's envelope store: a memory-bounded map of
// keys to values with two deadlines each, knowing nothing about the network.
//
// # Where keys live
//
// Keys, values, deadlines and fill metadata are records packed into the
// mapped segments of a slab arena (engine/internal/slab), outside Go's heap.
// Each of 256 shards finds its records through a pointer-free open-addressing
// index, one uint64 per slot (24 bits of the key's hash and the record's
// location) and a 32-bit access stamp beside it (core_access.go), and compares
// the full key in the record. The collector scans
// neither, so its work does not grow with the number of keys, and values are
// not garbage it must find: a freed record's space is reused by compaction
// (see core_compact.go). Reads copy values out of the arena, or, with
// View and ViewEntry, hand them to a function under the shard's read lock
// without copying (core_read.go).
//
// # Eviction
//
// The store chooses what to evict itself, as Redis does, over what it
// already keeps: the access stamp beside each key's index slot and, for the
// LFU policies, a frequency sketch of about a byte and a half a key
// (core_evict.go). A write that finds the store over its bound evicts before it
// changes anything, on its own goroutine; nothing is queued, and a write is
// visible to every later read on any goroutine once it returns.
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
	"math"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stampedeless/stampedeless/engine/internal/slab"
	"github.com/stampedeless/stampedeless/engine/internal/tinylfu"
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
// entry's share of its shard's index (8 bytes a slot and its 4-byte access
// stamp, at a load between 3/8 and 3/4: 25 a key filled once, 29 under a
// churn of new keys) and its share of the frequency sketch (2 to 4 bytes
// a key, by how the key count rounds up to a power of two: 2.4 at a 64 MiB
// bound, 4.2 at a million keys). Measured with bench/policymem, whose
// table bench/README.md has: 38.7 bytes a key under churn (40.1 with the
// arena's dead blocks not yet filled again or compacted away), 36.4 filled
// once.
const EntryOverhead = 40

// numShards is a power of two; a key's shard is the top bits of its hash, so
// SCAN can walk the hash space in order.
const (
	shardBits = 8
	numShards = 1 << shardBits
)

// ErrTooLarge is returned by writes whose entry alone would exceed the memory bound.
var ErrTooLarge = errors.New("engine: entry larger than max memory")

// ErrOOM is returned by writes while the store holds more than its memory
// bound and eviction cannot make room: under noeviction, or under a
// volatile policy with no key with a deadline.
var ErrOOM = errors.New("engine: used memory over max memory and nothing to evict")

// Options configures a Store. The zero value is usable.
type Options struct {
	// MaxMemory bounds the summed cost of all entries, in bytes.
	// If zero, DefaultMaxMemory is used; NoMaxMemory (any negative value)
	// sets no bound.
	MaxMemory int64
	// Policy is what happens when MaxMemory is reached; the zero value is
	// AllKeysLFU.
	Policy EvictionPolicy
	// Eviction tunes the policy; the zero value is Redis's defaults.
	Eviction EvictionParams
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
	// Databases is how many databases DB offers, Redis's "databases": at
	// most MaxDatabases; zero is MaxDatabases.
	Databases int
}

// Store is one database of the envelope store, as Redis's SELECT names
// one: New returns database 0, and DB the others, which share its shards,
// arena, memory bound and eviction. A key lives in one database, and the
// same name in two databases is two keys. All methods are safe for
// concurrent use. Keys and values passed in are copied, and so are values
// returned.
type Store struct {
	*store
	db uint8 // this database's number, kept in its records (recordDB)
}

// MaxDatabases is how many databases a store can have, Redis's default
// "databases 16": a record keeps its database's number in four bits.
const MaxDatabases = 16

// store is what a store's databases share.
type store struct {
	dbs       [MaxDatabases]Store // each database's Store, by number
	databases int                 // how many DB offers (Options.Databases)
	shards    [numShards]shard
	seed      maphash.Seed
	arena     slab.Arena
	nowFunc   func() time.Time

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
	// runtimeLimit is Go's memory limit as chargeDrift last measured it
	// (processLimit); 0 before, or where there is no /proc.
	runtimeLimit atomic.Int64

	evictor evictor
	// sketch counts accesses for the LFU policies (core_evict.go), sized by
	// the sweeper to the key count (sizeSketch).
	sketch tinylfu.Sketch
	params atomic.Pointer[EvictionParams]

	// compactMu is held while a segment is being compacted, so Flush and
	// Close never unmap one under the compactor.
	compactMu   sync.Mutex
	compactKick chan struct{}

	// frozen: the dataset changes only by what clients write (SetFrozen).
	frozen atomic.Bool
	// oomAllowed: writes go past the memory bound (AllowOOM).
	oomAllowed atomic.Bool
	// heldAt, if not 0, is the time keys expire by (HoldClock), in unix
	// nanoseconds.
	heldAt atomic.Int64
	// thawed: SetFrozen ended a freeze, and the sweeper has not yet
	// evicted what the bound asked for meanwhile.
	thawed atomic.Bool
	// noActiveExpire: the sweeper leaves expired keys for their next
	// read (SetActiveExpire).
	noActiveExpire atomic.Bool

	// Counters not kept per shard because eviction or the sweeper own them.
	evicted     atomic.Int64 // entries removed to keep the bound
	expired     atomic.Int64 // entries removed because their stale deadline passed
	flushes     atomic.Uint64
	compactions atomic.Int64 // segments compacted

	heapHandles atomic.Uint64 // the last handle given to a heap-held collection
	lists       listConfig    // list-max-listpack-size (list.go)

	zsetConfig listpackConfig // zset-max-listpack-entries and -value (zset.go)
	streamNode listpackConfig // stream-node-max-entries and -bytes (stream.go)
	hashConfig listpackConfig // hash-max-listpack-entries and -value (hash.go)
	intsetMax  atomic.Int64   // set-max-intset-entries (set.go)

	// clock is the access clock in unix seconds (core_access.go), set by the
	// sweeper when sweptClock: Options.Now was not given.
	clock      atomic.Uint32
	sweptClock bool

	hllSparseMax atomic.Int64 // hll-sparse-max-bytes (hll.go)

	ownsProcess bool

	listener atomic.Pointer[Listener] // told of every change (core_notify.go)
	swapMu   sync.Mutex               // guards onSwap
	onSwap   []func(a, b int)         // called after each SWAPDB (OnSwap)
	changes  atomic.Uint64            // counted by notify
	section  Section                  // the atomic section (core_section.go)

	stop chan struct{}
	bg   sync.WaitGroup // the sweeper, the compactor and the memory watch
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
	mu       sync.RWMutex          // protects every field below but the counters
	index    slab.Index            // live records, plus expired ones not yet swept
	volatile int                   // records in index that have a stale deadline
	keys     [MaxDatabases]int32   // records in index, by database
	sweepAt  int                   // index slot the sweeper resumes from
	fences   map[fenceKey][]*Fence // fills in progress, by key; lazily initialized
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
	shared := &store{
		seed:        maphash.MakeSeed(),
		nowFunc:     opts.Now,
		stop:        make(chan struct{}),
		compactKick: make(chan struct{}, 1),
		ownsProcess: opts.OwnsProcess,
	}
	for i := range shared.dbs {
		shared.dbs[i] = Store{store: shared, db: uint8(i)}
	}
	shared.databases = MaxDatabases
	if opts.Databases > 0 && opts.Databases < MaxDatabases {
		shared.databases = opts.Databases
	}
	s := &shared.dbs[0]
	if s.nowFunc == nil {
		s.nowFunc = time.Now
		s.sweptClock = true
		s.tickClock()
	}
	s.maxMemory.Store(maxCost)
	s.evictWith.Store(uint32(opts.Policy))
	s.setEvictionParams(opts.Eviction)
	s.SetZSetListpackLimits(DefaultZSetListpackEntries, DefaultZSetListpackValue)
	s.SetHashListpackLimits(DefaultHashListpackEntries, DefaultHashListpackValue)
	s.SetStreamNodeLimits(DefaultStreamNodeMaxEntries, DefaultStreamNodeMaxBytes)
	s.SetIntsetLimit(DefaultIntsetEntries)
	s.hllSparseMax.Store(DefaultHLLSparseMaxBytes)
	s.lists.size.Store(ListMaxListpackSize)
	s.sizeSketch()
	if s.ownsProcess {
		s.chargeBaseline()
		// Go's memory limit from the start, not from watchMemory's first
		// look: what reads it (a script's memory watch) would find none
		// in between, and a command that came first would run unbounded.
		debug.SetMemoryLimit(s.processLimit())
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
// key, as Redis's used_memory counts its own baseline against maxmemory:
// the entries get the bound less it. At most a quarter of the bound is
// charged so, so that a tiny bound still holds keys.
func (s *Store) chargeBaseline() {
	runtime.GC()
	live := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	metrics.Read(live)
	s.Charge(min(int64(live[0].Value.Uint64()), s.MaxMemory()/4))
}

// sizeSketch sizes the frequency sketch to the key count, while an LFU
// policy and a bound are in force, and frees it otherwise. It is sized up
// as soon as the keys outgrow it and down only when they are a quarter of
// it, so a count that wavers does not make it forget, and it is never
// smaller than the keys the bound holds at their current mean cost.
func (s *Store) sizeSketch() {
	if !s.EvictionPolicy().LFU() || s.MaxMemory() == 0 {
		s.sketch.Resize(0)
		return
	}
	keys := s.indexed()
	c := s.sketch.Capacity()
	if want := tinylfu.CapacityFor(keys); c == 0 || want > c || want*4 < c {
		s.sketch.Resize(max(keys, 1))
	}
}

// indexed is how many keys the indexes hold, those past their deadline
// and not yet swept included: Len without reading a record.
func (s *Store) indexed() int {
	n := 0
	for i := range s.shards {
		sh := &s.shards[i]
		sh.mu.RLock()
		n += sh.index.Len()
		sh.mu.RUnlock()
	}
	return n
}

// growSketchLocked grows the frequency sketch, if there is one, as soon as
// the keys outgrow it, between the sweeper's looks: a sketch too small for
// its keys ages them too fast (it halves its counts every ten increments
// per key of its capacity). A shard's count times the shards is the key
// count, near enough. The caller holds sh.mu.
func (s *Store) growSketchLocked(sh *shard) {
	if c := s.sketch.Capacity(); c > 0 && sh.index.Len()*numShards > c {
		s.sketch.Resize(sh.index.Len() * numShards)
	}
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
	close(s.stop)
	s.bg.Wait()
	s.compactMu.Lock()
	shards := s.lockAllShards((*sync.RWMutex).Lock)
	s.resetLocked(shards)
	unlockShards(shards, (*sync.RWMutex).Unlock)
	s.compactMu.Unlock()
}

// MaxMemory returns the current memory bound, 0 if there is none (as
// Redis's maxmemory reports it).
func (s *Store) MaxMemory() int64 { return s.maxMemory.Load() }

// SetMaxMemory changes the memory bound at run time; a store over the new
// bound evicts down to it before SetMaxMemory returns (as Redis's CONFIG
// SET maxmemory does), unless the policy is noeviction. Zero (or less)
// removes the bound, as CONFIG SET maxmemory 0 does in Redis.
func (s *Store) SetMaxMemory(n int64) {
	s.maxMemory.Store(max(n, 0))
	s.sizeSketch()
	if s.overBound(0) {
		_ = s.makeRoom(forBound, 0) // ErrOOM: writes are refused until keys go
	}
}

// SetFrozen stops (true) or restarts (false) the store's own changes to
// its keys: while frozen, the sweeper removes no expired key, a read that
// finds one answers a miss but leaves it in place, and nothing is evicted,
// whatever the memory bound (writes then go past it, as Redis's writes do
// during CLIENT PAUSE). The server freezes the store for CLIENT PAUSE, so
// that a replica promoted during the pause has exactly the data the
// clients wrote; expired keys go once the store thaws, at their next read
// or sweep. Writes still replace an expired key they find, as they would
// a live one. The sweeper and eviction read the switch inside the atomic
// section (Section): a caller that holds the section exclusively while it
// freezes knows that nothing changes the keys on its own once it leaves.
//
// Thawed over its bound (a bound lowered, or writes, while frozen), the
// store evicts back within it at the sweeper's next round, as Redis
// evicts once the pause is over, off the caller's goroutine.
func (s *Store) SetFrozen(on bool) {
	if s.frozen.Swap(on) && !on {
		s.thawed.Store(true)
	}
}

// AllowOOM lets writes go past the memory bound (true), nothing refused
// or evicted for them, or not (false): Redis runs the commands of a script
// that declares allow-oom so. The server sets it around such a script,
// holding the atomic section exclusively, so that only the script's
// writes pass.
func (s *Store) AllowOOM(on bool) { s.oomAllowed.Store(on) }

// HoldClock stops the time keys expire by at now until release is called:
// Redis runs a script and a transaction so, their keys expiring by the
// time they started (scriptTimeSnapshot, fixed_time_expire), so that no
// key expires between two of their commands. The server holds it around
// them, holding the atomic section exclusively; Now, the clock, goes on.
// A hold taken while one is held (a script inside EXEC) keeps the outer
// one's time, and its release lets nothing go.
func (s *Store) HoldClock() (release func()) {
	if !s.heldAt.CompareAndSwap(0, s.nowFunc().UnixNano()) {
		return func() {}
	}
	return func() { s.heldAt.Store(0) }
}

// Frozen reports whether SetFrozen froze the store.
func (s *Store) Frozen() bool { return s.frozen.Load() }

// SetActiveExpire turns the sweeper's removal of expired keys off (false)
// or back on, as Redis's DEBUG SET-ACTIVE-EXPIRE: tests that look at a key
// past its deadline before anything reads it need it left in place.
// Reads still find an expired key missing and remove it; until one does,
// Len counts it, as Redis's DBSIZE does.
func (s *Store) SetActiveExpire(on bool) { s.noActiveExpire.Store(!on) }

// Charge counts delta bytes (negative: given back) that a user of the
// store keeps on its entries' behalf, outside the store (swr's tag index),
// against the memory bound: entries get what the bound leaves, and the
// next write evicts if that shrank. Under noeviction they count towards
// the use that refuses writes.
func (s *Store) Charge(delta int64) { s.external.Add(delta) }

// EvictionPolicy returns what the store does when it reaches MaxMemory.
func (s *Store) EvictionPolicy() EvictionPolicy { return EvictionPolicy(s.evictWith.Load()) }

// SetEvictionPolicy changes the eviction policy at run time. Candidates
// already chosen under the old one are forgotten, and the sketch is made
// or freed.
func (s *Store) SetEvictionPolicy(p EvictionPolicy) {
	s.evictWith.Store(uint32(p))
	s.evictor.clear()
	s.sizeSketch()
}

// EvictionParams are Redis's parameters of eviction, which CONFIG SET
// changes at run time. The zero value is Redis's defaults.
type EvictionParams struct {
	// Samples is maxmemory-samples: keys sampled per eviction round, at
	// least 1 (default 5).
	Samples int
	// Tenacity is maxmemory-eviction-tenacity: how long a write may
	// evict, 0 to 100 (default 10, 500 µs; 100: no limit).
	Tenacity int
	// LFULogFactor is lfu-log-factor: how many accesses the LFU counter
	// (OBJECT FREQ) takes to grow, at least 0 (default 10).
	LFULogFactor int
	// LFUDecayTime is lfu-decay-time: the minutes after which an unaccessed
	// LFU counter loses one, 0 for never (default 1).
	LFUDecayTime int
}

// DefaultEvictionParams are Redis's defaults.
var DefaultEvictionParams = EvictionParams{Samples: 5, Tenacity: 10, LFULogFactor: 10, LFUDecayTime: 1}

// setEvictionParams sets the parameters of eviction, each brought within
// its range; the zero EvictionParams sets Redis's defaults.
func (s *Store) setEvictionParams(p EvictionParams) {
	if p == (EvictionParams{}) {
		p = DefaultEvictionParams
	}
	p.Samples = min(max(p.Samples, 1), math.MaxInt32)
	p.Tenacity = min(max(p.Tenacity, 0), 100)
	p.LFULogFactor = min(max(p.LFULogFactor, 0), math.MaxInt32)
	p.LFUDecayTime = min(max(p.LFUDecayTime, 0), math.MaxInt32)
	s.params.Store(&p)
}

// TuneEviction changes the parameters of eviction with fn, which is given
// the ones in force; calls that race each keep the other's change.
func (s *Store) TuneEviction(fn func(*EvictionParams)) {
	for {
		old := s.params.Load()
		p := *old
		fn(&p)
		if p == (EvictionParams{}) {
			p.Samples = 1 // a change to all zeros is no request for the defaults
		}
		if s.params.CompareAndSwap(old, &p) {
			s.setEvictionParams(p)
			return
		}
	}
}

// EvictionParams returns the parameters of eviction in force.
func (s *Store) EvictionParams() EvictionParams { return *s.params.Load() }

func (s *Store) now() int64 {
	if t := s.heldAt.Load(); t != 0 {
		return t
	}
	return s.nowFunc().UnixNano()
}

// Now is the store's clock (Options.Now), the one clock of the server that
// keys expire by; what the server stamps with a time reads it too.
func (s *Store) Now() time.Time { return s.nowFunc() }

// DB returns database n of the store, nil if n is not below Databases().
func (s *Store) DB(n int) *Store {
	if n < 0 || n >= s.databases {
		return nil
	}
	return &s.dbs[n]
}

// Databases is how many databases the store offers (Options.Databases).
func (s *Store) Databases() int { return s.databases }

// Index is the database's number.
func (s *Store) Index() int { return int(s.db) }

// hashOf is the hash of a record's key in its database.
func (s *Store) hashOf(r *record) uint64 { return inDB(maphash.Bytes(s.seed, r.key), r.db) }

// inDB mixes database db's number into h; database 0's hashes are the
// key's own.
func inDB(h uint64, db uint8) uint64 {
	if db == 0 {
		return h
	}
	h ^= uint64(db) * 0x9e3779b97f4a7c15
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	return h
}

func (s *Store) shardFor(key []byte) *shard { return s.shardOf(s.hash(key)) }

func (s *Store) hashString(key string) uint64 { return inDB(maphash.String(s.seed, key), s.db) }

// entryCost is what an entry of this size is charged against MaxMemory.
func entryCost(keyLen, valueLen int) int64 {
	return int64(keyLen) + int64(valueLen) + EntryOverhead
}

// lockShards write-locks, in index order, every shard holding one of the keys
// keys[0], keys[stride], ..., and returns them for unlockShards.
func (s *Store) lockShards(keys [][]byte, stride int) []*shard {
	// On the stack for the usual few keys (an MSET, a SMOVE): a multi-key
	// write made three allocations here, a sixtieth of MSET's time.
	var buf [16]uint64
	hashes := buf[:0]
	for i := 0; i < len(keys); i += stride {
		hashes = append(hashes, s.hash(keys[i]))
	}
	return s.lockShardsOf(hashes, (*sync.RWMutex).Lock)
}

// lockShardsOf locks with lock, once each and in index order (so that two
// callers never wait for each other), the shards of the given hashes, and
// returns them for unlockShards.
func (s *Store) lockShardsOf(hashes []uint64, lock func(*sync.RWMutex)) []*shard {
	var buf [16]int
	idx := buf[:0]
	for _, h := range hashes {
		idx = append(idx, int(h>>(64-shardBits)))
	}
	slices.Sort(idx)
	idx = slices.Compact(idx)
	locked := make([]*shard, len(idx))
	for i, n := range idx {
		locked[i] = &s.shards[n]
		lock(&locked[i].mu)
	}
	return locked
}

// lockAllShards locks every shard with lock, in index order: what reads
// or writes keys it cannot name beforehand (SORT's BY and GET patterns,
// KEYS, FLUSHDB, SWAPDB) does so at one instant, as Redis's one thread does.
func (s *Store) lockAllShards(lock func(*sync.RWMutex)) []*shard {
	locked := make([]*shard, numShards)
	for i := range s.shards {
		locked[i] = &s.shards[i]
		lock(&locked[i].mu)
	}
	return locked
}

// unlockShards unlocks with unlock the shards lockShardsOf locked.
func unlockShards(shards []*shard, unlock func(*sync.RWMutex)) {
	for _, sh := range shards {
		unlock(&sh.mu)
	}
}

// Envelope is a copy of what the store holds for a key.
type Envelope struct {
	// Type is the key's type; Value is set only for a string.
	Type  Type
	Value []byte
	// FreshUntil and StaleUntil are unix nanoseconds; zero means no deadline.
	// For plain writes they are equal.
	FreshUntil int64
	StaleUntil int64
	// Fill is nil unless a read-through fill wrote the entry.
	Fill *FillMeta
}
