package swr

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/metrics"
)

// Bounds of the tag index, for Options fields left zero.
const (
	// DefaultMaxTagsPerKey is how many of an origin's tags a key keeps
	// (--max-tags-per-key); the rest are dropped and counted.
	DefaultMaxTagsPerKey = 32
	// DefaultMaxTagEntries bounds the (key, tag) pairs the index holds
	// (--max-tag-entries).
	DefaultMaxTagEntries = 1_000_000
	// MaxTagLength is the longest tag kept, in bytes, as Fastly's limit on
	// a surrogate key; a longer one is dropped and counted.
	MaxTagLength = 1024
)

// What the tag index charges to the store's memory bound (engine.Charge),
// estimated as EntryOverhead is: per tagged key, its key and its record
// (map slot, fill metadata, slice); per tag of a key, the tag and its slot
// in the tag's set.
const (
	tagRecordOverhead = 192
	tagPairOverhead   = 96
)

// ErrPurgeLocal is what Purge's error matches when the purge reached only
// this replica: the fleet's shared Redis did not take it.
var ErrPurgeLocal = errors.New("swr: the purge reached only this replica")

// PurgeFleet shares PURGE.TAG with the other replicas of a fleet
// (cluster.Client implements it, --redis).
type PurgeFleet interface {
	// PurgeShared purges tags in database db's part of the shared tier: an
	// entry that carries any
	// of them, of a key may allows (nil: any), is deleted or, soft, made
	// stale at now (unix nanoseconds). It returns the keys it purged.
	PurgeShared(ctx context.Context, db int, tags []string, soft bool, now int64, may KeyFilter) ([]string, error)
	// AnnouncePurge tells the other replicas of the purge of tags, and of
	// keys (those purged in the shared tier, which a replica may hold
	// without having filled them), and returns once every replica heard
	// recently applied it, or after the fleet's timeout.
	AnnouncePurge(ctx context.Context, db int, tags, keys []string, soft bool) error
	// WatchPurges sets the function that applies the purges other replicas
	// announce to this replica's store, each in its database.
	WatchPurges(apply func(db int, tags, keys []string, soft bool))
}

// tagIndex finds the keys that carry a tag, for PURGE.TAG, outside the
// store: the store knows nothing of tags. A record holds the fill it was
// made for (the entry's engine.FillMeta, compared by value), and holds only
// while the key's entry is that fill. A key written, deleted, evicted or
// expired since keeps its record until a purge, FILL.INFO or a full index
// finds it stale and drops it; until then it is charged to the memory
// bound, as a live one is.
//
// One index serves every database, so --max-tag-entries bounds the
// server's pairs, as the memory bound is the server's; a database's
// Filler sees its own keys through a dbTags.
type tagIndex struct {
	store                 *engine.Store // database 0's view
	m                     *metrics.Fill
	maxPerKey, maxEntries int

	mu      sync.Mutex
	keys    map[tagKey]*taggedKey          // key -> its record
	byTag   map[string]map[tagKey]struct{} // tag -> keys whose record has it
	entries int                            // (key, tag) pairs
	charged int64                          // bytes the records cost
	applied int64                          // of those, what the store was charged
}

// tagKey is a key of one database.
type tagKey struct {
	db  int
	key string
}

// taggedKey is the record of one key: the fill it was made for, and the
// fill's tags.
type taggedKey struct {
	fill engine.FillMeta
	tags []string
}

func newTagIndex(store *engine.Store, m *metrics.Fill, maxPerKey, maxEntries int) *tagIndex {
	if maxPerKey <= 0 {
		maxPerKey = DefaultMaxTagsPerKey
	}
	if maxEntries <= 0 {
		maxEntries = DefaultMaxTagEntries
	}
	return &tagIndex{store: store, m: m, maxPerKey: min(maxPerKey, maxEntries), maxEntries: maxEntries,
		keys: make(map[tagKey]*taggedKey), byTag: make(map[string]map[tagKey]struct{})}
}

// bound returns the tags of loader name's answer that a key keeps: none
// longer than MaxTagLength, at most maxPerKey, the rest counted.
func (ix *tagIndex) bound(name string, tags []string) []string {
	var out []string
	for _, t := range tags {
		switch {
		case len(t) > MaxTagLength:
			ix.m.TagsDropped.WithLabelValues(name, "length").Inc()
		case len(out) == ix.maxPerKey:
			ix.m.TagsDropped.WithLabelValues(name, "per_key").Inc()
		default:
			out = append(out, t)
		}
	}
	return out
}

// record makes tags the record of key, whose entry is now the fill fill
// (nil: not a fill); no tags or no fill forget the key. Tags past
// maxPerKey are not kept (another replica's entry may carry more). In a
// full index it drops stale records, then, if that is not enough, evicts
// other tagged keys from the store: every tagged entry stays findable by
// its tags.
func (ix *tagIndex) record(key tagKey, fill *engine.FillMeta, tags []string) {
	tags = tags[:min(len(tags), ix.maxPerKey)]
	ix.mu.Lock()
	if ix.keys[key] == nil && (fill == nil || len(tags) == 0) {
		ix.mu.Unlock() // the common case of an untagged fill
		return
	}
	ix.removeLocked(key)
	var victims []tagKey
	if fill != nil && len(tags) > 0 {
		victims = ix.makeRoomLocked(key, len(tags))
		ix.addLocked(key, &taggedKey{fill: *fill, tags: slices.Clone(tags)})
	}
	ix.mu.Unlock()
	ix.settle(victims)
}

// makeRoomLocked removes records until need more pairs fit, stale ones
// first, and returns the keys of live ones it removed, which the caller
// must delete from the store. ix.mu is held.
func (ix *tagIndex) makeRoomLocked(keep tagKey, need int) (victims []tagKey) {
	const staleScan = 256 // live records looked past for stale ones
	full := func() bool { return ix.entries+need > ix.maxEntries }
	scanned := 0
	for k, rec := range ix.keys {
		if !full() || scanned == staleScan {
			break
		}
		scanned++
		if k != keep && !ix.live(k, rec) {
			ix.removeLocked(k)
		}
	}
	for k := range ix.keys {
		if !full() {
			break
		}
		if k != keep {
			ix.removeLocked(k)
			victims = append(victims, k)
		}
	}
	return victims
}

// live reports whether key's entry is still the fill rec was made for.
func (ix *tagIndex) live(key tagKey, rec *taggedKey) bool {
	env, found := ix.store.DB(key.db).Peek([]byte(key.key))
	return found && env.Fill != nil && *env.Fill == rec.fill
}

func (ix *tagIndex) addLocked(key tagKey, rec *taggedKey) {
	ix.keys[key] = rec
	for _, t := range rec.tags {
		set := ix.byTag[t]
		if set == nil {
			set = make(map[tagKey]struct{})
			ix.byTag[t] = set
		}
		set[key] = struct{}{}
		ix.charged += int64(len(t)) + tagPairOverhead
	}
	ix.entries += len(rec.tags)
	ix.charged += int64(len(key.key)) + tagRecordOverhead
}

// removeLocked drops key's record, if any.
func (ix *tagIndex) removeLocked(key tagKey) {
	rec := ix.keys[key]
	if rec == nil {
		return
	}
	delete(ix.keys, key)
	for _, t := range rec.tags {
		delete(ix.byTag[t], key)
		if len(ix.byTag[t]) == 0 {
			delete(ix.byTag, t)
		}
		ix.charged -= int64(len(t)) + tagPairOverhead
	}
	ix.entries -= len(rec.tags)
	ix.charged -= int64(len(key.key)) + tagRecordOverhead
}

// forget drops key's record if it is still rec.
func (ix *tagIndex) forget(key tagKey, rec *taggedKey) {
	ix.mu.Lock()
	if ix.keys[key] == rec {
		ix.removeLocked(key)
	}
	ix.mu.Unlock()
	ix.settle(nil)
}

// settle brings the store's charge and the gauges up to date, and deletes
// the keys evicted to make room.
func (ix *tagIndex) settle(victims []tagKey) {
	ix.mu.Lock()
	ix.store.Charge(ix.charged - ix.applied) // no I/O: counters only
	ix.applied = ix.charged
	ix.m.TagEntries.Set(float64(ix.entries))
	ix.m.TagBytes.Set(float64(ix.charged))
	ix.mu.Unlock()
	for _, k := range victims {
		ix.store.DB(k.db).Delete([]byte(k.key))
		ix.m.TagEvictions.Inc()
	}
}

// of returns the tags of key's record if it was made for env's fill.
func (ix *tagIndex) of(key tagKey, env engine.Envelope) []string {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	if rec := ix.keys[key]; rec != nil && env.Fill != nil && *env.Fill == rec.fill {
		return slices.Clone(rec.tags)
	}
	return nil
}

// candidates returns the records of database db's keys indexed under any
// of tags.
func (ix *tagIndex) candidates(db int, tags []string) map[string]*taggedKey {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	out := make(map[string]*taggedKey)
	for _, t := range tags {
		for k := range ix.byTag[t] {
			if k.db == db {
				out[k.key] = ix.keys[k]
			}
		}
	}
	return out
}

// swap relabels the records of databases a and b, which SWAPDB swapped.
func (ix *tagIndex) swap(a, b int) {
	ix.mu.Lock()
	defer ix.mu.Unlock()
	moved := make(map[tagKey]*taggedKey)
	for k, rec := range ix.keys {
		if k.db == a || k.db == b {
			moved[k] = rec
		}
	}
	for k := range moved {
		ix.removeLocked(k)
	}
	for k, rec := range moved {
		ix.addLocked(tagKey{a + b - k.db, k.key}, rec)
	}
}

// dbTags is a database's view of the tag index.
type dbTags struct {
	ix *tagIndex
	db int
}

func (t dbTags) key(key string) tagKey { return tagKey{t.db, key} }

func (t dbTags) bound(name string, tags []string) []string { return t.ix.bound(name, tags) }

func (t dbTags) record(key string, fill *engine.FillMeta, tags []string) {
	t.ix.record(t.key(key), fill, tags)
}

func (t dbTags) of(key string, env engine.Envelope) []string { return t.ix.of(t.key(key), env) }

func (t dbTags) forget(key string, rec *taggedKey) { t.ix.forget(t.key(key), rec) }

func (t dbTags) candidates(tags []string) map[string]*taggedKey { return t.ix.candidates(t.db, tags) }

// KeyFilter says which keys a purge may touch: those for which it is
// true. A nil KeyFilter allows every key.
type KeyFilter func(key string) bool

// allows reports whether may lets a purge touch key.
func (may KeyFilter) allows(key string) bool { return may == nil || may(key) }

// Purge purges every key that carries any of tags (PURGE.TAG) and that
// may allows (PURGE.TAG's user may write it; nil: every key): hard, it
// deletes them; soft, it makes them stale, so they are served stale while
// one refresh per key runs. With a PurgeFleet (--redis) the shared tier is
// purged first, so no replica's refresh can take the old entry back from
// it, then this replica, then the others. It returns how many keys it
// purged, here and in the shared tier, each counted once; an error
// matching ErrPurgeLocal says the other replicas were not reached.
//
// A filtered purge is announced to the other replicas by its keys alone
// (those purged in the shared tier), never by its tags: a replica would
// purge every key it holds under the tags, and the filter, the user's
// permissions here, does not travel.
//
// c says where the caller runs. Inside the section (PURGE.TAG in EXEC)
// this replica is purged at once and the fleet once c has left the
// section, as a purge another replica announced: the count is this
// replica's alone.
func (f *Filler) Purge(ctx context.Context, c Caller, tags []string, soft bool, may KeyFilter) (int, error) {
	pf := f.opts.Purges
	if c.InSection {
		purged := f.purgeHere(c, tags, nil, soft, "local", may)
		if pf != nil {
			c.afterSection(func() {
				shared, err := pf.PurgeShared(ctx, f.db(), tags, soft, f.now().UnixNano(), may)
				if err == nil {
					f.purgeHere(outside, tags, shared, soft, "local", may)
					_ = pf.AnnouncePurge(ctx, f.db(), announcedTags(tags, may), shared, soft)
				}
			})
		}
		return len(purged), nil
	}
	var shared []string
	var fleetErr error
	if pf != nil {
		shared, fleetErr = pf.PurgeShared(ctx, f.db(), tags, soft, f.now().UnixNano(), may)
	}
	purged := f.purgeHere(c, tags, shared, soft, "local", may)
	for _, k := range shared {
		purged[k] = struct{}{}
	}
	if pf != nil && fleetErr == nil {
		fleetErr = pf.AnnouncePurge(ctx, f.db(), announcedTags(tags, may), shared, soft)
	}
	if fleetErr != nil {
		return len(purged), fmt.Errorf("%w: %w", ErrPurgeLocal, fleetErr)
	}
	return len(purged), nil
}

// announcedTags are the tags a purge is announced by: none for a filtered
// one, which goes by its keys.
func announcedTags(tags []string, may KeyFilter) []string {
	if may != nil {
		return nil
	}
	return tags
}

// heardPurge applies a purge another replica announced in database db.
func (f *Filler) heardPurge(db int, tags, keys []string, soft bool) {
	if g := f.DB(db); g != nil {
		g.purgeHere(outside, tags, keys, soft, "fleet", nil)
	}
}

// purgeHere purges, in this replica's store, the keys indexed under any of
// tags, and keys (the shared tier's, which may be here without a record:
// copied in by a plain read), of those may allows, and returns those it
// purged. Only a fill is purged: a key a client wrote since is left
// alone. origin labels the metrics: local or fleet. c says how the caller
// holds the section.
func (f *Filler) purgeHere(c Caller, tags, keys []string, soft bool, origin string, may KeyFilter) map[string]struct{} {
	cands := f.tags.candidates(tags)
	for _, k := range keys {
		if _, ok := cands[k]; !ok {
			cands[k] = nil // no record here
		}
	}
	now := f.now().UnixNano()
	purged := make(map[string]struct{})
	for key, rec := range cands {
		if !may.allows(key) {
			continue
		}
		env, found := f.opts.Store.Peek([]byte(key))
		if !found || env.Fill == nil || rec != nil && *env.Fill != rec.fill {
			if rec != nil {
				f.tags.forget(key, rec) // stale: the key is no longer that fill
			}
			continue
		}
		if soft {
			if !f.markStale(c, key, *env.Fill, now) {
				continue
			}
		} else {
			f.within(c, func() { f.opts.Store.Delete([]byte(key)) })
			// A flight that began before the purge may bring the old
			// value: the next caller starts a new one.
			f.group.Forget(key)
			if rec != nil {
				f.tags.forget(key, rec)
			}
		}
		purged[key] = struct{}{}
	}
	mode := pick(soft, "soft", "hard")
	f.opts.Metrics.TagPurges.WithLabelValues(mode, origin).Inc()
	f.opts.Metrics.TagPurgedKeys.WithLabelValues(mode, origin).Add(float64(len(purged)))
	return purged
}

// markStale makes key's entry, if it is still the fill fill, stale at now,
// keeping its value and its stale deadline, and reports whether the entry
// is stale now. It writes under a fence, so a write made meanwhile wins.
func (f *Filler) markStale(c Caller, key string, fill engine.FillMeta, now int64) bool {
	fence := f.opts.Store.Fence([]byte(key))
	env, found := f.opts.Store.Peek([]byte(key))
	switch {
	case !found || env.Fill == nil || *env.Fill != fill:
		fence.Release()
		return false
	case env.FreshUntil != 0 && env.FreshUntil <= now:
		fence.Release()
		return true // stale already
	}
	var set engine.SetResult
	var err error
	f.within(c, func() {
		set, err = f.opts.Store.Set([]byte(key), env.Value, engine.SetOptions{FreshUntil: now, StaleUntil: env.StaleUntil,
			Fill: env.Fill, Fence: fence})
	})
	return err == nil && set.Written
}
