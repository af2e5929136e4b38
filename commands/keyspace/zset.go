package keyspace

import (
	"errors"
	"math"
	"strconv"
	"time"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/redisnum"
	"github.com/stampedeless/stampedeless/resp"
)

// The sorted-set commands (Redis's t_zset.c): argument checks, their order,
// error texts and reply shapes are Redis 7.0's; the engine does the rest
// atomically. Scores are read as Redis reads them (strtod) and replied as
// doubles (%.17g; RESP3's double type).

const (
	errNaN         = "ERR resulting score is not a number (NaN)"
	errScoreRange  = "ERR min or max is not a float"
	errLexRange    = "ERR min or max not valid string range item"
	errWeightFloat = "ERR weight value is not a float"
)

// parseScore reads a score or weight as Redis's getDoubleFromObject: all
// of b a number strtod reads, with no leading space, in range, not NaN.
func parseScore(b []byte) (float64, bool) {
	if len(b) == 0 || redisnum.IsSpace(b[0]) {
		return 0, false
	}
	v, n, erange := redisnum.Strtod(b)
	// ERANGE refuses a number only where it overflowed or became zero.
	return v, n == len(b) && !(erange && (math.IsInf(v, 0) || v == 0)) && !math.IsNaN(v)
}

// parseScoreBound reads one end of a score range as Redis's zslParseRange:
// "(" for an open end, then what strtod reads, all of it (nothing reads as
// 0), not NaN; out-of-range values are taken as strtod gives them.
func parseScoreBound(b []byte) (engine.ScoreBound, bool) {
	var sb engine.ScoreBound
	if len(b) > 0 && b[0] == '(' {
		sb.Excl, b = true, b[1:]
	}
	v, n, _ := redisnum.Strtod(b)
	sb.Value = v
	return sb, n == len(b) && !math.IsNaN(v)
}

// parseLexBound reads one end of a lex range: "+", "-", "(member" or
// "[member".
func parseLexBound(b []byte) (engine.LexBound, bool) {
	switch {
	case len(b) == 0:
		return engine.LexBound{}, false
	case len(b) == 1 && b[0] == '+':
		return engine.LexBound{Inf: 1}, true
	case len(b) == 1 && b[0] == '-':
		return engine.LexBound{Inf: -1}, true
	case b[0] == '(':
		return engine.LexBound{Value: b[1:], Excl: true}, true
	case b[0] == '[':
		return engine.LexBound{Value: b[1:]}, true
	}
	return engine.LexBound{}, false
}

// zaddOptions reads the options of ZADD (all) or GEOADD (NX, XX and CH
// only) that follow the key, up to the first argument that is none, and
// returns them with the arguments after them.
func zaddOptions(args [][]byte, all bool) (opts engine.ZAddOptions, ch bool, rest [][]byte) {
	i := 2
	for ; i < len(args); i++ {
		switch a := args[i]; {
		case resp.EqualFold(a, "nx"):
			opts.NX = true
		case resp.EqualFold(a, "xx"):
			opts.XX = true
		case resp.EqualFold(a, "ch"):
			ch = true
		case all && resp.EqualFold(a, "incr"):
			opts.Incr = true
		case all && resp.EqualFold(a, "gt"):
			opts.GT = true
		case all && resp.EqualFold(a, "lt"):
			opts.LT = true
		default:
			return opts, ch, args[i:]
		}
	}
	return opts, ch, nil
}

// cmdZAdd implements ZADD key [NX|XX] [GT|LT] [CH] [INCR] score member
// [score member ...].
func cmdZAdd(c *commands.Ctx, args [][]byte) {
	opts, ch, rest := zaddOptions(args, true)
	switch {
	case len(rest) == 0 || len(rest)%2 != 0:
		c.W.Error(commands.ErrSyntax)
		return
	case opts.NX && opts.XX:
		c.W.Error("ERR XX and NX options at the same time are not compatible")
		return
	case opts.GT && opts.NX || opts.LT && opts.NX || opts.GT && opts.LT:
		c.W.Error("ERR GT, LT, and/or NX options at the same time are not compatible")
		return
	case opts.Incr && len(rest) > 2:
		c.W.Error("ERR INCR option supports a single increment-element pair")
		return
	}
	zadd(c, args[1], opts, ch, rest)
}

// zadd runs ZADD or ZINCRBY of the score-member pairs in rest, whose
// scores are checked before anything changes.
func zadd(c *commands.Ctx, key []byte, opts engine.ZAddOptions, ch bool, rest [][]byte) {
	pairs := make([]engine.ScoreMember, len(rest)/2)
	for j := range pairs {
		score, ok := parseScore(rest[2*j])
		if !ok {
			c.W.Error(commands.ErrNotFloat)
			return
		}
		pairs[j] = engine.ScoreMember{Score: score, Member: rest[2*j+1]}
	}
	zaddPairs(c, key, opts, ch, pairs)
}

// zaddPairs is ZADD of pairs whose scores are read: the write, its event
// and its reply (GEOADD's too, which Redis runs as a ZADD).
func zaddPairs(c *commands.Ctx, key []byte, opts engine.ZAddOptions, ch bool, pairs []engine.ScoreMember) {
	res, err := c.Store.ZAdd(key, opts, pairs)
	if err == nil && res.Added+res.Updated > 0 {
		c.Notify(commands.EventZSet, listEvent(opts.Incr, "zincr", "zadd"), key)
	}
	switch {
	case errors.Is(err, engine.ErrNaNScore):
		c.W.Error(errNaN)
	case err != nil:
		commands.WriteError(c.W, err)
	case opts.Incr && res.Processed == 0:
		c.W.Null()
	case opts.Incr:
		c.W.Double(res.Score)
	case ch:
		c.W.Int(int64(res.Added + res.Updated))
	default:
		c.W.Int(int64(res.Added))
	}
}

func cmdZIncrBy(c *commands.Ctx, args [][]byte) {
	zadd(c, args[1], engine.ZAddOptions{Incr: true}, false, args[2:])
}

func cmdZRem(c *commands.Ctx, args [][]byte) {
	n, err := c.Store.ZRem(args[1], args[2:])
	if err == nil && n > 0 {
		notifyRemoved(c, commands.EventZSet, "zrem", args[1])
	}
	writeIntOrErr(c, int64(n), err)
}

func cmdZCard(c *commands.Ctx, args [][]byte) {
	n, err := c.Store.ZCard(args[1])
	writeIntOrErr(c, int64(n), err)
}

func cmdZScore(c *commands.Ctx, args [][]byte) {
	scores, found, err := c.Store.ZScore(args[1], args[2:])
	switch {
	case err != nil:
		commands.WriteError(c.W, err)
	case !found[0]:
		c.W.Null()
	default:
		c.W.Double(scores[0])
	}
}

func cmdZMScore(c *commands.Ctx, args [][]byte) {
	scores, found, err := c.Store.ZScore(args[1], args[2:])
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	c.W.Array(len(scores))
	for i, s := range scores {
		if found[i] {
			c.W.Double(s)
		} else {
			c.W.Null()
		}
	}
}

func cmdZRank(c *commands.Ctx, args [][]byte)    { zrank(c, args, false) }
func cmdZRevRank(c *commands.Ctx, args [][]byte) { zrank(c, args, true) }

func zrank(c *commands.Ctx, args [][]byte, rev bool) {
	rank, found, err := c.Store.ZRank(args[1], args[2], rev)
	switch {
	case err != nil:
		commands.WriteError(c.W, err)
	case !found:
		c.W.Null()
	default:
		c.W.Int(int64(rank))
	}
}

// scoredShape is how a reply lists members with their scores.
type scoredShape uint8

const (
	membersOnly  scoredShape = iota
	flatPairs                // member, score, member, score...
	pairsInRESP3             // flat in RESP2, [member, score] pairs in RESP3
	nestedPairs              // [member, score] pairs
)

// writeScored replies members in shape, as Redis's zrange and zpop
// replies.
func writeScored(c *commands.Ctx, ents []engine.ScoreMember, shape scoredShape) {
	w := scoredReply{w: c.W, shape: shape.on(c.W)}
	w.Count(len(ents))
	for _, e := range ents {
		w.Member(e.Member, e.Score)
	}
}

// on is shape as written on w: pairsInRESP3 becomes nestedPairs or
// flatPairs by w's protocol.
func (shape scoredShape) on(w *resp.Writer) scoredShape {
	switch {
	case shape != pairsInRESP3:
		return shape
	case w.Protocol() == 3:
		return nestedPairs
	}
	return flatPairs
}

// scoredReply writes members in a shape (not pairsInRESP3: see on) as
// they come, an engine.ScoredWriter.
type scoredReply struct {
	w     *resp.Writer
	shape scoredShape
}

func (r *scoredReply) Count(n int) {
	if r.shape == flatPairs {
		n *= 2
	}
	r.w.Array(n)
}

func (r *scoredReply) Member(m []byte, score float64) {
	switch r.shape {
	case membersOnly:
		r.w.Bulk(m)
	case nestedPairs:
		r.w.Array(2)
		r.w.Bulk(m)
		r.w.Double(score)
	default:
		r.w.Bulk(m)
		r.w.Double(score)
	}
}

// zrangeCall is how a ZRANGE-family command reads its arguments.
type zrangeCall struct {
	store bool            // ZRANGESTORE: args[1] is the destination
	by    engine.ZRangeBy // fixed by the command, or chosen by BYSCORE/BYLEX
	auto  bool            // ZRANGE and ZRANGESTORE: BYSCORE, BYLEX and REV are options
	rev   bool
}

func cmdZRange(c *commands.Ctx, args [][]byte) { zrange(c, args, zrangeCall{auto: true}) }
func cmdZRangeStore(c *commands.Ctx, args [][]byte) {
	zrange(c, args, zrangeCall{store: true, auto: true})
}
func cmdZRevRange(c *commands.Ctx, args [][]byte) { zrange(c, args, zrangeCall{rev: true}) }
func cmdZRangeByScore(c *commands.Ctx, args [][]byte) {
	zrange(c, args, zrangeCall{by: engine.ZByScore})
}
func cmdZRevRangeByScore(c *commands.Ctx, args [][]byte) {
	zrange(c, args, zrangeCall{by: engine.ZByScore, rev: true})
}
func cmdZRangeByLex(c *commands.Ctx, args [][]byte) { zrange(c, args, zrangeCall{by: engine.ZByLex}) }
func cmdZRevRangeByLex(c *commands.Ctx, args [][]byte) {
	zrange(c, args, zrangeCall{by: engine.ZByLex, rev: true})
}

// zrange is Redis's zrangeGenericCommand: options, their conflicts, the
// range, then the key.
func zrange(c *commands.Ctx, args [][]byte, call zrangeCall) {
	at := 1
	if call.store {
		at = 2
	}
	key := args[at]
	r := engine.ZRange{By: call.by, Rev: call.rev, Limit: -1}
	withScores, limited := false, false
	for j := at + 3; j < len(args); j++ {
		a := args[j]
		switch {
		case !call.store && resp.EqualFold(a, "withscores"):
			withScores = true
		case resp.EqualFold(a, "limit") && len(args)-j-1 >= 2:
			off, ok1 := resp.ParseInt(args[j+1])
			lim, ok2 := resp.ParseInt(args[j+2])
			if !ok1 || !ok2 {
				c.W.Error(commands.ErrNotInteger)
				return
			}
			r.Offset, r.Limit, limited = off, lim, true
			j += 2
		case call.auto && !r.Rev && resp.EqualFold(a, "rev"):
			r.Rev = true
		case call.auto && r.By == engine.ZByRank && resp.EqualFold(a, "bylex"):
			r.By = engine.ZByLex
		case call.auto && r.By == engine.ZByRank && resp.EqualFold(a, "byscore"):
			r.By = engine.ZByScore
		default:
			c.W.Error(commands.ErrSyntax)
			return
		}
	}
	if limited && r.By == engine.ZByRank {
		c.W.Error("ERR syntax error, LIMIT is only supported in combination with either BYSCORE or BYLEX")
		return
	}
	if withScores && r.By == engine.ZByLex {
		c.W.Error("ERR syntax error, WITHSCORES not supported in combination with BYLEX")
		return
	}
	lo, hi := args[at+1], args[at+2]
	if r.Rev && r.By != engine.ZByRank {
		lo, hi = hi, lo // given as max, min
	}
	if !parseRange(c, &r, lo, hi) {
		return
	}
	if call.store {
		n, changed, err := c.Store.ZRangeStore(args[1], key, r)
		if err == nil {
			notifyStored(c, commands.EventZSet, "zrangestore", args[1], n > 0, changed)
		}
		writeIntOrErr(c, int64(n), err)
		return
	}
	// The members go straight from the set into the reply, not through
	// copies.
	w := &scoredReply{w: c.W, shape: shapeOf(withScores).on(c.W)}
	if err := c.Store.ZRangeTo(key, r, w); err != nil {
		commands.WriteError(c.W, err)
	}
}

// parseRange reads r's bounds from lo and hi by r.By, replying the error
// if they do not parse.
func parseRange(c *commands.Ctx, r *engine.ZRange, lo, hi []byte) bool {
	var ok1, ok2 bool
	switch r.By {
	case engine.ZByRank:
		r.Start, ok1 = resp.ParseInt(lo)
		r.Stop, ok2 = resp.ParseInt(hi)
		if !ok1 || !ok2 {
			c.W.Error(commands.ErrNotInteger)
			return false
		}
	case engine.ZByScore:
		r.Min, ok1 = parseScoreBound(lo)
		r.Max, ok2 = parseScoreBound(hi)
		if !ok1 || !ok2 {
			c.W.Error(errScoreRange)
			return false
		}
	case engine.ZByLex:
		r.LexMin, ok1 = parseLexBound(lo)
		r.LexMax, ok2 = parseLexBound(hi)
		if !ok1 || !ok2 {
			c.W.Error(errLexRange)
			return false
		}
	}
	return true
}

func cmdZCount(c *commands.Ctx, args [][]byte)    { zcount(c, args, engine.ZByScore) }
func cmdZLexCount(c *commands.Ctx, args [][]byte) { zcount(c, args, engine.ZByLex) }

func zcount(c *commands.Ctx, args [][]byte, by engine.ZRangeBy) {
	r := engine.ZRange{By: by}
	if !parseRange(c, &r, args[2], args[3]) {
		return
	}
	n, err := c.Store.ZCount(args[1], r)
	writeIntOrErr(c, int64(n), err)
}

func cmdZRemRangeByRank(c *commands.Ctx, args [][]byte)  { zremrange(c, args, engine.ZByRank) }
func cmdZRemRangeByScore(c *commands.Ctx, args [][]byte) { zremrange(c, args, engine.ZByScore) }
func cmdZRemRangeByLex(c *commands.Ctx, args [][]byte)   { zremrange(c, args, engine.ZByLex) }

func zremrange(c *commands.Ctx, args [][]byte, by engine.ZRangeBy) {
	r := engine.ZRange{By: by, Limit: -1}
	if !parseRange(c, &r, args[2], args[3]) {
		return
	}
	n, err := c.Store.ZRemRange(args[1], r)
	if err == nil && n > 0 {
		notifyRemoved(c, commands.EventZSet, zremrangeEvents[by], args[1])
	}
	writeIntOrErr(c, int64(n), err)
}

// zremrangeEvents are the events of ZREMRANGEBYRANK, BYSCORE and BYLEX.
var zremrangeEvents = map[engine.ZRangeBy]string{
	engine.ZByRank: "zremrangebyrank", engine.ZByScore: "zremrangebyscore", engine.ZByLex: "zremrangebylex",
}

// notifyZPopped sends a pop's events: zpopmin or zpopmax, then "del" if
// the set is gone.
func notifyZPopped(c *commands.Ctx, key []byte, popped []engine.ScoreMember, highest bool) {
	if len(popped) > 0 {
		notifyRemoved(c, commands.EventZSet, listEvent(highest, "zpopmax", "zpopmin"), key)
	}
}

func cmdZPopMin(c *commands.Ctx, args [][]byte) { zpop(c, args, false) }
func cmdZPopMax(c *commands.Ctx, args [][]byte) { zpop(c, args, true) }

// zpop implements ZPOPMIN and ZPOPMAX key [count]: a flat array of
// members and scores, nested pairs in RESP3 when a count is given.
func zpop(c *commands.Ctx, args [][]byte, highest bool) {
	if len(args) > 3 {
		c.W.Error(commands.ErrSyntax)
		return
	}
	count, counted := int64(1), len(args) == 3
	if counted {
		n, ok := resp.ParseInt(args[2])
		if !ok || n < 0 {
			c.W.Error(errPositiveCount)
			return
		}
		count = n
	}
	_, popped, err := c.Store.ZPop(args[1:2], highest, int(min(count, math.MaxInt32)))
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	notifyZPopped(c, args[1], popped, highest)
	shape := flatPairs
	if counted {
		shape = pairsInRESP3
	}
	writeScored(c, popped, shape)
}

// cmdZMPop implements ZMPOP numkeys key [key ...] MIN|MAX [COUNT count]:
// [key, [[member, score], ...]] of the first key holding a sorted set,
// or a null array.
func cmdZMPop(c *commands.Ctx, args [][]byte) {
	m, ok := parseZMPop(c, args[1:])
	if !ok {
		return
	}
	key, popped, err := c.Store.ZPop(m.keys, m.highest, m.count)
	if err == nil && key != nil {
		notifyZPopped(c, key, popped, m.highest)
	}
	switch {
	case err != nil:
		commands.WriteError(c.W, err)
	case key == nil:
		c.W.NullArray()
	default:
		writeZMPop(c, key, popped)
	}
}

// zmpopArgs are ZMPOP's and BZMPOP's arguments after the command (and
// BZMPOP's timeout).
type zmpopArgs struct {
	keys    [][]byte
	highest bool // MAX
	count   int
}

// parseZMPop parses numkeys key [key ...] MIN|MAX [COUNT count], or
// answers the error.
func parseZMPop(c *commands.Ctx, args [][]byte) (m zmpopArgs, ok bool) {
	numKeys, ok := resp.ParseInt(args[0])
	if !ok || numKeys < 1 {
		c.W.Error(errNumKeys)
		return m, false
	}
	where := 1 + numKeys
	if numKeys >= int64(len(args)) || where >= int64(len(args)) {
		c.W.Error(commands.ErrSyntax)
		return m, false
	}
	m.keys = args[1:where]
	switch w := args[where]; {
	case resp.EqualFold(w, "min"):
	case resp.EqualFold(w, "max"):
		m.highest = true
	default:
		c.W.Error(commands.ErrSyntax)
		return m, false
	}
	count := int64(-1)
	for j := int(where) + 1; j < len(args); j++ {
		if count != -1 || !resp.EqualFold(args[j], "count") || j+1 >= len(args) {
			c.W.Error(commands.ErrSyntax)
			return m, false
		}
		j++
		n, ok := resp.ParseInt(args[j])
		if !ok || n < 1 {
			c.W.Error("ERR count should be greater than 0")
			return m, false
		}
		count = n
	}
	m.count = int(min(max(count, 1), math.MaxInt32))
	return m, true
}

// writeZMPop writes ZMPOP's and BZMPOP's reply of what was popped from
// key.
func writeZMPop(c *commands.Ctx, key []byte, popped []engine.ScoreMember) {
	c.W.Array(2)
	c.W.Bulk(key)
	writeScored(c, popped, nestedPairs)
}

func cmdBZPopMin(c *commands.Ctx, args [][]byte) {
	bzpop(c, args[1:len(args)-1], args[len(args)-1], false)
}
func cmdBZPopMax(c *commands.Ctx, args [][]byte) {
	bzpop(c, args[1:len(args)-1], args[len(args)-1], true)
}

// bzpop implements BZPOPMIN and BZPOPMAX key [key ...] timeout: [key,
// member, score] of the first key holding a sorted set, or a null array
// once timed out.
func bzpop(c *commands.Ctx, keys [][]byte, timeoutArg []byte, highest bool) {
	timeout, ok := parseBlockTimeout(c, timeoutArg)
	if !ok {
		return
	}
	blockingZPop(c, keys, 1, highest, timeout, func(key []byte, popped []engine.ScoreMember) {
		c.W.Array(3)
		c.W.Bulk(key)
		c.W.Bulk(popped[0].Member)
		c.W.Double(popped[0].Score)
	})
}

// cmdBZMPop implements BZMPOP timeout numkeys key [key ...] MIN|MAX
// [COUNT count]; the timeout is parsed last, as in Redis.
func cmdBZMPop(c *commands.Ctx, args [][]byte) {
	m, ok := parseZMPop(c, args[2:])
	if !ok {
		return
	}
	timeout, ok := parseBlockTimeout(c, args[1])
	if !ok {
		return
	}
	blockingZPop(c, m.keys, m.count, m.highest, timeout, func(key []byte, popped []engine.ScoreMember) {
		writeZMPop(c, key, popped)
	})
}

// blockingZPop pops up to count members from the first of keys that
// holds a sorted set, or blocks on keys until one does (blockingTake).
func blockingZPop(c *commands.Ctx, keys [][]byte, count int, highest bool, timeout time.Duration, reply func(key []byte, popped []engine.ScoreMember)) {
	blockingTake(c, keys, timeout, func(keys [][]byte) ([]byte, []engine.ScoreMember, error) {
		key, popped, err := c.Store.ZPop(keys, highest, count)
		if err == nil && key != nil {
			notifyZPopped(c, key, popped, highest)
		}
		return key, popped, err
	}, reply)
}

// cmdZRandMember implements ZRANDMEMBER key [count [WITHSCORES]].
func cmdZRandMember(c *commands.Ctx, args [][]byte) {
	if len(args) == 2 {
		ents, err := c.Store.ZRandMember(args[1], 1)
		switch {
		case err != nil:
			commands.WriteError(c.W, err)
		case len(ents) == 0:
			c.W.Null()
		default:
			c.W.Bulk(ents[0].Member)
		}
		return
	}
	count, ok := resp.ParseInt(args[2])
	if !ok {
		c.W.Error(commands.ErrNotInteger)
		return
	}
	if count == math.MinInt64 {
		c.W.Error("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807")
		return
	}
	withScores := false
	switch {
	case len(args) > 4 || len(args) == 4 && !resp.EqualFold(args[3], "withscores"):
		c.W.Error(commands.ErrSyntax)
		return
	case len(args) == 4:
		withScores = true
		if count < math.MinInt64/2 || count > math.MaxInt64/2 {
			c.W.Error("ERR value is out of range")
			return
		}
	}
	if count < -maxRandomDraws {
		c.W.Error("ERR value is out of range, value must between " + strconv.Itoa(-maxRandomDraws) + " and 9223372036854775807")
		return
	}
	ents, err := c.Store.ZRandMember(args[1], count)
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	writeScored(c, ents, shapeOf(withScores))
}

// cmdZScan implements ZSCAN key cursor [MATCH pattern] [COUNT count]:
// members and their scores, flat, the scores as strings.
func cmdZScan(c *commands.Ctx, args [][]byte) {
	cursor, filter, count, ok := collScanArgs(c, args, engine.TypeZSet)
	if !ok {
		return
	}
	next, ents, err := c.Store.ZScan(args[1], cursor, filter, count)
	if err != nil {
		commands.WriteError(c.W, err)
		return
	}
	flat := make([][]byte, 0, 2*len(ents))
	for _, e := range ents {
		flat = append(flat, e.Member, redisnum.AppendD2String(nil, e.Score))
	}
	writeScanReply(c, next, flat)
}

// zsetOpCall is how a ZUNION-family command reads its arguments.
type zsetOpCall struct {
	op    engine.SetOp
	store bool // the destination is args[1], numkeys args[2]
	card  bool // ZINTERCARD: LIMIT, no WEIGHTS, AGGREGATE or WITHSCORES
	name  string
}

func cmdZUnion(c *commands.Ctx, args [][]byte) {
	zsetOp(c, args, zsetOpCall{op: engine.SetUnion, name: "zunion"})
}
func cmdZInter(c *commands.Ctx, args [][]byte) {
	zsetOp(c, args, zsetOpCall{op: engine.SetInter, name: "zinter"})
}
func cmdZDiff(c *commands.Ctx, args [][]byte) {
	zsetOp(c, args, zsetOpCall{op: engine.SetDiff, name: "zdiff"})
}
func cmdZUnionStore(c *commands.Ctx, args [][]byte) {
	zsetOp(c, args, zsetOpCall{op: engine.SetUnion, store: true, name: "zunionstore"})
}
func cmdZInterStore(c *commands.Ctx, args [][]byte) {
	zsetOp(c, args, zsetOpCall{op: engine.SetInter, store: true, name: "zinterstore"})
}
func cmdZDiffStore(c *commands.Ctx, args [][]byte) {
	zsetOp(c, args, zsetOpCall{op: engine.SetDiff, store: true, name: "zdiffstore"})
}
func cmdZInterCard(c *commands.Ctx, args [][]byte) {
	zsetOp(c, args, zsetOpCall{op: engine.SetInter, card: true, name: "zintercard"})
}

// zsetStoreKeys finds the keys of the *STORE forms: the destination, then
// the sources.
func zsetStoreKeys(args [][]byte) [][]byte {
	if len(args) < 2 {
		return nil
	}
	return append([][]byte{args[1]}, numKeysAt(args, 2)...)
}

// zsetOp is Redis's zunionInterDiffGenericCommand: numkeys, the keys'
// types, then the options in any order.
func zsetOp(c *commands.Ctx, args [][]byte, call zsetOpCall) {
	at := 1
	if call.store {
		at = 2
	}
	numKeys, ok := resp.ParseInt(args[at])
	switch {
	case !ok:
		c.W.Error(commands.ErrNotInteger)
		return
	case numKeys < 1:
		c.W.Error("ERR at least 1 input key is needed for '" + call.name + "' command")
		return
	case numKeys > int64(len(args)-at-1):
		c.W.Error(commands.ErrSyntax)
		return
	}
	keys := args[at+1 : at+1+int(numKeys)]
	for _, k := range keys {
		if t, found := c.Store.TypeOf(k); found && t != engine.TypeZSet && t != engine.TypeSet {
			c.W.Error(commands.ErrWrongType)
			return
		}
	}
	op := engine.ZSetOp{Op: call.op, Keys: keys}
	withScores := false
	var limit int64
	for j := at + 1 + int(numKeys); j < len(args); {
		remaining := len(args) - j
		a := args[j]
		switch {
		case call.op != engine.SetDiff && !call.card && remaining >= len(keys)+1 && resp.EqualFold(a, "weights"):
			op.Weights = make([]float64, len(keys))
			for i := range keys {
				w, ok := parseScore(args[j+1+i])
				if !ok {
					c.W.Error(errWeightFloat)
					return
				}
				op.Weights[i] = w
			}
			j += 1 + len(keys)
		case call.op != engine.SetDiff && !call.card && remaining >= 2 && resp.EqualFold(a, "aggregate"):
			switch v := args[j+1]; {
			case resp.EqualFold(v, "sum"):
				op.Aggregate = engine.ZSum
			case resp.EqualFold(v, "min"):
				op.Aggregate = engine.ZMin
			case resp.EqualFold(v, "max"):
				op.Aggregate = engine.ZMax
			default:
				c.W.Error(commands.ErrSyntax)
				return
			}
			j += 2
		case !call.store && !call.card && resp.EqualFold(a, "withscores"):
			withScores = true
			j++
		case call.card && remaining >= 2 && resp.EqualFold(a, "limit"):
			n, ok := resp.ParseInt(args[j+1])
			if !ok || n < 0 {
				c.W.Error("ERR LIMIT can't be negative")
				return
			}
			limit = n
			j += 2
		default:
			c.W.Error(commands.ErrSyntax)
			return
		}
	}
	switch {
	case call.store:
		n, changed, err := c.Store.ZStore(args[1], op)
		if err == nil {
			notifyStored(c, commands.EventZSet, call.name, args[1], n > 0, changed)
		}
		writeIntOrErr(c, int64(n), err)
	case call.card:
		n, err := c.Store.ZInterCard(keys, int(min(limit, math.MaxInt32)))
		writeIntOrErr(c, int64(n), err)
	default:
		ents, err := c.Store.ZCompute(op)
		if err != nil {
			commands.WriteError(c.W, err)
			return
		}
		writeScored(c, ents, shapeOf(withScores))
	}
}

// shapeOf is the shape of a reply listing members, with their scores if
// withScores.
func shapeOf(withScores bool) scoredShape {
	if withScores {
		return pairsInRESP3
	}
	return membersOnly
}

// sortedSetCommands are the sorted set commands, the blocking pops among
// them, for the family's table (Commands).
func sortedSetCommands() []*commands.Spec {
	return []*commands.Spec{
		{Name: "zadd", Arity: -4, Flags: commands.Write | commands.DenyOOM | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdZAdd,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KUpdate)},
			Group:    "sorted-set",
			Summary: "Adds one or more members to a sorted set, or updates their scores. Creates the key if it " +
				"doesn't exist.",
			Usage: "key [NX|XX] [GT|LT] [CH] [INCR] score member [score member ...]", Since: "1.2.0"},
		{Name: "zincrby", Arity: 4, Flags: commands.Write | commands.DenyOOM | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdZIncrBy,
			Group: "sorted-set", Summary: "Increments the score of a member in a sorted set.",
			Usage: "key increment member", Since: "1.2.0"},
		{Name: "zscore", Arity: 3, Flags: commands.Readonly | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdZScore,
			Group: "sorted-set", Summary: "Returns the score of a member in a sorted set.", Usage: "key member",
			Since: "1.2.0"},
		{Name: "zmscore", Arity: -3, Flags: commands.Readonly | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdZMScore,
			Group: "sorted-set", Summary: "Returns the score of one or more members in a sorted set.",
			Usage: "key member [member ...]", Since: "6.2.0"},
		{Name: "zcard", Arity: 2, Flags: commands.Readonly | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdZCard, Access: commands.KeysNone,
			Group: "sorted-set", Summary: "Returns the number of members in a sorted set.", Usage: "key",
			Since: "1.2.0"},
		{Name: "zcount", Arity: 4, Flags: commands.Readonly | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdZCount,
			Group:   "sorted-set",
			Summary: "Returns the count of members in a sorted set that have scores within a range.",
			Usage:   "key min max", Since: "2.0.0"},
		{Name: "zlexcount", Arity: 4, Flags: commands.Readonly | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdZLexCount,
			Group:   "sorted-set",
			Summary: "Returns the number of members in a sorted set within a lexicographical range.",
			Usage:   "key min max", Since: "2.8.9"},
		{Name: "zrange", Arity: -4, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdZRange,
			Group:   "sorted-set",
			Summary: "Returns members in a sorted set within a range of indexes, scores or members.",
			Usage:   "key start stop [BYSCORE|BYLEX] [REV] [LIMIT offset count] [WITHSCORES]", Since: "1.2.0"},
		{Name: "zrangestore", Arity: -5, Flags: commands.Write | commands.DenyOOM,
			FirstKey: 1, LastKey: 2, Step: 1, Handler: cmdZRangeStore, Access: commands.KeysDestFirst,
			KeySpecs: []commands.KeySpec{
				commands.KeyAt(1, commands.KOW|commands.KUpdate),
				commands.KeyAt(2, commands.KRO|commands.KAccess),
			},
			Group: "sorted-set", Summary: "Stores a range of members from a sorted set in a key.",
			Usage: "dst src min max [BYSCORE|BYLEX] [REV] [LIMIT offset count]", Since: "6.2.0"},
		{Name: "zrangebyscore", Arity: -4, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdZRangeByScore,
			Group: "sorted-set", Summary: "Returns members in a sorted set within a range of scores.",
			Usage: "key min max [WITHSCORES] [LIMIT offset count]", Since: "1.0.5"},
		{Name: "zrevrangebyscore", Arity: -4, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdZRevRangeByScore,
			Group: "sorted-set", Summary: "Returns members in a sorted set within a range of scores in reverse order.",
			Usage: "key max min [WITHSCORES] [LIMIT offset count]", Since: "2.2.0"},
		{Name: "zrangebylex", Arity: -4, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdZRangeByLex,
			Group: "sorted-set", Summary: "Returns members in a sorted set within a lexicographical range.",
			Usage: "key min max [LIMIT offset count]", Since: "2.8.9"},
		{Name: "zrevrangebylex", Arity: -4, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdZRevRangeByLex,
			Group:   "sorted-set",
			Summary: "Returns members in a sorted set within a lexicographical range in reverse order.",
			Usage:   "key max min [LIMIT offset count]", Since: "2.8.9"},
		{Name: "zrevrange", Arity: -4, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdZRevRange,
			Group: "sorted-set", Summary: "Returns members in a sorted set within a range of indexes in reverse order.",
			Usage: "key start stop [WITHSCORES]", Since: "1.2.0"},
		{Name: "zrank", Arity: 3, Flags: commands.Readonly | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdZRank,
			Group: "sorted-set", Summary: "Returns the index of a member in a sorted set ordered by ascending scores.",
			Usage: "key member", Since: "2.0.0"},
		{Name: "zrevrank", Arity: 3, Flags: commands.Readonly | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdZRevRank,
			Group: "sorted-set", Summary: "Returns the index of a member in a sorted set ordered by descending scores.",
			Usage: "key member", Since: "2.0.0"},
		{Name: "zrem", Arity: -3, Flags: commands.Write | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdZRem,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KDelete)},
			Group:    "sorted-set",
			Summary: "Removes one or more members from a sorted set. Deletes the sorted set if all members were " +
				"removed.",
			Usage: "key member [member ...]", Since: "1.2.0"},
		{Name: "zremrangebyrank", Arity: 4, Flags: commands.Write,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdZRemRangeByRank,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KDelete)},
			Group:    "sorted-set",
			Summary: "Removes members in a sorted set within a range of indexes. Deletes the sorted set if all " +
				"members were removed.",
			Usage: "key start stop", Since: "2.0.0"},
		{Name: "zremrangebyscore", Arity: 4, Flags: commands.Write,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdZRemRangeByScore,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KDelete)},
			Group:    "sorted-set",
			Summary: "Removes members in a sorted set within a range of scores. Deletes the sorted set if all " +
				"members were removed.",
			Usage: "key min max", Since: "1.2.0"},
		{Name: "zremrangebylex", Arity: 4, Flags: commands.Write,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdZRemRangeByLex,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KDelete)},
			Group:    "sorted-set",
			Summary: "Removes members in a sorted set within a lexicographical range. Deletes the sorted set if " +
				"all members were removed.",
			Usage: "key min max", Since: "2.8.9"},
		{Name: "zpopmin", Arity: -2, Flags: commands.Write | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdZPopMin,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KAccess|commands.KDelete)},
			Group:    "sorted-set",
			Summary: "Returns the lowest-scoring members from a sorted set after removing them. Deletes the " +
				"sorted set if the last member was popped.",
			Usage: "key [count]", Since: "5.0.0"},
		{Name: "zpopmax", Arity: -2, Flags: commands.Write | commands.Fast,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdZPopMax,
			KeySpecs: []commands.KeySpec{commands.KeyAt(1, commands.KRW|commands.KAccess|commands.KDelete)},
			Group:    "sorted-set",
			Summary: "Returns the highest-scoring members from a sorted set after removing them. Deletes the " +
				"sorted set if the last member was popped.",
			Usage: "key [count]", Since: "5.0.0"},
		{Name: "zmpop", Arity: -4, Flags: commands.Write | commands.MovableKeys,
			Handler: cmdZMPop, KeysOf: numKeysFirst,
			KeySpecs: []commands.KeySpec{
				{Flags: commands.KRW | commands.KAccess | commands.KDelete, Index: 1, KeyNum: true, NumKeys: 0,
					FirstKey: 1},
			},
			Group: "sorted-set",
			Summary: "Returns the highest- or lowest-scoring members from one or more sorted sets after removing " +
				"them. Deletes the sorted set if the last member was popped.",
			Usage: "numkeys key [key ...] MIN|MAX [COUNT count]", Since: "7.0.0"},
		{Name: "bzpopmin", Arity: -3, Flags: commands.Write | commands.NoScript | commands.Fast | commands.Blocking,
			FirstKey: 1, LastKey: -2, Step: 1, Handler: cmdBZPopMin,
			KeySpecs: []commands.KeySpec{
				{Flags: commands.KRW | commands.KAccess | commands.KDelete, Index: 1, LastKey: -2},
			},
			Group: "sorted-set",
			Summary: "Removes and returns the member with the lowest score from one or more sorted sets, or " +
				"blocks until one is available.",
			Usage: "key [key ...] timeout", Since: "5.0.0"},
		{Name: "bzpopmax", Arity: -3, Flags: commands.Write | commands.NoScript | commands.Fast | commands.Blocking,
			FirstKey: 1, LastKey: -2, Step: 1, Handler: cmdBZPopMax,
			KeySpecs: []commands.KeySpec{
				{Flags: commands.KRW | commands.KAccess | commands.KDelete, Index: 1, LastKey: -2},
			},
			Group: "sorted-set",
			Summary: "Removes and returns the member with the highest score from one or more sorted sets, or " +
				"blocks until one is available.",
			Usage: "key [key ...] timeout", Since: "5.0.0"},
		{Name: "bzmpop", Arity: -5, Flags: commands.Write | commands.Blocking | commands.MovableKeys,
			Handler: cmdBZMPop, KeysOf: numKeysSecond,
			KeySpecs: []commands.KeySpec{
				{Flags: commands.KRW | commands.KAccess | commands.KDelete, Index: 2, KeyNum: true, NumKeys: 0,
					FirstKey: 1},
			},
			Group: "sorted-set",
			Summary: "Removes and returns the members with the lowest or highest scores from one or more sorted " +
				"sets, or blocks until one is available.",
			Usage: "timeout numkeys key [key ...] MIN|MAX [COUNT count]", Since: "7.0.0"},
		{Name: "zrandmember", Arity: -2, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdZRandMember,
			Group: "sorted-set", Summary: "Returns one or more random members from a sorted set.",
			Usage: "key [count [WITHSCORES]]", Since: "6.2.0"},
		{Name: "zscan", Arity: -3, Flags: commands.Readonly,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdZScan,
			Group: "sorted-set", Summary: "Iterates over members and scores of a sorted set.",
			Usage: "key cursor [MATCH pattern] [COUNT count]", Since: "2.8.0"},
		{Name: "zunion", Arity: -3, Flags: commands.Readonly | commands.MovableKeys,
			Handler: cmdZUnion, KeysOf: numKeysFirst,
			KeySpecs: []commands.KeySpec{
				{Flags: commands.KRO | commands.KAccess, Index: 1, KeyNum: true, NumKeys: 0, FirstKey: 1},
			},
			Group: "sorted-set", Summary: "Returns the union of multiple sorted sets.",
			Usage: "numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]",
			Since: "6.2.0"},
		{Name: "zinter", Arity: -3, Flags: commands.Readonly | commands.MovableKeys,
			Handler: cmdZInter, KeysOf: numKeysFirst,
			KeySpecs: []commands.KeySpec{
				{Flags: commands.KRO | commands.KAccess, Index: 1, KeyNum: true, NumKeys: 0, FirstKey: 1},
			},
			Group: "sorted-set", Summary: "Returns the intersect of multiple sorted sets.",
			Usage: "numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX] [WITHSCORES]",
			Since: "6.2.0"},
		{Name: "zdiff", Arity: -3, Flags: commands.Readonly | commands.MovableKeys,
			Handler: cmdZDiff, KeysOf: numKeysFirst,
			KeySpecs: []commands.KeySpec{
				{Flags: commands.KRO | commands.KAccess, Index: 1, KeyNum: true, NumKeys: 0, FirstKey: 1},
			},
			Group: "sorted-set", Summary: "Returns the difference between multiple sorted sets.",
			Usage: "numkeys key [key ...] [WITHSCORES]", Since: "6.2.0"},
		{Name: "zunionstore", Arity: -4, Flags: commands.Write | commands.DenyOOM | commands.MovableKeys,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdZUnionStore, Access: commands.KeysDestFirst,
			KeysOf: zsetStoreKeys,
			KeySpecs: []commands.KeySpec{
				commands.KeyAt(1, commands.KOW|commands.KUpdate),
				{Flags: commands.KRO | commands.KAccess, Index: 2, KeyNum: true, NumKeys: 0, FirstKey: 1},
			},
			Group: "sorted-set", Summary: "Stores the union of multiple sorted sets in a key.",
			Usage: "destination numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX]",
			Since: "2.0.0"},
		{Name: "zinterstore", Arity: -4, Flags: commands.Write | commands.DenyOOM | commands.MovableKeys,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdZInterStore, Access: commands.KeysDestFirst,
			KeysOf: zsetStoreKeys,
			KeySpecs: []commands.KeySpec{
				commands.KeyAt(1, commands.KOW|commands.KUpdate),
				{Flags: commands.KRO | commands.KAccess, Index: 2, KeyNum: true, NumKeys: 0, FirstKey: 1},
			},
			Group: "sorted-set", Summary: "Stores the intersect of multiple sorted sets in a key.",
			Usage: "destination numkeys key [key ...] [WEIGHTS weight [weight ...]] [AGGREGATE SUM|MIN|MAX]",
			Since: "2.0.0"},
		{Name: "zdiffstore", Arity: -4, Flags: commands.Write | commands.DenyOOM | commands.MovableKeys,
			FirstKey: 1, LastKey: 1, Step: 1, Handler: cmdZDiffStore, Access: commands.KeysDestFirst,
			KeysOf: zsetStoreKeys,
			KeySpecs: []commands.KeySpec{
				commands.KeyAt(1, commands.KOW|commands.KUpdate),
				{Flags: commands.KRO | commands.KAccess, Index: 2, KeyNum: true, NumKeys: 0, FirstKey: 1},
			},
			Group: "sorted-set", Summary: "Stores the difference of multiple sorted sets in a key.",
			Usage: "destination numkeys key [key ...]", Since: "6.2.0"},
		{Name: "zintercard", Arity: -3, Flags: commands.Readonly | commands.MovableKeys,
			Handler: cmdZInterCard, KeysOf: numKeysFirst,
			KeySpecs: []commands.KeySpec{
				{Flags: commands.KRO | commands.KAccess, Index: 1, KeyNum: true, NumKeys: 0, FirstKey: 1},
			},
			Group: "sorted-set", Summary: "Returns the number of members of the intersect of multiple sorted sets.",
			Usage: "numkeys key [key ...] [LIMIT limit]", Since: "7.0.0"},
	}
}
