// Package persist saves the store to an RDB file and loads it back: the
// snapshot behind SAVE, BGSAVE and SHUTDOWN, and the load at start. The
// file format is package rdb's; the iteration is engine.Store.Snapshot's.
package persist

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/rdb"
)

// SaveResult is what a save wrote.
type SaveResult struct {
	Keys  int
	Bytes int64
}

// Save writes the store's live keys to path as an RDB file, atomically: to
// a temporary file in path's directory, synced, renamed over path, and the
// directory synced, so that a crash at any point leaves either the
// previous file or the new one whole. The temporary file is removed if
// the save fails.
func Save(st *engine.Store, path string, now time.Time) (res SaveResult, err error) {
	return save(st, nil, path, now, false)
}

// save is Save, with rt's state beside the keys if rt is not nil; with
// paced, it works at most about half the time, resting
// after each shard as long as the shard took to copy and write: a
// background save then takes about twice as long and leaves the server
// most of the machine (on two cores, one unpaced save took half of what
// the server's replies had, and its GETs' p99 tripled).
func save(st *engine.Store, rt ReadThrough, path string, now time.Time, paced bool) (res SaveResult, err error) {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "temp-*.rdb")
	if err != nil {
		return res, fmt.Errorf("persist: %w", err)
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	w := rdb.NewWriter(f)
	w.Header(rdb.DefaultAux(now, st.Stats().Cost))
	var e rdb.Entry
	shardStart := time.Now()
	saving := 0 // the database saveItems is given the keys of
	saveItems := func(items []engine.SnapshotItem) error {
		if paced {
			defer func() {
				time.Sleep(time.Since(shardStart))
				shardStart = time.Now()
			}()
		}
		for i := range items {
			if !entryOf(&items[i], &e) {
				continue
			}
			if it := &items[i]; it.Type == engine.TypeString && hasFillState(it) {
				// The tags are looked up after the shard's lock is released:
				// a key filled again since has other tags, and is saved
				// without any (its old fill no longer has a record).
				var tags []string
				if rt != nil && it.Fill != nil {
					tags = rt.TagsOf(saving, string(it.Key), *it.Fill)
				}
				if err := w.Aux(rdb.AuxField{Key: fillAux, Value: encodeFill(it, tags)}); err != nil {
					return err
				}
			}
			if err := w.Write(&e); err != nil {
				return err
			}
			if res.Keys++; res.Keys%saveYieldEvery == 0 {
				runtime.Gosched()
			}
		}
		return nil
	}
	// Each database in turn, as Redis writes them: SELECTDB, then its keys.
	for n := 0; n < st.Databases() && err == nil; n++ {
		db := st.DB(n)
		saving = n
		keys := db.Len()
		if keys == 0 && n > 0 {
			continue
		}
		if err = w.SelectDB(n, keys, db.Volatile()); err == nil {
			err = db.Snapshot(saveItems)
		}
	}
	if err == nil && rt != nil {
		err = writeMissing(w, rt, now)
	}
	if err == nil && rt != nil {
		if state := rt.LoaderState(); len(state) > 0 {
			err = w.Aux(rdb.AuxField{Key: loadersAux, Value: string(state)})
		}
	}
	if err == nil {
		err = w.Close()
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		var fi os.FileInfo
		if fi, err = f.Stat(); err == nil {
			res.Bytes = fi.Size()
		}
	}
	if err == nil {
		err = f.Close()
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return res, fmt.Errorf("persist: saving %s: %w", path, err)
	}
	return res, nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// saveYieldEvery is how many keys a save writes between yields to the
// scheduler. A save runs flat out beside the connections' goroutines, and
// a reply whose goroutine became ready meanwhile would wait until the
// scheduler preempts the save (10 ms); at each yield it goes first. A
// yield costs well under a microsecond.
const saveYieldEvery = 256

// entryOf fills e with it, reusing e's slices; false for a type the file
// cannot hold.
func entryOf(it *engine.SnapshotItem, e *rdb.Entry) bool {
	*e = rdb.Entry{Key: it.Key, Plain: it.Big, Members: e.Members[:0], Scored: e.Scored[:0]}
	if it.StaleUntil != 0 {
		e.ExpireAt = it.StaleUntil / int64(time.Millisecond)
		if e.ExpireAt == 0 {
			e.ExpireAt = 1 // 0 is "none" in an Entry
		}
	}
	switch it.Type {
	case engine.TypeString:
		e.Kind, e.Value = rdb.KindString, it.Value
	case engine.TypeHash:
		e.Kind, e.Pairs = rdb.KindHash, it.Pairs
	case engine.TypeSet:
		e.Kind, e.Members = rdb.KindSet, it.Members
	case engine.TypeList:
		e.Kind, e.Members = rdb.KindList, it.Members
	case engine.TypeStream:
		e.Kind, e.Stream = rdb.KindStream, rdbStream(it.Stream)
	case engine.TypeZSet:
		e.Kind = rdb.KindZSet
		for _, m := range it.Scored {
			e.Scored = append(e.Scored, rdb.Scored{Member: m.Member, Score: m.Score})
		}
	default:
		return false
	}
	return true
}

// LoadOptions says how Load treats what the store cannot hold.
type LoadOptions struct {
	// SkipUnsupported loads the rest of a file that holds types this
	// server lacks (modules, function libraries), instead of
	// refusing it.
	SkipUnsupported bool
	// Progress, if not nil, is called every ProgressEvery keys with the
	// keys loaded and the bytes read so far.
	Progress      func(keys int, read, size int64)
	ProgressEvery int
	// ReadThrough, if not nil, is given the read-through state the file
	// holds beside its keys (tags, keys missing at the origin, loader
	// registrations) once the load has succeeded; nil skips it.
	ReadThrough ReadThrough
}

// LoadResult is what a load found.
type LoadResult struct {
	Keys    int            // loaded
	Expired int            // in the file but past their deadline: dropped
	Skipped map[string]int // by what they were (see rdb.Reader.Skipped)
	Size    int64          // the file's bytes
}

// ErrUnsupported is wrapped by a load's error about a type this server
// lacks (errors.As also finds the *rdb.UnsupportedError).
var ErrUnsupported = errors.New("persist: unsupported type")

// Load reads the RDB file at path into st, which should be empty, dropping
// keys whose deadline has passed at now. A corrupt or truncated file is an
// error wrapping rdb.ErrCorrupt; what was loaded before it stays in st, so
// the caller that refuses to start on half a dataset should discard st.
// A file that does not exist is os.ErrNotExist.
//
// The file is read on the caller's goroutine and written into st on
// another, a batch of keys at a time (engine.Loader), collections as
// strings. The eviction policy learns of the keys after Load returns, in
// the background (see engine.Loader.Done).
func Load(st *engine.Store, path string, now time.Time, opts LoadOptions) (res LoadResult, err error) {
	f, err := os.Open(path)
	if err != nil {
		return res, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return res, err
	}
	res.Size = fi.Size()
	// The fill state of the key that follows, if its AUX field came last.
	var pending fillState
	var missing []missingKey
	var loaders string
	onAux := func(a rdb.AuxField) (err error) {
		pending = fillState{}
		if a.Key == missingAux && opts.ReadThrough != nil {
			if missing, err = decodeMissing(a.Value, missing); err != nil {
				return fmt.Errorf("%w: %w", rdb.ErrCorrupt, err)
			}
		}
		if a.Key == loadersAux && opts.ReadThrough != nil {
			loaders = a.Value
		}
		if a.Key != fillAux {
			return nil
		}
		st, err := decodeFill(a.Value)
		if err != nil {
			return fmt.Errorf("%w: %w", rdb.ErrCorrupt, err)
		}
		pending = st
		return nil
	}
	r := rdb.NewReader(f, res.Size, rdb.Options{SkipUnsupported: opts.SkipUnsupported, Aux: onAux})
	res.Skipped = r.Skipped
	w := &loadWriter{st: st, opts: opts, size: res.Size, skipped: map[string]int{}}
	full, free := make(chan *loadBatch, loadBatches-1), make(chan *loadBatch, loadBatches)
	for range loadBatches {
		free <- &loadBatch{entries: make([]loadEntry, loadBatchKeys), buf: make([]byte, 0, loadBatchBytes)}
	}
	wrote := make(chan error, 1)
	go func() { wrote <- w.run(full, free) }()
	readErr := func() error {
		nowMS := now.UnixMilli()
		for !w.failed.Load() {
			b := <-free
			b.n, b.buf = 0, b.buf[:0]
			for b.n < len(b.entries) && len(b.buf) < loadBatchBytes {
				le := &b.entries[b.n]
				mark := len(b.buf)
				var err error
				if b.buf, err = r.NextAppend(&le.e, b.buf); err != nil {
					b.offset, b.hint = r.Offset(), r.SizeHint()
					full <- b
					if errors.Is(err, io.EOF) {
						return nil
					}
					return err
				}
				e := &le.e
				if e.DB >= st.Databases() {
					r.Skipped["db"]++
					b.buf = b.buf[:mark]
					continue
				}
				if e.ExpireAt != 0 && e.ExpireAt <= nowMS {
					res.Expired++
					b.buf = b.buf[:mark]
					continue
				}
				le.fill, pending = pending, fillState{}
				b.n++
			}
			b.offset, b.hint = r.Offset(), r.SizeHint()
			full <- b
		}
		return nil
	}()
	close(full)
	werr := <-wrote
	res.Keys = w.keys
	for k, n := range w.skipped {
		res.Skipped[k] += n
	}
	if readErr != nil {
		return res, fmt.Errorf("persist: loading %s: %w", path, readErr)
	}
	if werr != nil {
		return res, fmt.Errorf("persist: loading %s: %w", path, werr)
	}
	// Only a whole load's: a caller that discards a half-loaded store
	// must not be left with its tags.
	if rt := opts.ReadThrough; rt != nil {
		for _, t := range w.tagged {
			rt.RestoreTags(t.db, t.key, t.fill, t.tags)
		}
		for _, m := range missing {
			rt.RestoreMissing(m.db, m.key, time.Unix(0, m.until), now)
		}
		if loaders != "" {
			rt.RestoreLoaderState([]byte(loaders))
		}
	}
	return res, nil
}

// A load holds loadBatches batches of at most loadBatchKeys keys or about
// loadBatchBytes of their strings: one being read, one being written, one
// waiting between.
const (
	loadBatches    = 3
	loadBatchKeys  = 1024
	loadBatchBytes = 256 << 10
)

// loadBatch is a run of keys read from the file.
type loadBatch struct {
	entries []loadEntry // the first n hold keys
	n       int
	buf     []byte // the bytes of the entries' keys and strings
	offset  int64  // the reader's offset after the batch, for progress
	hint    uint64 // the file's count of keys (RESIZEDB), 0 if none
}

type loadEntry struct {
	e    rdb.Entry
	fill fillState
}

// loadWriter writes a load's batches into the store.
type loadWriter struct {
	st      *engine.Store
	opts    LoadOptions
	size    int64
	loader  *engine.Loader
	items   []engine.LoadItem
	keys    int
	skipped map[string]int       // what put could not hold, with SkipUnsupported
	failed  atomic.Bool          // an error stopped the writes: the reader stops too
	tagged  []taggedKey          // the origin's tags of the keys written, for opts.ReadThrough
	scored  []engine.ScoreMember // the sorted sets' members of w.items
}

// taggedKey is a loaded key's fill and the origin's tags of it.
type taggedKey struct {
	db   int
	key  string
	fill engine.FillMeta
	tags []string
}

// run writes the batches from full, each returned to free once written,
// until full is closed, and returns the first error; after it, batches are
// returned unwritten.
func (w *loadWriter) run(full <-chan *loadBatch, free chan<- *loadBatch) error {
	var err error
	for b := range full {
		if err == nil {
			if err = w.write(b); err != nil {
				w.failed.Store(true)
			}
		}
		free <- b
	}
	return err
}

func (w *loadWriter) write(b *loadBatch) error {
	if w.loader == nil {
		// A key takes at least 3 bytes of the file: a hint past that is
		// a lie.
		w.loader = w.st.NewLoader(int(min(b.hint, uint64(w.size/3))))
	}
	w.items = w.items[:0]
	for i := range b.entries[:b.n] {
		le := &b.entries[i]
		e := &le.e
		at := e.ExpireAt * int64(time.Millisecond)
		if e.Kind == rdb.KindString {
			opts := engine.SetOptions{FreshUntil: at, StaleUntil: at}
			withFill(&le.fill, e, &opts)
			if opts.Fill != nil && len(le.fill.tags) > 0 && w.opts.ReadThrough != nil {
				w.tagged = append(w.tagged, taggedKey{db: e.DB, key: string(e.Key), fill: *opts.Fill, tags: le.fill.tags})
			}
			w.items = append(w.items, engine.LoadItem{Key: e.Key, Value: e.Value, DB: e.DB,
				FreshUntil: opts.FreshUntil, StaleUntil: opts.StaleUntil, Fill: opts.Fill})
			continue
		}
		it, scored, ok := collectionItem(e, at, w.scored)
		if !ok {
			if w.opts.SkipUnsupported {
				w.skipped[e.Kind.String()]++
				continue
			}
			return unsupported(e)
		}
		w.scored = scored
		it.DB = e.DB
		w.items = append(w.items, it)
	}
	if err := w.flush(); err != nil {
		if errors.Is(err, engine.ErrDuplicateMember) || errors.Is(err, engine.ErrBadStream) {
			return fmt.Errorf("%w: %w", rdb.ErrCorrupt, err)
		}
		return err
	}
	if w.opts.Progress != nil && w.opts.ProgressEvery > 0 && w.keys/w.opts.ProgressEvery != (w.keys-b.n)/w.opts.ProgressEvery {
		w.opts.Progress(w.keys, b.offset, w.size)
	}
	return nil
}

// flush writes the keys gathered in w.items.
func (w *loadWriter) flush() error {
	if len(w.items) == 0 {
		return nil
	}
	if err := w.loader.Write(w.items); err != nil {
		return err
	}
	w.keys += len(w.items)
	w.items, w.scored = w.items[:0], w.scored[:0]
	return nil
}

// collectionItem is the LoadItem of e, a collection, with the deadline at
// (unix nanoseconds; 0 is none); a sorted set's members are appended to
// scored, which it returns. ok is false for a kind the store does not have.
func collectionItem(e *rdb.Entry, at int64, scored []engine.ScoreMember) (_ engine.LoadItem, _ []engine.ScoreMember, ok bool) {
	it := engine.LoadItem{Key: e.Key, StaleUntil: at}
	switch e.Kind {
	case rdb.KindHash:
		it.Type, it.Pairs = engine.TypeHash, e.Pairs
	case rdb.KindSet:
		it.Type, it.Members = engine.TypeSet, e.Members
	case rdb.KindList:
		it.Type, it.Members = engine.TypeList, e.Members
	case rdb.KindZSet:
		from := len(scored)
		for _, m := range e.Scored {
			scored = append(scored, engine.ScoreMember{Member: m.Member, Score: m.Score})
		}
		it.Type, it.Scored = engine.TypeZSet, scored[from:len(scored):len(scored)]
	case rdb.KindStream:
		it.Type, it.Stream = engine.TypeStream, engineStream(e.Stream)
	default:
		return it, scored, false
	}
	return it, scored, true
}

// unsupported is the error of an entry of a kind the store does not have.
func unsupported(e *rdb.Entry) error {
	return fmt.Errorf("%w: %w", ErrUnsupported, &rdb.UnsupportedError{Key: string(e.Key), Type: e.Kind.String()})
}

// Dump is DUMP: key's value in Redis's serialization; found is false if
// key is not live.
func Dump(st *engine.Store, key []byte) (payload []byte, found bool) {
	it, found := st.SnapshotKey(key)
	if !found {
		return nil, false
	}
	payload, _, ok := DumpItem(&it)
	return payload, ok
}

// DumpItem is it, a key as the store copies it (SnapshotKey,
// SnapshotFenced), in DUMP's serialization, with its deadline in unix
// milliseconds (0: none), as MIGRATE sends it; ok is false for a type
// DUMP does not write.
func DumpItem(it *engine.SnapshotItem) (payload []byte, expireAtMs int64, ok bool) {
	var e rdb.Entry
	if !entryOf(it, &e) {
		return nil, 0, false
	}
	return rdb.Dump(&e), e.ExpireAt, true
}

// Restore writes e, a value RESTORE decoded, as key with the deadline at
// (unix nanoseconds; 0 is none), replacing what key held if replace, in
// one change of the store (engine.Store.Restore): engine.ErrBusyKey if key
// is live and not to be replaced, a corrupt collection (members that
// repeat, or none) an rdb.ErrCorrupt with key left as it was. A deadline
// already past leaves key absent, as in Redis. idle and freq are RESTORE's
// IDLETIME and FREQ, negative when not given.
func Restore(st *engine.Store, key []byte, e *rdb.Entry, at int64, replace bool, idle, freq int64) error {
	e.Key = key
	it := engine.LoadItem{Key: key, Value: e.Value, FreshUntil: at, StaleUntil: at}
	if e.Kind != rdb.KindString {
		var ok bool
		if it, _, ok = collectionItem(e, at, nil); !ok {
			return unsupported(e)
		}
	}
	err := st.Restore(it, replace, idle, freq)
	if errors.Is(err, engine.ErrDuplicateMember) || errors.Is(err, engine.ErrEmptyCollection) || errors.Is(err, engine.ErrBadStream) {
		return fmt.Errorf("%w: %w", rdb.ErrCorrupt, err)
	}
	return err
}

// rdbStream is d as the rdb package writes it.
func rdbStream(d *engine.StreamData) *rdb.Stream {
	id := func(i engine.StreamID) rdb.StreamID { return rdb.StreamID{Ms: i.Ms, Seq: i.Seq} }
	st := &rdb.Stream{LastID: id(d.LastID), FirstID: id(d.FirstID), MaxDeleted: id(d.MaxDeleted), EntriesAdded: d.EntriesAdded}
	st.Entries = make([]rdb.StreamEntry, len(d.Entries))
	for i, e := range d.Entries {
		st.Entries[i] = rdb.StreamEntry{ID: id(e.ID), Fields: e.Fields}
	}
	for _, g := range d.Groups {
		rg := rdb.StreamGroup{Name: g.Name, LastID: id(g.LastID), EntriesRead: g.EntriesRead}
		for _, p := range g.Pending {
			rg.Pending = append(rg.Pending, rdb.StreamPending{ID: id(p.ID), Delivered: p.Delivered, Count: p.Count})
		}
		for _, c := range g.Consumers {
			rc := rdb.StreamConsumer{Name: c.Name, Seen: c.Seen}
			for _, p := range c.Pending {
				rc.Pending = append(rc.Pending, id(p))
			}
			rg.Consumers = append(rg.Consumers, rc)
		}
		st.Groups = append(st.Groups, rg)
	}
	return st
}

// engineStream is s as the store loads it.
func engineStream(s *rdb.Stream) *engine.StreamData {
	id := func(i rdb.StreamID) engine.StreamID { return engine.StreamID{Ms: i.Ms, Seq: i.Seq} }
	d := &engine.StreamData{LastID: id(s.LastID), FirstID: id(s.FirstID), MaxDeleted: id(s.MaxDeleted), EntriesAdded: s.EntriesAdded}
	d.Entries = make([]engine.StreamDataEntry, len(s.Entries))
	for i, e := range s.Entries {
		d.Entries[i] = engine.StreamDataEntry{ID: id(e.ID), Fields: e.Fields}
	}
	for _, g := range s.Groups {
		dg := engine.StreamDataGroup{Name: g.Name, LastID: id(g.LastID), EntriesRead: g.EntriesRead,
			EstimateRead: g.EntriesRead == rdb.EntriesReadUnknown}
		for _, p := range g.Pending {
			dg.Pending = append(dg.Pending, engine.StreamDataPending{ID: id(p.ID), Delivered: p.Delivered, Count: p.Count})
		}
		for _, c := range g.Consumers {
			dc := engine.StreamDataConsumer{Name: c.Name, Seen: c.Seen}
			for _, p := range c.Pending {
				dc.Pending = append(dc.Pending, id(p))
			}
			dg.Consumers = append(dg.Consumers, dc)
		}
		d.Groups = append(d.Groups, dg)
	}
	return d
}
