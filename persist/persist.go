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
	w.SelectDB(0, st.Len(), st.Volatile())
	var e rdb.Entry
	err = st.Snapshot(func(items []engine.SnapshotItem) error {
		for i := range items {
			if !entryOf(&items[i], &e) {
				continue
			}
			if items[i].Type == engine.TypeString && hasFillState(&items[i]) {
				if err := w.Aux(rdb.AuxField{Key: fillAux, Value: encodeFill(&items[i])}); err != nil {
					return err
				}
			}
			if err := w.Write(&e); err != nil {
				return err
			}
			res.Keys++
		}
		return nil
	})
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
	// server lacks (streams, modules, function libraries), instead of
	// refusing it.
	SkipUnsupported bool
	// Progress, if not nil, is called every ProgressEvery keys with the
	// keys loaded and the bytes read so far.
	Progress      func(keys int, read, size int64)
	ProgressEvery int
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
	onAux := func(a rdb.AuxField) error {
		pending = fillState{}
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
	nowMS := now.UnixMilli()
	for {
		e, err := r.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				return res, nil
			}
			return res, fmt.Errorf("persist: loading %s: %w", path, err)
		}
		if e.DB != 0 {
			r.Skipped["db"]++
			continue
		}
		if e.ExpireAt != 0 && e.ExpireAt <= nowMS {
			res.Expired++
			continue
		}
		fill := pending
		pending = fillState{}
		if err := put(st, e, e.ExpireAt*int64(time.Millisecond), &fill); err != nil {
			var u *rdb.UnsupportedError
			if errors.As(err, &u) && opts.SkipUnsupported {
				r.Skipped[u.Type]++
				continue
			}
			return res, fmt.Errorf("persist: loading %s: key %q: %w", path, e.Key, err)
		}
		res.Keys++
		if opts.Progress != nil && opts.ProgressEvery > 0 && res.Keys%opts.ProgressEvery == 0 {
			opts.Progress(res.Keys, r.Offset(), res.Size)
		}
	}
}

// put writes e into st with the deadline at (unix nanoseconds; 0 is
// none). A collection whose members repeat is corrupt, as Redis's loader
// finds it.
func put(st *engine.Store, e *rdb.Entry, at int64, fill *fillState) error {
	var n, want int
	var err error
	switch e.Kind {
	case rdb.KindString:
		opts := engine.SetOptions{FreshUntil: at, StaleUntil: at}
		if fill != nil {
			withFill(fill, e, &opts)
		}
		_, err = st.Set(e.Key, e.Value, opts)
		return err
	case rdb.KindHash:
		n, err = st.HSet(e.Key, e.Pairs)
		want = len(e.Pairs) / 2
	case rdb.KindSet:
		n, err = st.SAdd(e.Key, e.Members)
		want = len(e.Members)
	case rdb.KindList:
		// A list's elements may repeat: its length is what to check.
		n, err = st.LPush(e.Key, e.Members, false, false)
		want = len(e.Members)
	case rdb.KindZSet:
		pairs := make([]engine.ScoreMember, len(e.Scored))
		for i, m := range e.Scored {
			pairs[i] = engine.ScoreMember{Member: m.Member, Score: m.Score}
		}
		var zr engine.ZAddResult
		zr, err = st.ZAdd(e.Key, engine.ZAddOptions{}, pairs)
		n, want = zr.Added, len(pairs)
	default:
		return fmt.Errorf("%w: %w", ErrUnsupported, &rdb.UnsupportedError{Key: string(e.Key), Type: e.Kind.String()})
	}
	if err != nil {
		return err
	}
	if n != want {
		st.Delete(e.Key)
		return fmt.Errorf("%w: duplicate members", rdb.ErrCorrupt)
	}
	if at != 0 {
		st.Expire(e.Key, at, engine.ExpireAlways)
	}
	return nil
}

// Dump is DUMP: key's value in Redis's serialization; found is false if
// key is not live.
func Dump(st *engine.Store, key []byte) (payload []byte, found bool) {
	it, found := st.SnapshotKey(key)
	if !found {
		return nil, false
	}
	var e rdb.Entry
	if !entryOf(&it, &e) {
		return nil, false
	}
	return rdb.Dump(&e), true
}

// Restore writes e, a value RESTORE decoded, as key with the deadline at
// (unix nanoseconds; 0 is none), replacing what key held if replace. A
// deadline already past leaves key absent, as in Redis.
func Restore(st *engine.Store, key []byte, e *rdb.Entry, at int64, replace bool) error {
	if replace {
		st.Delete(key)
	}
	if at != 0 && at <= time.Now().UnixNano() {
		return nil
	}
	e.Key = key
	return put(st, e, at, nil)
}
