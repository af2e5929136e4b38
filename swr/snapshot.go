package swr

import (
	"errors"
	"log/slog"
	"time"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/loader"
)

// The Filler's part of a snapshot (persist.ReadThrough): what it keeps
// outside the store about the keys, so that a restart finds it again.

// TagsOf returns the origin's tags of key of database db if its entry is
// the fill fill, nil if it has none.
func (f *Filler) TagsOf(db int, key string, fill engine.FillMeta) []string {
	return f.tags.ix.of(tagKey{db, key}, engine.Envelope{Fill: &fill})
}

// RestoreTags records tags as the origin's tags of key of database db,
// whose entry is the fill fill, as a fill that brought them would.
func (f *Filler) RestoreTags(db int, key string, fill engine.FillMeta, tags []string) {
	f.tags.ix.record(tagKey{db, key}, &fill, tags)
}

// EachMissing calls fn with each key (and its database) the origin said
// does not exist that is still remembered at now (no client wrote it
// since), with the end of its memory, until fn returns an error, which it
// returns. fn is called with no lock held.
func (f *Filler) EachMissing(now time.Time, fn func(db int, key string, until time.Time) error) error {
	type missing struct {
		db    int
		key   string
		until time.Time
	}
	var all []missing
	for db := range f.dbs.all {
		g := f.dbs.all[db].Load()
		if g == nil {
			continue
		}
		c, flushes := g.negative, g.opts.Store.Flushes()
		c.mu.Lock()
		if c.current(flushes) {
			c.keys.Each(now, func(key string, fence *engine.Fence, until time.Time) bool {
				if !fence.Written() {
					all = append(all, missing{db, key, until})
				}
				return true
			})
		}
		c.mu.Unlock()
	}
	for _, m := range all {
		if err := fn(m.db, m.key, m.until); err != nil {
			return err
		}
	}
	return nil
}

// RestoreMissing remembers key of database db as missing at the origin
// until until, or for NegativeTTL from now if that ends sooner (the server
// may have been restarted with a shorter --negative-ttl).
func (f *Filler) RestoreMissing(db int, key string, until, now time.Time) {
	if limit := now.Add(f.opts.NegativeTTL); limit.Before(until) {
		until = limit
	}
	if g := f.DB(db); g != nil && now.Before(until) {
		g.remember(key, until, now)
	}
}

// LoaderState returns the loaders registered at run time (LOADER.REGISTER)
// in effect, as loader.Registry.State encodes them.
func (f *Filler) LoaderState() []byte {
	if f.opts.Loaders == nil {
		return nil
	}
	return f.opts.Loaders.State()
}

// RestoreLoaderState registers again the loaders of state, which
// LoaderState returned, through LOADER.REGISTER's checks: one the flags
// now refuse (--loader-allow) is logged and skipped. With a fleet
// (--redis) none is: the fleet's registrations apply.
func (f *Filler) RestoreLoaderState(state []byte) {
	if f.opts.Loaders == nil {
		return
	}
	log := f.opts.Logger
	if log == nil {
		log = slog.Default()
	}
	restored, err := f.opts.Loaders.Restore(state)
	switch {
	case errors.Is(err, loader.ErrShared):
		log.Info("the snapshot's loader registrations are not restored: with --redis the fleet's registrations apply")
		return
	case errors.Is(err, loader.ErrBadState):
		log.Warn("the snapshot's loader registrations cannot be read; none is restored", "err", err)
		return
	}
	if len(restored) > 0 {
		log.Info("loader registrations restored from the snapshot", "prefixes", restored)
	}
	refused := []error{err}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		refused = j.Unwrap()
	}
	for _, err := range refused {
		if err != nil {
			log.Warn("a loader registration in the snapshot is refused by this configuration and skipped; register it again if it should be", "err", err)
		}
	}
}
