package persist

import (
	"encoding/binary"
	"errors"
	"time"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/rdb"
)

// fillAux names the AUX field that carries a read-through key's state
// beside its value: its fresh deadline and its fill metadata (loader,
// validators, load time). It comes just before the key it describes;
// redis-server ignores AUX fields it does not know, so it loads the same
// file with the value and the (stale) deadline alone.
const fillAux = "stampedeless-fill"

// hasFillState reports whether it carries more than a value and one
// deadline.
func hasFillState(it *engine.SnapshotItem) bool {
	return it.Fill != nil || it.FreshUntil != 0 && it.FreshUntil != it.StaleUntil
}

// encodeFill is the fillAux value of it with the origin's tags: a format
// byte (1, or 2 with tags), the fresh deadline, the load time, then the
// loader, ETag, Last-Modified, with format 2 the count of tags and each
// tag, and the key, each string with its length but the key.
func encodeFill(it *engine.SnapshotItem, tags []string) string {
	b := []byte{1}
	if len(tags) > 0 {
		b[0] = 2
	}
	b = binary.AppendVarint(b, it.FreshUntil)
	var f engine.FillMeta
	if it.Fill != nil {
		f = *it.Fill
	}
	b = binary.AppendUvarint(b, uint64(f.LoadTime))
	for _, s := range []string{f.Loader, f.ETag, f.LastModified} {
		b = appendField(b, s)
	}
	if len(tags) > 0 {
		b = binary.AppendUvarint(b, uint64(len(tags)))
		for _, t := range tags {
			b = appendField(b, t)
		}
	}
	return string(append(b, it.Key...))
}

func appendField(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// readField reads a string appendField wrote at the head of b, and returns
// the rest of b.
func readField(b []byte) (string, []byte, bool) {
	l, n := binary.Uvarint(b)
	if n <= 0 || l > uint64(len(b)-n) {
		return "", nil, false
	}
	return string(b[n : n+int(l)]), b[n+int(l):], true
}

// fillState is a decoded fillAux value.
type fillState struct {
	key   string
	fresh int64
	fill  *engine.FillMeta // nil if the key had none
	tags  []string         // the origin's tags of the fill (format 2)
}

var errFillAux = errors.New("malformed " + fillAux + " field")

func decodeFill(v string) (fillState, error) {
	b := []byte(v)
	if len(b) == 0 || b[0] != 1 && b[0] != 2 {
		return fillState{}, errFillAux
	}
	format := b[0]
	b = b[1:]
	fresh, n := binary.Varint(b)
	if n <= 0 {
		return fillState{}, errFillAux
	}
	b = b[n:]
	load, n := binary.Uvarint(b)
	if n <= 0 {
		return fillState{}, errFillAux
	}
	b = b[n:]
	var strs [3]string
	for i := range strs {
		var ok bool
		if strs[i], b, ok = readField(b); !ok {
			return fillState{}, errFillAux
		}
	}
	var tags []string
	if format == 2 {
		count, n := binary.Uvarint(b)
		// A tag takes at least its length's byte: a count past what is
		// left is a lie, refused before anything is made for it.
		if n <= 0 || count == 0 || count > uint64(len(b)-n) {
			return fillState{}, errFillAux
		}
		b = b[n:]
		tags = make([]string, count)
		for i := range tags {
			var ok bool
			if tags[i], b, ok = readField(b); !ok {
				return fillState{}, errFillAux
			}
		}
	}
	st := fillState{key: string(b), fresh: fresh, tags: tags}
	if load != 0 || strs != [3]string{} {
		st.fill = &engine.FillMeta{Loader: strs[0], ETag: strs[1], LastModified: strs[2], LoadTime: time.Duration(load)}
	}
	return st, nil
}

// withFill applies a pending fill state to e's write if it names e.
func withFill(pending *fillState, e *rdb.Entry, opts *engine.SetOptions) {
	if pending.key != string(e.Key) || e.Kind != rdb.KindString {
		return
	}
	if pending.fresh != 0 && (opts.StaleUntil == 0 || pending.fresh < opts.StaleUntil) {
		opts.FreshUntil = pending.fresh
	}
	opts.Fill = pending.fill
}
