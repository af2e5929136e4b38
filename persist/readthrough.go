package persist

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/rdb"
)

// ReadThrough is the read-through state that lives outside the store and
// that a snapshot keeps beside its keys (swr.Filler implements it): the
// origin's tags of each filled key, which PURGE.TAG looks up, and the keys
// the origin recently said do not exist (--negative-ttl). A save or load
// without one neither writes nor reads it; a file's fields of it are then
// skipped. Its methods are called with no lock of the store held.
type ReadThrough interface {
	// TagsOf returns the origin's tags of key of database db if its entry
	// is the fill fill, nil if it has none.
	TagsOf(db int, key string, fill engine.FillMeta) []string
	// RestoreTags records tags as those of key of database db, whose entry
	// is now the fill fill.
	RestoreTags(db int, key string, fill engine.FillMeta, tags []string)
	// EachMissing calls fn with each key (and its database) remembered at
	// now as missing at the origin, and the end of that memory, until fn
	// returns an error, which it returns.
	EachMissing(now time.Time, fn func(db int, key string, until time.Time) error) error
	// RestoreMissing remembers key of database db as missing at the origin
	// until until.
	RestoreMissing(db int, key string, until, now time.Time)
	// LoaderState returns the loader registrations to keep, nil for none:
	// bytes whose format is their owner's (package loader's), with a format
	// byte first. They may hold secrets (header values).
	LoaderState() []byte
	// RestoreLoaderState applies state, which LoaderState returned when the
	// file was saved. What it cannot or must not apply it skips, and logs:
	// the load goes on.
	RestoreLoaderState(state []byte)
}

// loadersAux names the AUX field that carries ReadThrough.LoaderState, if
// it returned any bytes; it comes after the last key. A file without it
// (written before it existed, or with no registrations) restores none.
const loadersAux = "stampedeless-loaders"

// missingAux names the AUX fields that carry the keys remembered as
// missing at the origin: a format byte (2), then for each key its database
// (a uvarint), the end of its memory (unix nanoseconds, a varint) and the
// key with its length. Format 1, written before the databases, has no
// database: its keys are database 0's.
// They come after the last key, at most missingAuxBytes each; redis-server
// ignores them.
const (
	missingAux      = "stampedeless-missing"
	missingAuxBytes = 64 << 10
)

var errMissingAux = errors.New("malformed " + missingAux + " field")

// writeMissing writes rt's keys remembered as missing at now to w.
func writeMissing(w *rdb.Writer, rt ReadThrough, now time.Time) error {
	b := []byte{2}
	put := func() error {
		if len(b) == 1 {
			return nil
		}
		err := w.Aux(rdb.AuxField{Key: missingAux, Value: string(b)})
		b = b[:1]
		return err
	}
	err := rt.EachMissing(now, func(db int, key string, until time.Time) error {
		b = binary.AppendUvarint(b, uint64(db))
		b = appendField(binary.AppendVarint(b, until.UnixNano()), key)
		if len(b) >= missingAuxBytes {
			return put()
		}
		return nil
	})
	if err != nil {
		return err
	}
	return put()
}

// missingKey is a key remembered as missing at the origin, as a file holds
// it.
type missingKey struct {
	db    int
	key   string
	until int64 // unix nanoseconds
}

// decodeMissing appends the keys of a missingAux value to to.
func decodeMissing(v string, to []missingKey) ([]missingKey, error) {
	b := []byte(v)
	if len(b) == 0 || b[0] != 1 && b[0] != 2 {
		return to, errMissingAux
	}
	withDB := b[0] == 2
	for b = b[1:]; len(b) > 0; {
		var db uint64
		if withDB {
			var n int
			if db, n = binary.Uvarint(b); n <= 0 || db >= engine.MaxDatabases {
				return to, errMissingAux
			}
			b = b[n:]
		}
		until, n := binary.Varint(b)
		if n <= 0 {
			return to, errMissingAux
		}
		var key string
		var ok bool
		if key, b, ok = readField(b[n:]); !ok {
			return to, errMissingAux
		}
		to = append(to, missingKey{int(db), key, until})
	}
	return to, nil
}
