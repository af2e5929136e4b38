package keyspace

import (
	"bytes"
	"errors"
	"math"
	"strconv"
	"time"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/resp"
)

// The stream commands (Redis's t_stream.c). Each parses what Redis parses
// before it looks at the key, then does all its reading and writing of
// its keys in one engine.Store.StreamOp, replying from inside it where
// the entries' bytes are read (they alias the stream), so that what a
// command answers and changes is one instant. Arguments are checked in
// Redis's order, so that a call with two faults gets Redis's error.

const errInvalidStreamID = "ERR Invalid stream ID specified as stream command argument"

// errStreamReplied is returned from a StreamOp whose function has written
// its own (error) reply.
var errStreamReplied = errors.New("replied")

// parseUint64 is Redis's string2ull: string2ll's strict syntax, or
// strtoull's (leading spaces, a sign) for what string2ll refuses.
func parseUint64(b []byte) (uint64, bool) {
	if v, ok := resp.ParseInt(b); ok {
		return uint64(v), v >= 0
	}
	s := string(b)
	i := 0
	for i < len(s) && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	if i == len(s) {
		return 0, false
	}
	v, err := strconv.ParseUint(s[i:], 10, 64)
	if err != nil {
		return 0, false
	}
	if neg {
		v = -v
	}
	return v, true
}

// parseStreamID is Redis's streamGenericParseIDOrReply: "<ms>-<seq>", or
// "<ms>" with missingSeq, "-" and "+" unless strict, and "<ms>-*" where
// seqGiven is not nil (set false then).
func parseStreamID(b []byte, missingSeq uint64, strict bool, seqGiven *bool) (engine.StreamID, bool) {
	if len(b) > 127 {
		return engine.StreamID{}, false
	}
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i] // Redis reads a C string
	}
	if strict && len(b) == 1 && (b[0] == '-' || b[0] == '+') {
		return engine.StreamID{}, false
	}
	if seqGiven != nil {
		*seqGiven = true
	}
	if len(b) == 1 && b[0] == '-' {
		return engine.StreamID{}, true
	}
	if len(b) == 1 && b[0] == '+' {
		return engine.MaxStreamID, true
	}
	msPart, seqPart, dash := bytes.Cut(b, []byte{'-'})
	ms, ok := parseUint64(msPart)
	if !ok {
		return engine.StreamID{}, false
	}
	seq := missingSeq
	if dash {
		if seqGiven != nil && len(seqPart) == 1 && seqPart[0] == '*' {
			seq = 0
			*seqGiven = false
		} else if seq, ok = parseUint64(seqPart); !ok {
			return engine.StreamID{}, false
		}
	}
	return engine.StreamID{Ms: ms, Seq: seq}, true
}

// parseStrictID is an ID where "-" and "+" are not, replying Redis's
// error.
func parseStrictID(c *commands.Ctx, b []byte) (engine.StreamID, bool) {
	id, ok := parseStreamID(b, 0, true, nil)
	if !ok {
		c.W.Error(errInvalidStreamID)
	}
	return id, ok
}

// parseRangeStart and parseRangeEnd read a range's ends as XRANGE,
// XPENDING and XAUTOCLAIM do: "(" excludes the ID, "-" and "+" are the
// extremes, a missing sequence is the least (start) or greatest (end).
func parseRangeStart(c *commands.Ctx, b []byte) (engine.StreamID, bool) {
	id, ex, ok := parseIntervalID(c, b, 0)
	if !ok {
		return id, false
	}
	if ex {
		if id, ok = id.Next(); !ok {
			c.W.Error("ERR invalid start ID for the interval")
			return id, false
		}
	}
	return id, true
}

func parseRangeEnd(c *commands.Ctx, b []byte) (engine.StreamID, bool) {
	id, ex, ok := parseIntervalID(c, b, math.MaxUint64)
	if !ok {
		return id, false
	}
	if ex {
		if id, ok = id.Prev(); !ok {
			c.W.Error("ERR invalid end ID for the interval")
			return id, false
		}
	}
	return id, true
}

func parseIntervalID(c *commands.Ctx, b []byte, missingSeq uint64) (id engine.StreamID, exclude, ok bool) {
	exclude = len(b) > 1 && b[0] == '('
	if exclude {
		id, ok = parseStreamID(b[1:], missingSeq, true, nil)
	} else {
		id, ok = parseStreamID(b, missingSeq, false, nil)
	}
	if !ok {
		c.W.Error(errInvalidStreamID)
	}
	return id, exclude, ok
}

// parseLongLong is getLongLongFromObjectOrReply: an integer, else msg
// (Redis's integer error if msg is empty).
func parseLongLong(c *commands.Ctx, b []byte, msg string) (int64, bool) {
	n, ok := resp.ParseInt(b)
	if !ok {
		if msg == "" {
			c.W.Error(commands.ErrNotInteger)
		} else {
			c.W.Error("ERR " + msg)
		}
	}
	return n, ok
}

func writeStreamID(w *resp.Writer, id engine.StreamID) {
	var buf [48]byte
	w.Bulk(id.AppendTo(buf[:0]))
}

// writeEntry writes an entry as Redis does: its ID and its fields and
// values.
func writeEntry(w *resp.Writer, id engine.StreamID, fields [][]byte) {
	w.Array(2)
	writeStreamID(w, id)
	w.Array(len(fields))
	for _, f := range fields {
		w.Bulk(f)
	}
}

// writeClaimed writes the entries XCLAIM or XAUTOCLAIM claimed: their IDs
// alone with JUSTID, else the entries.
func writeClaimed(w *resp.Writer, refs []entryRef, justID bool) {
	w.Array(len(refs))
	for _, r := range refs {
		if justID {
			writeStreamID(w, r.id)
		} else {
			writeEntry(w, r.id, r.fields)
		}
	}
}

// streamGroup finds the stream at key and its consumer group, or answers
// Redis's NOGROUP (errStreamReplied) when either is missing.
func streamGroup(c *commands.Ctx, tx *engine.StreamTx, key, group []byte) (*engine.Stream, *engine.StreamGroup, error) {
	st, err := tx.Stream(key, true)
	if err != nil {
		return nil, nil, err
	}
	var g *engine.StreamGroup
	if st != nil {
		g = st.Group(group)
	}
	if g == nil {
		c.W.Error("NOGROUP No such key '" + string(key) + "' or consumer group '" + string(group) + "'")
		return nil, nil, errStreamReplied
	}
	return st, g, nil
}

// entryRef is an entry read under the lock, its fields aliasing the
// stream, to be written before the lock is released.
type entryRef struct {
	id     engine.StreamID
	fields [][]byte // nil: the entry is gone (an XREADGROUP history's)
}

func collectRange(st *engine.Stream, start, end engine.StreamID, count int, rev bool) []entryRef {
	var refs []entryRef
	st.Range(start, end, count, rev, func(id engine.StreamID, fields [][]byte) bool {
		refs = append(refs, entryRef{id, append([][]byte(nil), fields...)})
		return true
	})
	return refs
}

func writeEntries(w *resp.Writer, refs []entryRef) {
	w.Array(len(refs))
	for _, r := range refs {
		if r.fields == nil {
			w.Array(2)
			writeStreamID(w, r.id)
			w.NullArray()
			continue
		}
		writeEntry(w, r.id, r.fields)
	}
}

// streamOpError answers a StreamOp's error, unless the function replied.
func streamOpError(c *commands.Ctx, err error) {
	if err != nil && err != errStreamReplied {
		commands.WriteError(c.W, err)
	}
}

// addTrimArgs are XADD's and XTRIM's options (streamAddTrimArgs).
type addTrimArgs struct {
	id         engine.StreamID
	idGiven    bool
	seqGiven   bool
	noMkStream bool
	trim       engine.Trim
	trimming   bool
}

// parseAddTrim is streamParseAddOrTrimArgsOrReply: the options from
// args[2], and for XADD the index of its ID.
func parseAddTrim(c *commands.Ctx, args [][]byte, xadd bool) (a addTrimArgs, idpos int, ok bool) {
	limitGiven := false
	const incompatible = "ERR syntax error, MAXLEN and MINID options at the same time are not compatible"
	i := 2
	for ; i < len(args); i++ {
		more := len(args) - 1 - i
		opt := args[i]
		switch {
		case xadd && len(opt) == 1 && opt[0] == '*':
			goto done
		case resp.EqualFold(opt, "maxlen") && more > 0:
			if a.trimming {
				c.W.Error(incompatible)
				return a, 0, false
			}
			a.trim.Approx = false
			next := args[i+1]
			if more >= 2 && len(next) == 1 && next[0] == '~' {
				a.trim.Approx = true
				i++
			} else if more >= 2 && len(next) == 1 && next[0] == '=' {
				i++
			}
			n, ok := parseLongLong(c, args[i+1], "")
			if !ok {
				return a, 0, false
			}
			if n < 0 {
				c.W.Error("ERR The MAXLEN argument must be >= 0.")
				return a, 0, false
			}
			i++
			a.trim.ByID, a.trim.MaxLen, a.trimming = false, uint64(n), true
		case resp.EqualFold(opt, "minid") && more > 0:
			if a.trimming {
				c.W.Error(incompatible)
				return a, 0, false
			}
			a.trim.Approx = false
			next := args[i+1]
			if more >= 2 && len(next) == 1 && next[0] == '~' {
				a.trim.Approx = true
				i++
			} else if more >= 2 && len(next) == 1 && next[0] == '=' {
				i++
			}
			id, ok := parseStrictID(c, args[i+1])
			if !ok {
				return a, 0, false
			}
			i++
			a.trim.ByID, a.trim.MinID, a.trimming = true, id, true
		case resp.EqualFold(opt, "limit") && more > 0:
			n, ok := parseLongLong(c, args[i+1], "")
			if !ok {
				return a, 0, false
			}
			if n < 0 {
				c.W.Error("ERR The LIMIT argument must be >= 0.")
				return a, 0, false
			}
			a.trim.Limit, limitGiven = n, true
			i++
		case xadd && resp.EqualFold(opt, "nomkstream"):
			a.noMkStream = true
		case xadd:
			id, ok := parseStreamID(opt, 0, true, &a.seqGiven)
			if !ok {
				c.W.Error(errInvalidStreamID)
				return a, 0, false
			}
			a.id, a.idGiven = id, true
			goto done
		default:
			c.W.Error(commands.ErrSyntax)
			return a, 0, false
		}
	}
done:
	if a.trim.Limit != 0 && !a.trimming {
		c.W.Error("ERR syntax error, LIMIT cannot be used without specifying a trimming strategy")
		return a, 0, false
	}
	if !xadd && !a.trimming {
		c.W.Error("ERR syntax error, XTRIM must be called with a trimming strategy")
		return a, 0, false
	}
	if limitGiven {
		if !a.trim.Approx {
			c.W.Error("ERR syntax error, LIMIT cannot be used without the special ~ option")
			return a, 0, false
		}
	} else if a.trim.Approx {
		a.trim.Limit = -1 // the store's default (StreamTx.TrimLimit)
	} else {
		a.trim.Limit = 0
	}
	return a, i, true
}

// withLimit is t with the default LIMIT of an approximate trim.
func withLimit(tx *engine.StreamTx, t engine.Trim) engine.Trim {
	if t.Limit < 0 {
		t.Limit = tx.TrimLimit()
	}
	return t
}

// cmdXAdd implements XADD key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold
// [LIMIT count]] *|id field value [field value ...].
func cmdXAdd(c *commands.Ctx, args [][]byte) {
	a, idpos, ok := parseAddTrim(c, args, true)
	if !ok {
		return
	}
	fieldPos := idpos + 1
	if n := len(args) - fieldPos; n < 2 || n%2 == 1 {
		c.W.Error("ERR wrong number of arguments for 'xadd' command")
		return
	}
	if a.idGiven && a.seqGiven && a.id.IsZero() {
		c.W.Error("ERR The ID specified in XADD must be greater than 0-0")
		return
	}
	key := args[1]
	var id engine.StreamID
	var trimmed, null bool
	err := c.Store.StreamOp(args[1:2], true, func(tx *engine.StreamTx) error {
		st, err := tx.Stream(key, false)
		if err != nil {
			return err
		}
		if st == nil {
			if a.noMkStream {
				null = true
				return nil
			}
			st = tx.Create(key)
		}
		var given *engine.StreamID
		if a.idGiven {
			given = &a.id
		}
		id, err = st.Add(args[fieldPos:], given, a.seqGiven, uint64(tx.NowMs()))
		if err != nil {
			return err
		}
		tx.Changed(key)
		if a.trimming {
			trimmed = st.Trim(withLimit(tx, a.trim)) > 0
		}
		return nil
	})
	switch {
	case err != nil:
		if errors.Is(err, engine.ErrStreamIDTooSmall) || errors.Is(err, engine.ErrStreamExhausted) || errors.Is(err, engine.ErrStreamTooLarge) {
			c.W.Error("ERR " + err.Error())
			return
		}
		commands.WriteError(c.W, err)
	case null:
		c.W.Null()
	default:
		writeStreamID(c.W, id)
		c.Notify(commands.EventStream, "xadd", key)
		if trimmed {
			c.Notify(commands.EventStream, "xtrim", key)
		}
	}
}

func cmdXRange(c *commands.Ctx, args [][]byte)    { xrange(c, args, false) }
func cmdXRevRange(c *commands.Ctx, args [][]byte) { xrange(c, args, true) }

// xrange implements XRANGE key start end [COUNT count] and XREVRANGE key
// end start [COUNT count].
func xrange(c *commands.Ctx, args [][]byte, rev bool) {
	startArg, endArg := args[2], args[3]
	if rev {
		startArg, endArg = endArg, startArg
	}
	start, ok := parseRangeStart(c, startArg)
	if !ok {
		return
	}
	end, ok := parseRangeEnd(c, endArg)
	if !ok {
		return
	}
	count := int64(-1)
	for j := 4; j < len(args); j++ {
		if resp.EqualFold(args[j], "count") && j+1 < len(args) {
			if count, ok = parseLongLong(c, args[j+1], ""); !ok {
				return
			}
			count = max(count, 0)
			j++
		} else {
			c.W.Error(commands.ErrSyntax)
			return
		}
	}
	err := c.Store.StreamOp(args[1:2], false, func(tx *engine.StreamTx) error {
		st, err := tx.Stream(args[1], true)
		switch {
		case err != nil:
			return err
		case st == nil:
			c.W.Array(0)
		case count == 0:
			c.W.NullArray()
		default:
			writeEntries(c.W, collectRange(st, start, end, int(max(count, 0)), rev))
		}
		return nil
	})
	streamOpError(c, err)
}

// cmdXLen implements XLEN key.
func cmdXLen(c *commands.Ctx, args [][]byte) {
	var n uint64
	err := c.Store.StreamOp(args[1:2], false, func(tx *engine.StreamTx) error {
		st, err := tx.Stream(args[1], true)
		if st != nil {
			n = st.Len()
		}
		return err
	})
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	c.W.Int(int64(n))
}

// cmdXDel implements XDEL key id [id ...].
func cmdXDel(c *commands.Ctx, args [][]byte) {
	deleted := 0
	err := c.Store.StreamOp(args[1:2], false, func(tx *engine.StreamTx) error {
		st, err := tx.Stream(args[1], false)
		if err != nil || st == nil {
			return err
		}
		ids := make([]engine.StreamID, 0, len(args)-2)
		for _, a := range args[2:] {
			id, ok := parseStrictID(c, a)
			if !ok {
				return errStreamReplied
			}
			ids = append(ids, id)
		}
		if deleted = st.Delete(ids); deleted > 0 {
			tx.Changed(args[1])
		}
		return nil
	})
	if err != nil {
		streamOpError(c, err)
		return
	}
	c.W.Int(int64(deleted))
	if deleted > 0 {
		c.Notify(commands.EventStream, "xdel", args[1])
	}
}

// cmdXTrim implements XTRIM key MAXLEN|MINID [=|~] threshold [LIMIT count].
func cmdXTrim(c *commands.Ctx, args [][]byte) {
	a, _, ok := parseAddTrim(c, args, false)
	if !ok {
		return
	}
	var deleted int64
	err := c.Store.StreamOp(args[1:2], false, func(tx *engine.StreamTx) error {
		st, err := tx.Stream(args[1], false)
		if err != nil || st == nil {
			return err
		}
		if deleted = st.Trim(withLimit(tx, a.trim)); deleted > 0 {
			tx.Changed(args[1])
		}
		return nil
	})
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	c.W.Int(deleted)
	if deleted > 0 {
		c.Notify(commands.EventStream, "xtrim", args[1])
	}
}

// xreadBlockedCount is the COUNT of a blocked XREAD given none, Redis's
// XREAD_BLOCKED_DEFAULT_COUNT.
const xreadBlockedCount = 1000

// readIDGroup is XREADGROUP's ">".
var readIDGroup = engine.MaxStreamID

func cmdXRead(c *commands.Ctx, args [][]byte)      { xread(c, args, false) }
func cmdXReadGroup(c *commands.Ctx, args [][]byte) { xread(c, args, true) }

// xreadKeys finds XREAD's and XREADGROUP's keys: the first half of what
// follows STREAMS.
func xreadKeys(args [][]byte) [][]byte {
	for i := 1; i < len(args); i++ {
		switch {
		case resp.EqualFold(args[i], "streams"):
			rest := args[i+1:]
			return rest[:len(rest)/2]
		case resp.EqualFold(args[i], "block"), resp.EqualFold(args[i], "count"):
			i++
		case resp.EqualFold(args[i], "group"):
			i += 2
		}
	}
	return nil
}

// xread implements XREAD [COUNT count] [BLOCK milliseconds] STREAMS key
// [key ...] id [id ...] and XREADGROUP GROUP group consumer [COUNT count]
// [BLOCK milliseconds] [NOACK] STREAMS key [key ...] id [id ...].
func xread(c *commands.Ctx, args [][]byte, group bool) {
	timeout := int64(-1)
	var count int64
	streamsAt, n := 0, 0
	noack := false
	var groupName, consumer []byte
	name := string(args[0])
	for i := 1; i < len(args); i++ {
		more := len(args) - i - 1
		o := args[i]
		switch {
		case resp.EqualFold(o, "block") && more > 0:
			if c.Client.InScript() {
				c.W.Error("ERR " + name + " command is not allowed with BLOCK option from scripts")
				return
			}
			i++
			ms, ok := resp.ParseInt(args[i])
			if !ok {
				c.W.Error("ERR timeout is not an integer or out of range")
				return
			}
			if ms < 0 {
				c.W.Error("ERR timeout is negative")
				return
			}
			timeout = ms
		case resp.EqualFold(o, "count") && more > 0:
			i++
			v, ok := parseLongLong(c, args[i], "")
			if !ok {
				return
			}
			count = max(v, 0)
		case resp.EqualFold(o, "streams") && more > 0:
			streamsAt = i + 1
			n = len(args) - streamsAt
			if n%2 != 0 {
				c.W.Error("ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified.")
				return
			}
			n /= 2
			i = len(args)
		case resp.EqualFold(o, "group") && more >= 2:
			if !group {
				c.W.Error("ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead.")
				return
			}
			groupName, consumer = args[i+1], args[i+2]
			i += 2
		case resp.EqualFold(o, "noack"):
			if !group {
				c.W.Error("ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead.")
				return
			}
			noack = true
		default:
			c.W.Error(commands.ErrSyntax)
			return
		}
	}
	if streamsAt == 0 {
		c.W.Error(commands.ErrSyntax)
		return
	}
	if group && groupName == nil {
		c.W.Error("ERR Missing GROUP option for XREADGROUP")
		return
	}
	keys := args[streamsAt : streamsAt+n]
	idArgs := args[streamsAt+n:]
	ids := make([]engine.StreamID, n)
	served := false
	var created []string
	err := c.Store.StreamOp(keys, group, func(tx *engine.StreamTx) error {
		streams := make([]*engine.Stream, n)
		groups := make([]*engine.StreamGroup, n)
		for i, key := range keys {
			st, err := tx.Stream(key, true)
			if err != nil {
				return err
			}
			streams[i] = st
			if group {
				var g *engine.StreamGroup
				if st != nil {
					g = st.Group(groupName)
				}
				if g == nil {
					c.W.Error("NOGROUP No such key '" + string(key) + "' or consumer group '" + string(groupName) + "' in XREADGROUP with GROUP option")
					return errStreamReplied
				}
				groups[i] = g
			}
			a := idArgs[i]
			switch {
			case len(a) == 1 && a[0] == '$':
				if group {
					c.W.Error("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.")
					return errStreamReplied
				}
				if st != nil {
					ids[i] = st.LastID()
				}
			case len(a) == 1 && a[0] == '>':
				if !group {
					c.W.Error("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.")
					return errStreamReplied
				}
				ids[i] = readIDGroup
			default:
				id, ok := parseStrictID(c, a)
				if !ok {
					return errStreamReplied
				}
				ids[i] = id
			}
		}
		type readOut struct {
			key  []byte
			refs []entryRef
		}
		var out []readOut
		for i, st := range streams {
			if st == nil {
				continue
			}
			gt := ids[i]
			sync, history := false, false
			if group {
				if gt != readIDGroup {
					sync, history = true, true
				} else if last, ok := st.LastEntryID(); ok && last.Cmp(groups[i].LastID()) > 0 {
					sync = true
				}
			} else if last, ok := st.LastEntryID(); ok && last.Cmp(gt) > 0 {
				sync = true
			}
			if !sync {
				continue
			}
			var refs []entryRef
			if group {
				var made bool
				if history {
					start, _ := gt.Next()
					made = st.ReadHistory(groups[i], consumer, start, int(count), tx.NowMs(), func(id engine.StreamID, fields [][]byte, found bool) {
						r := entryRef{id: id}
						if found {
							r.fields = append(make([][]byte, 0, len(fields)), fields...)
						}
						refs = append(refs, r)
					})
				} else {
					made = st.ReadGroup(groups[i], consumer, int(count), noack, tx.NowMs(), func(id engine.StreamID, fields [][]byte) {
						refs = append(refs, entryRef{id, append(make([][]byte, 0, len(fields)), fields...)})
					})
				}
				if made {
					created = append(created, string(keys[i]))
				}
				tx.ChangedUnsignalled(keys[i])
			} else {
				start, _ := gt.Next()
				refs = collectRange(st, start, engine.MaxStreamID, int(count), false)
			}
			out = append(out, readOut{keys[i], refs})
		}
		if len(out) == 0 {
			return nil
		}
		served = true
		writeServed := func(key []byte, refs []entryRef) {
			if c.W.Protocol() == 2 {
				c.W.Array(2)
			}
			c.W.Bulk(key)
			writeEntries(c.W, refs)
		}
		if c.W.Protocol() == 2 {
			c.W.Array(len(out))
		} else {
			c.W.Map(len(out))
		}
		for _, s := range out {
			writeServed(s.key, s.refs)
		}
		return nil
	})
	if err != nil {
		streamOpError(c, err)
		return
	}
	for _, k := range created {
		c.Notify(commands.EventStream, "xgroup-createconsumer", []byte(k))
	}
	if served {
		return
	}
	if timeout == -1 {
		c.W.NullArray()
		return
	}
	if c.Client.InSection() {
		c.W.NullArray()
		return
	}
	if count == 0 {
		count = xreadBlockedCount
	}
	blockXRead(c, keys, ids, time.Duration(timeout)*time.Millisecond, int(count), groupName, consumer, noack)
}

// blockXRead blocks an XREAD or XREADGROUP on keys until an entry above
// its ID arrives in one, as Redis's serveClientsBlockedOnStreamKey serves
// it: a reader blocked in a group waits for entries after the group's
// last ID, and is answered an error if the group or the key goes.
func blockXRead(c *commands.Ctx, keys [][]byte, ids []engine.StreamID, timeout time.Duration, count int, groupName, consumer []byte, noack bool) {
	owned := make([][]byte, len(keys))
	after := make(map[string]engine.StreamID, len(keys))
	for i, k := range keys {
		owned[i] = bytes.Clone(k)
		if _, ok := after[string(k)]; !ok {
			after[string(k)] = ids[i]
		}
	}
	group := groupName != nil
	groupName, consumer = bytes.Clone(groupName), bytes.Clone(consumer)
	out := resp.NewWriter(nil, 0)
	out.SetProtocol(c.W.Protocol())
	store, events := c.Store, c.Events
	c.Client.BlockRead(owned, timeout, func(ready []byte) bool {
		done := false
		var created bool
		_ = store.StreamOp([][]byte{ready}, false, func(tx *engine.StreamTx) error {
			t, found := tx.TypeOf(ready)
			if !found || t != engine.TypeStream {
				if group {
					out.Error("UNBLOCKED the stream key no longer exists")
					done = true
				}
				return nil
			}
			st, _ := tx.Stream(ready, false)
			gt := after[string(ready)]
			var g *engine.StreamGroup
			if group {
				if g = st.Group(groupName); g == nil {
					out.Error("NOGROUP the consumer group this client was blocked on no longer exists")
					done = true
					return nil
				}
				gt = g.LastID()
			}
			// Served once an entry above gt is there: Redis is asked only
			// by a write that added one, this registry also right after
			// blocking.
			if last, ok := st.LastEntryID(); !ok || last.Cmp(gt) <= 0 {
				return nil
			}
			var refs []entryRef
			if group {
				created = st.ReadGroup(g, consumer, count, noack, tx.NowMs(), func(id engine.StreamID, fields [][]byte) {
					refs = append(refs, entryRef{id, append(make([][]byte, 0, len(fields)), fields...)})
				})
				tx.ChangedUnsignalled(ready)
			} else {
				start, _ := gt.Next()
				refs = collectRange(st, start, engine.MaxStreamID, count, false)
			}
			if out.Protocol() == 2 {
				out.Array(1)
				out.Array(2)
			} else {
				out.Map(1)
			}
			out.Bulk(ready)
			writeEntries(out, refs)
			done = true
			return nil
		})
		if created {
			events.Notify(store.Index(), commands.EventStream, "xgroup-createconsumer", ready)
		}
		return done
	}, func() { c.W.Raw(out.Buffered()) }, c.W.NullArray)
}

// cmdXGroup runs XGROUP's subcommands, as Redis's xgroupCommand: the
// options first, then the key and the group, then the subcommand.
func cmdXGroup(c *commands.Ctx, args [][]byte) {
	opt := args[1]
	syntax := func() {
		c.W.Error("ERR unknown subcommand or wrong number of arguments for '" + string(commands.Truncate(opt, 128)) + "'. Try XGROUP HELP.")
	}
	if len(args) == 2 && resp.EqualFold(opt, "help") {
		writeStreamHelp(c.W, "XGROUP",
			"CREATE <key> <groupname> <id|$> [option]",
			"    Create a new consumer group. Options are:",
			"    * MKSTREAM",
			"      Create the empty stream if it does not exist.",
			"    * ENTRIESREAD entries_read",
			"      Set the group's entries_read counter (internal use).",
			"CREATECONSUMER <key> <groupname> <consumer>",
			"    Create a new consumer in the specified group.",
			"DELCONSUMER <key> <groupname> <consumer>",
			"    Remove the specified consumer.",
			"DESTROY <key> <groupname>",
			"    Remove the specified group.",
			"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
			"    Set the current group ID and entries_read counter.")
		return
	}
	if len(args) < 4 {
		syntax()
		return
	}
	create, setid := resp.EqualFold(opt, "create"), resp.EqualFold(opt, "setid")
	mkstream := false
	entriesRead := int64(-1)
	for i := 5; i < len(args); {
		switch {
		case create && resp.EqualFold(args[i], "mkstream"):
			mkstream = true
			i++
		case (create || setid) && resp.EqualFold(args[i], "entriesread") && i+1 < len(args):
			v, ok := parseLongLong(c, args[i+1], "")
			if !ok {
				return
			}
			if v < 0 && v != -1 {
				c.W.Error("ERR value for ENTRIESREAD must be positive or -1")
				return
			}
			entriesRead = v
			i += 2
		default:
			syntax()
			return
		}
	}
	key, name := args[2], args[3]
	var event string
	err := c.Store.StreamOp(args[2:3], create && mkstream, func(tx *engine.StreamTx) error {
		st, err := tx.Stream(key, false)
		if err != nil {
			return err
		}
		var g *engine.StreamGroup
		if !mkstream {
			if st == nil {
				c.W.Error("ERR The XGROUP subcommand requires the key to exist. Note that for CREATE you may want to use the MKSTREAM option to create an empty stream automatically.")
				return errStreamReplied
			}
			if g = st.Group(name); g == nil && (setid || resp.EqualFold(opt, "createconsumer") || resp.EqualFold(opt, "delconsumer")) {
				c.W.Error("NOGROUP No such consumer group '" + string(name) + "' for key name '" + string(key) + "'")
				return errStreamReplied
			}
		}
		switch {
		case create && len(args) >= 5 && len(args) <= 8:
			var id engine.StreamID
			if a := args[4]; len(a) == 1 && a[0] == '$' {
				if st != nil {
					id = st.LastID()
				}
			} else {
				var ok bool
				if id, ok = parseStrictID(c, a); !ok {
					return errStreamReplied
				}
			}
			if st == nil {
				st = tx.Create(key)
			}
			if !st.CreateGroup(name, id, entriesRead) {
				c.W.Error("BUSYGROUP Consumer Group name already exists")
				return errStreamReplied
			}
			tx.ChangedUnsignalled(key)
			c.W.OK()
			event = "xgroup-create"
		case setid && (len(args) == 5 || len(args) == 7):
			var id engine.StreamID
			if a := args[4]; len(a) == 1 && a[0] == '$' {
				id = st.LastID()
			} else if parsed, ok := parseStreamID(a, 0, false, nil); ok {
				id = parsed
			} else {
				c.W.Error(errInvalidStreamID)
				return errStreamReplied
			}
			g.SetGroupID(id, entriesRead)
			tx.ChangedUnsignalled(key)
			c.W.OK()
			event = "xgroup-setid"
		case resp.EqualFold(opt, "destroy") && len(args) == 4:
			if g != nil && st.DestroyGroup(name) {
				tx.ChangedUnsignalled(key)
				c.W.Int(1)
				event = "xgroup-destroy"
			} else {
				c.W.Int(0)
			}
		case resp.EqualFold(opt, "createconsumer") && len(args) == 5:
			made := st.CreateConsumer(g, args[4], tx.NowMs())
			if made {
				tx.ChangedUnsignalled(key)
				event = "xgroup-createconsumer"
			}
			c.W.Int(commands.BoolInt(made))
		case resp.EqualFold(opt, "delconsumer") && len(args) == 5:
			n, found := st.DelConsumer(g, args[4])
			if found {
				tx.ChangedUnsignalled(key)
				event = "xgroup-delconsumer"
			}
			c.W.Int(int64(n))
		default:
			syntax()
		}
		return nil
	})
	if err != nil {
		streamOpError(c, err)
		return
	}
	if event != "" {
		c.Notify(commands.EventStream, event, key)
	}
}

// cmdXSetID implements XSETID key last-id [ENTRIESADDED entries-added]
// [MAXDELETEDID max-deleted-id].
func cmdXSetID(c *commands.Ctx, args [][]byte) {
	id, ok := parseStrictID(c, args[2])
	if !ok {
		return
	}
	added := int64(-1)
	var maxDel engine.StreamID
	for i := 3; i < len(args); {
		more := len(args) - 1 - i
		switch {
		case resp.EqualFold(args[i], "entriesadded") && more > 0:
			v, ok := parseLongLong(c, args[i+1], "")
			if !ok {
				return
			}
			if v < 0 {
				c.W.Error("ERR entries_added must be positive")
				return
			}
			added = v
			i += 2
		case resp.EqualFold(args[i], "maxdeletedid") && more > 0:
			v, ok := parseStrictID(c, args[i+1])
			if !ok {
				return
			}
			if id.Cmp(v) < 0 {
				c.W.Error("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")
				return
			}
			maxDel = v
			i += 2
		default:
			c.W.Error(commands.ErrSyntax)
			return
		}
	}
	err := c.Store.StreamOp(args[1:2], false, func(tx *engine.StreamTx) error {
		st, err := tx.Stream(args[1], false)
		if err != nil {
			return err
		}
		if st == nil {
			c.W.Error("ERR no such key")
			return errStreamReplied
		}
		if err := st.SetID(id, added, maxDel); err != nil {
			c.W.Error("ERR " + err.Error())
			return errStreamReplied
		}
		tx.ChangedUnsignalled(args[1])
		return nil
	})
	if err != nil {
		streamOpError(c, err)
		return
	}
	c.W.OK()
	c.Notify(commands.EventStream, "xsetid", args[1])
}

// cmdXAck implements XACK key group id [id ...].
func cmdXAck(c *commands.Ctx, args [][]byte) {
	n := 0
	err := c.Store.StreamOp(args[1:2], false, func(tx *engine.StreamTx) error {
		st, err := tx.Stream(args[1], true)
		if err != nil || st == nil {
			return err
		}
		g := st.Group(args[2])
		if g == nil {
			return nil
		}
		ids := make([]engine.StreamID, 0, len(args)-3)
		for _, a := range args[3:] {
			id, ok := parseStrictID(c, a)
			if !ok {
				return errStreamReplied
			}
			ids = append(ids, id)
		}
		if n = st.Ack(g, ids); n > 0 {
			tx.ChangedUnsignalled(args[1])
		}
		return nil
	})
	if err != nil {
		streamOpError(c, err)
		return
	}
	c.W.Int(int64(n))
}

// cmdXPending implements XPENDING key group [[IDLE min-idle-time] start
// end count [consumer]].
func cmdXPending(c *commands.Ctx, args [][]byte) {
	justInfo := len(args) == 3
	if len(args) != 3 && (len(args) < 6 || len(args) > 9) {
		c.W.Error(commands.ErrSyntax)
		return
	}
	var start, end engine.StreamID
	var count, minIdle int64
	var consumer []byte
	if len(args) >= 6 {
		at := 3
		if resp.EqualFold(args[3], "idle") {
			var ok bool
			if minIdle, ok = parseLongLong(c, args[4], ""); !ok {
				return
			}
			if len(args) < 8 {
				c.W.Error(commands.ErrSyntax)
				return
			}
			at += 2
		}
		var ok bool
		if count, ok = parseLongLong(c, args[at+2], ""); !ok {
			return
		}
		count = max(count, 0)
		if start, ok = parseRangeStart(c, args[at]); !ok {
			return
		}
		if end, ok = parseRangeEnd(c, args[at+1]); !ok {
			return
		}
		if at+3 < len(args) {
			consumer = args[at+3]
		}
	}
	err := c.Store.StreamOp(args[1:2], false, func(tx *engine.StreamTx) error {
		_, g, err := streamGroup(c, tx, args[1], args[2])
		if err != nil {
			return err
		}
		if justInfo {
			c.W.Array(4)
			c.W.Int(int64(g.Pending()))
			if g.Pending() == 0 {
				c.W.Null()
				c.W.Null()
				c.W.NullArray()
				return nil
			}
			first, last, consumers := g.PendingSummary()
			writeStreamID(c.W, first)
			writeStreamID(c.W, last)
			c.W.Array(len(consumers))
			for _, ci := range consumers {
				c.W.Array(2)
				c.W.BulkString(ci.Name)
				c.W.BulkInt(int64(ci.Pending))
			}
			return nil
		}
		var list []engine.PendingEntry
		now := tx.NowMs()
		g.PendingRange(start, end, count, minIdle, consumer, now, func(p engine.PendingEntry) { list = append(list, p) })
		c.W.Array(len(list))
		for _, p := range list {
			c.W.Array(4)
			writeStreamID(c.W, p.ID)
			c.W.BulkString(p.Consumer)
			c.W.Int(max(now-p.Delivered, 0))
			c.W.Int(int64(p.Count))
		}
		return nil
	})
	streamOpError(c, err)
}

// cmdXClaim implements XCLAIM key group consumer min-idle-time id [id ...]
// [IDLE ms] [TIME unix-time-milliseconds] [RETRYCOUNT count] [FORCE]
// [JUSTID] [LASTID lastid].
func cmdXClaim(c *commands.Ctx, args [][]byte) {
	created := false
	err := c.Store.StreamOp(args[1:2], false, func(tx *engine.StreamTx) error {
		st, g, err := streamGroup(c, tx, args[1], args[2])
		if err != nil {
			return err
		}
		minIdle, ok := parseLongLong(c, args[4], "Invalid min-idle-time argument for XCLAIM")
		if !ok {
			return errStreamReplied
		}
		cl := engine.Claim{Consumer: args[3], MinIdle: max(minIdle, 0), Delivered: -1, RetryCount: -1}
		j := 5
		for ; j < len(args); j++ {
			id, ok := parseStreamID(args[j], 0, true, nil)
			if !ok {
				break
			}
			cl.IDs = append(cl.IDs, id)
		}
		now := tx.NowMs()
		for ; j < len(args); j++ {
			more := len(args) - 1 - j
			o := args[j]
			switch {
			case resp.EqualFold(o, "force"):
				cl.Force = true
			case resp.EqualFold(o, "justid"):
				cl.JustID = true
			case resp.EqualFold(o, "idle") && more > 0:
				j++
				v, ok := parseLongLong(c, args[j], "Invalid IDLE option argument for XCLAIM")
				if !ok {
					return errStreamReplied
				}
				cl.Delivered = now - v
			case resp.EqualFold(o, "time") && more > 0:
				j++
				v, ok := parseLongLong(c, args[j], "Invalid TIME option argument for XCLAIM")
				if !ok {
					return errStreamReplied
				}
				cl.Delivered = v
			case resp.EqualFold(o, "retrycount") && more > 0:
				j++
				v, ok := parseLongLong(c, args[j], "Invalid RETRYCOUNT option argument for XCLAIM")
				if !ok {
					return errStreamReplied
				}
				cl.RetryCount = v
			case resp.EqualFold(o, "lastid") && more > 0:
				j++
				v, ok := parseStrictID(c, args[j])
				if !ok {
					return errStreamReplied
				}
				cl.LastID = v
			default:
				c.W.Error("ERR Unrecognized XCLAIM option '" + string(o) + "'")
				return errStreamReplied
			}
		}
		if cl.Delivered < -1 {
			cl.Delivered = -1 // before 1970: now, as Redis takes a bogus time
		}
		var refs []entryRef
		created = st.Claim(g, cl, now, func(id engine.StreamID, fields [][]byte) {
			refs = append(refs, entryRef{id, append([][]byte(nil), fields...)})
		})
		tx.ChangedUnsignalled(args[1])
		writeClaimed(c.W, refs, cl.JustID)
		return nil
	})
	if err != nil {
		streamOpError(c, err)
		return
	}
	if created {
		c.Notify(commands.EventStream, "xgroup-createconsumer", args[1])
	}
}

// cmdXAutoClaim implements XAUTOCLAIM key group consumer min-idle-time
// start [COUNT count] [JUSTID].
func cmdXAutoClaim(c *commands.Ctx, args [][]byte) {
	minIdle, ok := parseLongLong(c, args[4], "Invalid min-idle-time argument for XAUTOCLAIM")
	if !ok {
		return
	}
	minIdle = max(minIdle, 0)
	start, ok := parseRangeStart(c, args[5])
	if !ok {
		return
	}
	count := int64(100)
	justID := false
	for j := 6; j < len(args); j++ {
		more := len(args) - 1 - j
		switch {
		case resp.EqualFold(args[j], "count") && more > 0:
			// getRangeLongFromObjectOrReply answers its message for
			// what is no integer too.
			v, ok := resp.ParseInt(args[j+1])
			if !ok || v < 1 || v > math.MaxInt64/16 {
				c.W.Error("ERR COUNT must be > 0")
				return
			}
			count = v
			j++
		case resp.EqualFold(args[j], "justid"):
			justID = true
		default:
			c.W.Error(commands.ErrSyntax)
			return
		}
	}
	created := false
	err := c.Store.StreamOp(args[1:2], false, func(tx *engine.StreamTx) error {
		st, g, err := streamGroup(c, tx, args[1], args[2])
		if err != nil {
			return err
		}
		var refs []entryRef
		next, deleted, made := st.AutoClaim(g, args[3], minIdle, start, count, justID, tx.NowMs(), func(id engine.StreamID, fields [][]byte) {
			refs = append(refs, entryRef{id, append([][]byte(nil), fields...)})
		})
		created = made
		tx.ChangedUnsignalled(args[1])
		c.W.Array(3)
		writeStreamID(c.W, next)
		writeClaimed(c.W, refs, justID)
		c.W.Array(len(deleted))
		for _, id := range deleted {
			writeStreamID(c.W, id)
		}
		return nil
	})
	if err != nil {
		streamOpError(c, err)
		return
	}
	if created {
		c.Notify(commands.EventStream, "xgroup-createconsumer", args[1])
	}
}

// cmdXInfo runs XINFO's subcommands.
func cmdXInfo(c *commands.Ctx, args [][]byte) {
	opt := args[1]
	syntax := func() {
		c.W.Error("ERR unknown subcommand or wrong number of arguments for '" + string(commands.Truncate(opt, 128)) + "'. Try XINFO HELP.")
	}
	if resp.EqualFold(opt, "help") {
		if len(args) != 2 {
			syntax()
			return
		}
		writeStreamHelp(c.W, "XINFO",
			"CONSUMERS <key> <groupname>",
			"    Show consumers of <groupname>.",
			"GROUPS <key>",
			"    Show the stream consumer groups.",
			"STREAM <key> [FULL [COUNT <count>]",
			"    Show information about the stream.")
		return
	}
	if len(args) < 3 {
		syntax()
		return
	}
	key := args[2]
	err := c.Store.StreamOp(args[2:3], false, func(tx *engine.StreamTx) error {
		st, err := tx.Stream(key, true)
		if err != nil {
			return err
		}
		if st == nil {
			c.W.Error("ERR no such key")
			return nil
		}
		now := tx.NowMs()
		switch {
		case resp.EqualFold(opt, "consumers") && len(args) == 4:
			g := st.Group(args[3])
			if g == nil {
				c.W.Error("NOGROUP No such consumer group '" + string(args[3]) + "' for key name '" + string(key) + "'")
				return nil
			}
			list := g.ConsumerList()
			c.W.Array(len(list))
			for _, ci := range list {
				c.W.Map(3)
				c.W.BulkString("name")
				c.W.BulkString(ci.Name)
				c.W.BulkString("pending")
				c.W.Int(int64(ci.Pending))
				c.W.BulkString("idle")
				c.W.Int(max(now-ci.Seen, 0))
			}
		case resp.EqualFold(opt, "groups") && len(args) == 3:
			c.W.Array(len(st.Groups()))
			for _, g := range st.Groups() {
				c.W.Map(6)
				c.W.BulkString("name")
				c.W.BulkString(g.Name())
				c.W.BulkString("consumers")
				c.W.Int(int64(g.Consumers()))
				c.W.BulkString("pending")
				c.W.Int(int64(g.Pending()))
				c.W.BulkString("last-delivered-id")
				writeStreamID(c.W, g.LastID())
				writeGroupCounters(c.W, st, g)
			}
		case resp.EqualFold(opt, "stream"):
			xinfoStream(c, st, args[3:])
		default:
			syntax()
		}
		return nil
	})
	if err != nil {
		commands.WriteError(c.W, err)
	}
}

// writeGroupCounters writes a group's entries-read and lag, either null
// where Redis cannot know it.
func writeGroupCounters(w *resp.Writer, st *engine.Stream, g *engine.StreamGroup) {
	w.BulkString("entries-read")
	if n, ok := g.EntriesRead(); ok {
		w.Int(n)
	} else {
		w.Null()
	}
	w.BulkString("lag")
	if lag, ok := st.Lag(g); ok {
		w.Int(lag)
	} else {
		w.Null()
	}
}

// xinfoStream implements XINFO STREAM key [FULL [COUNT count]].
func xinfoStream(c *commands.Ctx, st *engine.Stream, opts [][]byte) {
	full := len(opts) > 0
	count := int64(10)
	if full {
		syntax := func() {
			c.W.Error("ERR unknown subcommand or wrong number of arguments for 'STREAM'. Try XINFO HELP.")
		}
		if (len(opts) != 1 && len(opts) != 3) || !resp.EqualFold(opts[0], "full") {
			syntax()
			return
		}
		if len(opts) == 3 {
			if !resp.EqualFold(opts[1], "count") {
				syntax()
				return
			}
			v, ok := parseLongLong(c, opts[2], "")
			if !ok {
				return
			}
			if v < 0 {
				v = 10
			}
			count = v
		}
	}
	w := c.W
	if full {
		w.Map(9)
	} else {
		w.Map(10)
	}
	w.BulkString("length")
	w.Int(int64(st.Len()))
	w.BulkString("radix-tree-keys")
	w.Int(int64(st.Nodes()))
	w.BulkString("radix-tree-nodes")
	w.Int(int64(radixNodes(st.Nodes())))
	w.BulkString("last-generated-id")
	writeStreamID(w, st.LastID())
	w.BulkString("max-deleted-entry-id")
	writeStreamID(w, st.MaxDeletedID())
	w.BulkString("entries-added")
	w.Int(int64(st.EntriesAdded()))
	w.BulkString("recorded-first-entry-id")
	writeStreamID(w, st.FirstID())
	if !full {
		w.BulkString("groups")
		w.Int(int64(len(st.Groups())))
		for _, rev := range []bool{false, true} {
			if rev {
				w.BulkString("last-entry")
			} else {
				w.BulkString("first-entry")
			}
			refs := collectRange(st, engine.StreamID{}, engine.MaxStreamID, 1, rev)
			if len(refs) == 0 {
				w.Null()
			} else {
				writeEntry(w, refs[0].id, refs[0].fields)
			}
		}
		return
	}
	w.BulkString("entries")
	writeEntries(w, collectRange(st, engine.StreamID{}, engine.MaxStreamID, int(count), false))
	w.BulkString("groups")
	w.Array(len(st.Groups()))
	for _, g := range st.Groups() {
		w.Map(7)
		w.BulkString("name")
		w.BulkString(g.Name())
		w.BulkString("last-delivered-id")
		writeStreamID(w, g.LastID())
		writeGroupCounters(w, st, g)
		w.BulkString("pel-count")
		w.Int(int64(g.Pending()))
		w.BulkString("pending")
		var pel []engine.PendingEntry
		g.EachPending(count, func(p engine.PendingEntry) { pel = append(pel, p) })
		w.Array(len(pel))
		for _, p := range pel {
			w.Array(4)
			writeStreamID(w, p.ID)
			w.BulkString(p.Consumer)
			w.Int(p.Delivered)
			w.Int(int64(p.Count))
		}
		w.BulkString("consumers")
		list := g.ConsumerList()
		w.Array(len(list))
		for _, ci := range list {
			w.Map(4)
			w.BulkString("name")
			w.BulkString(ci.Name)
			w.BulkString("seen-time")
			w.Int(ci.Seen)
			w.BulkString("pel-count")
			w.Int(int64(ci.Pending))
			w.BulkString("pending")
			var cp []engine.PendingEntry
			g.EachConsumerPending(ci.Name, count, func(p engine.PendingEntry) { cp = append(cp, p) })
			w.Array(len(cp))
			for _, p := range cp {
				w.Array(3)
				writeStreamID(w, p.ID)
				w.Int(p.Delivered)
				w.Int(int64(p.Count))
			}
		}
	}
}

// radixNodes estimates the nodes of Redis's radix tree over keys 16-byte
// IDs (XINFO's radix-tree-nodes), which this store has no tree to count:
// one key takes two, the root and its leaf.
func radixNodes(keys int) int {
	if keys == 0 {
		return 1
	}
	return keys + 1
}

// writeStreamHelp is Redis 7.0's addReplyHelp, whose last line says
// "Prints" where commands.WriteHelp says "Print".
func writeStreamHelp(w *resp.Writer, name string, lines ...string) {
	w.Array(len(lines) + 3)
	w.Status(name + " <subcommand> [<arg> [value] [opt] ...]. Subcommands are:")
	for _, l := range lines {
		w.Status(l)
	}
	w.Status("HELP")
	w.Status("    Prints this help.")
}

// streamCommands are the stream commands, consumer groups and XREAD's
// waits among them, for the family's table (Commands).
func streamCommands() []*commands.Spec {
	return []*commands.Spec{
		{Name: "xadd", Arity: -5, Flags: commands.Write | commands.DenyOOM | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdXAdd, Access: commands.KeysWrite,
			KeySpecs: []commands.KeySpec{
				{Notes: "UPDATE instead of INSERT because of the optional trimming feature",
					Flags: commands.KRW | commands.KUpdate, Index: 1},
			},
			Group: "stream", Summary: "Appends a new message to a stream. Creates the key if it doesn't exist.",
			Usage: "key [NOMKSTREAM] [MAXLEN|MINID [=|~] threshold [LIMIT count]] *|id field value [field value ...]",
			Since: "5.0.0"},
		{Name: "xrange", Arity: -4, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdXRange,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRO|commands.KAccess)},
			Group:    "stream", Summary: "Returns the messages from a stream within a range of IDs.",
			Usage: "key start end [COUNT count]", Since: "5.0.0"},
		{Name: "xrevrange", Arity: -4, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdXRevRange,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRO|commands.KAccess)},
			Group:    "stream", Summary: "Returns the messages from a stream within a range of IDs in reverse order.",
			Usage: "key end start [COUNT count]", Since: "5.0.0"},
		{Name: "xlen", Arity: 2, Flags: commands.Readonly | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdXLen, Access: commands.KeysNone,
			Group: "stream", Summary: "Return the number of messages in a stream.", Usage: "key", Since: "5.0.0"},
		{Name: "xdel", Arity: -3, Flags: commands.Write | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdXDel,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KDelete)},
			Group:    "stream", Summary: "Returns the number of messages after removing them from a stream.",
			Usage: "key id [id ...]", Since: "5.0.0"},
		{Name: "xtrim", Arity: -4, Flags: commands.Write,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdXTrim,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KDelete)},
			Group:    "stream", Summary: "Deletes messages from the beginning of a stream.",
			Usage: "key MAXLEN|MINID [=|~] threshold [LIMIT count]", Since: "5.0.0"},
		{Name: "xread", Arity: -4, Flags: commands.Readonly | commands.Blocking | commands.MovableKeys,
			Handler: cmdXRead, KeysOf: xreadKeys,
			KeySpecs: []commands.KeySpec{
				{Flags: commands.KRO | commands.KAccess, Keyword: "STREAMS", StartFrom: 1, LastKey: -1, Step: 1,
					Limit: 2},
			},
			Group: "stream",
			Summary: "Returns messages from multiple streams with IDs greater than the ones requested. Blocks " +
				"until a message is available otherwise.",
			Usage: "[COUNT count] [BLOCK milliseconds] STREAMS key [key ...] id [id ...]", Since: "5.0.0"},
		{Name: "xreadgroup", Arity: -7, Flags: commands.Write | commands.Blocking | commands.MovableKeys,
			Handler: cmdXReadGroup, KeysOf: xreadKeys,
			KeySpecs: []commands.KeySpec{
				{Flags: commands.KRO | commands.KAccess, Keyword: "STREAMS", StartFrom: 4, LastKey: -1, Step: 1,
					Limit: 2},
			},
			Group: "stream",
			Summary: "Returns new or historical messages from a stream for a consumer in a group. Blocks until a " +
				"message is available otherwise.",
			Usage: "GROUP group consumer [COUNT count] [BLOCK milliseconds] [NOACK] STREAMS key [key ...] id [id ...]",
			Since: "5.0.0"},
		{Name: "xgroup", Arity: -2, Subcommands: []*commands.Spec{
			{Name: "xgroup|create", Arity: -5, Flags: commands.Write | commands.DenyOOM,
				FirstKey: 2, LastKey: 2, Step: 1, Handler: cmdXGroup,
				KeySpecs: []commands.KeySpec{commands.KeyAt(2, commands.KRW|commands.KInsert)}},
			{Name: "xgroup|createconsumer", Arity: 5, Flags: commands.Write | commands.DenyOOM,
				FirstKey: 2, LastKey: 2, Step: 1, Handler: cmdXGroup,
				KeySpecs: []commands.KeySpec{commands.KeyAt(2, commands.KRW|commands.KInsert)}},
			{Name: "xgroup|delconsumer", Arity: 5, Flags: commands.Write,
				FirstKey: 2, LastKey: 2, Step: 1, Handler: cmdXGroup,
				KeySpecs: []commands.KeySpec{commands.KeyAt(2, commands.KRW|commands.KDelete)}},
			{Name: "xgroup|destroy", Arity: 4, Flags: commands.Write,
				FirstKey: 2, LastKey: 2, Step: 1, Handler: cmdXGroup,
				KeySpecs: []commands.KeySpec{commands.KeyAt(2, commands.KRW|commands.KDelete)}},
			{Name: "xgroup|help", Arity: 2, Flags: commands.Loading | commands.Stale,
				Handler: cmdXGroup},
			{Name: "xgroup|setid", Arity: -5, Flags: commands.Write,
				FirstKey: 2, LastKey: 2, Step: 1, Handler: cmdXGroup,
				KeySpecs: []commands.KeySpec{commands.KeyAt(2, commands.KRW|commands.KUpdate)}},
		},
			Group: "stream", Summary: "A container for consumer groups commands.", Usage: "", Since: "5.0.0"},
		{Name: "xsetid", Arity: -3, Flags: commands.Write | commands.DenyOOM | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdXSetID,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KUpdate)},
			Group:    "stream", Summary: "An internal command for replicating stream values.",
			Usage: "key last-id [ENTRIESADDED entries-added] [MAXDELETEDID max-deleted-id]", Since: "5.0.0"},
		{Name: "xack", Arity: -4, Flags: commands.Write | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdXAck,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KUpdate)},
			Group:    "stream",
			Summary: "Returns the number of messages that were successfully acknowledged by the consumer group " +
				"member of a stream.",
			Usage: "key group id [id ...]", Since: "5.0.0"},
		{Name: "xpending", Arity: -3, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdXPending,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRO|commands.KAccess)},
			Group:    "stream",
			Summary:  "Returns the information and entries from a stream consumer group's pending entries list.",
			Usage:    "key group [[IDLE min-idle-time] start end count [consumer]]", Since: "5.0.0"},
		{Name: "xclaim", Arity: -6, Flags: commands.Write | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdXClaim,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KUpdate)},
			Group:    "stream",
			Summary: "Changes, or acquires, ownership of a message in a consumer group, as if the message was " +
				"delivered a consumer group member.",
			Usage: "key group consumer min-idle-time id [id ...] [IDLE ms] [TIME unix-time-milliseconds] " +
				"[RETRYCOUNT count] [FORCE] [JUSTID] [LASTID lastid]",
			Since: "5.0.0"},
		{Name: "xautoclaim", Arity: -6, Flags: commands.Write | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdXAutoClaim,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KDelete)},
			Group:    "stream",
			Summary: "Changes, or acquires, ownership of messages in a consumer group, as if the messages were " +
				"delivered to as consumer group member.",
			Usage: "key group consumer min-idle-time start [COUNT count] [JUSTID]", Since: "6.2.0"},
		{Name: "xinfo", Arity: -2, Subcommands: []*commands.Spec{
			{Name: "xinfo|consumers", Arity: 4, Flags: commands.Readonly,
				FirstKey: 2, LastKey: 2, Step: 1, Handler: cmdXInfo,
				KeySpecs: []commands.KeySpec{commands.KeyAt(2, commands.KRO|commands.KAccess)}},
			{Name: "xinfo|groups", Arity: 3, Flags: commands.Readonly,
				FirstKey: 2, LastKey: 2, Step: 1, Handler: cmdXInfo,
				KeySpecs: []commands.KeySpec{commands.KeyAt(2, commands.KRO|commands.KAccess)}},
			{Name: "xinfo|help", Arity: 2, Flags: commands.Loading | commands.Stale,
				Handler: cmdXInfo},
			{Name: "xinfo|stream", Arity: -3, Flags: commands.Readonly,
				FirstKey: 2, LastKey: 2, Step: 1, Handler: cmdXInfo,
				KeySpecs: []commands.KeySpec{commands.KeyAt(2, commands.KRO|commands.KAccess)}},
		},
			Group: "stream", Summary: "A container for stream introspection commands.", Usage: "", Since: "5.0.0"},
	}
}
