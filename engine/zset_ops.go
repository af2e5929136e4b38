package engine

import (
	"errors"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"unsafe"
)

// The operations of the sorted-set commands, under Redis's names. Each is
// atomic under its keys' shard locks; a key holding another type makes it
// return ErrWrongType and change nothing. Members returned are copies.

// ErrNaNScore is ZADD INCR's and ZINCRBY's error when the sum is not a
// number (inf plus -inf).
var ErrNaNScore = errors.New("engine: resulting score is not a number")

// ZAddOptions are ZADD's flags.
type ZAddOptions struct {
	NX, XX, GT, LT bool
	Incr           bool // add the score to the member's (ZINCRBY, ZADD INCR)
}

// ZAddResult is what ZADD reports: members added, members whose score
// changed, members not skipped by NX, XX, GT or LT (processed), and with
// Incr the member's new score.
type ZAddResult struct {
	Added, Updated, Processed int
	Score                     float64
}

// ZAdd adds or updates members of the sorted set at key, creating it
// unless opts.XX, as ZADD does (Redis's zsetAdd for each pair in turn).
func (s *Store) ZAdd(key []byte, opts ZAddOptions, pairs []ScoreMember) (res ZAddResult, err error) {
	lim := s.zsetLimits()
	// A listpack's new blob is built in sc, which the store copies into
	// the arena before writeColl returns. A heap set takes none: giving
	// one back clears what a listpack's edit left in it, at every ZADD.
	var sc *zsetScratch
	defer func() {
		if sc != nil {
			putZSetScratch(sc)
		}
	}()
	err = s.writeColl(key, TypeZSet, func(cur collection, exists bool) (collection, collChange, error) {
		if !exists && opts.XX {
			return cur, collUnchanged, nil
		}
		if cur.obj == nil {
			sc = getZSetScratch()
		}
		e := editZSetIn(cur, lim, sc)
		for _, p := range pairs {
			score := p.Score
			old, has := e.view().score(p.Member)
			switch {
			case has && opts.NX, !has && opts.XX:
				continue
			case has && opts.Incr:
				score += old
				if math.IsNaN(score) {
					// INCR takes one pair: nothing has changed yet.
					return cur, collUnchanged, ErrNaNScore
				}
			}
			if has && (opts.LT && score >= old || opts.GT && score <= old) {
				continue
			}
			res.Processed++
			res.Score = score
			switch {
			// The score just read spares the heap set its lookups: a new
			// member cost three and an insert, now one.
			case !has:
				e.add(p.Member, score)
				res.Added++
			case score != old:
				e.rescore(p.Member, old, score)
				res.Updated++
			}
		}
		next, change := e.result()
		return next, change, nil
	})
	return res, err
}

// ZRem removes members from the sorted set at key, deleting the key if it
// empties, and returns how many it had.
func (s *Store) ZRem(key []byte, members [][]byte) (removed int, err error) {
	err = s.shrinkColl(key, TypeZSet, func(cur collection, exists bool) (collection, collChange, error) {
		if !exists {
			return cur, collUnchanged, nil
		}
		e := editZSet(cur, s.zsetLimits())
		for _, m := range members {
			if e.remove(m) {
				removed++
			}
		}
		next, change := e.result()
		return next, change, nil
	})
	return removed, err
}

// ZCard is the number of members of the sorted set at key, 0 if missing.
func (s *Store) ZCard(key []byte) (n int, err error) {
	_, err = s.readColl(key, TypeZSet, func(c collection) { n = viewZSet(c).card() })
	return n, err
}

// ZScore is, for each of members, its score in the sorted set at key and
// whether it is a member.
func (s *Store) ZScore(key []byte, members [][]byte) (scores []float64, found []bool, err error) {
	scores, found = make([]float64, len(members)), make([]bool, len(members))
	_, err = s.readColl(key, TypeZSet, func(c collection) {
		v := viewZSet(c)
		for i, m := range members {
			scores[i], found[i] = v.score(m)
		}
	})
	return scores, found, err
}

// ZRank is member's rank in the sorted set at key, from the lowest score
// (the highest if rev), and whether it is a member.
func (s *Store) ZRank(key, member []byte, rev bool) (rank int, found bool, err error) {
	_, err = s.readColl(key, TypeZSet, func(c collection) {
		v := viewZSet(c)
		if rank, found = v.rank(member); found && rev {
			rank = v.card() - 1 - rank
		}
	})
	return rank, found, err
}

// ZRangeBy says what a ZRange's bounds are.
type ZRangeBy uint8

// The kinds of range: ranks (Start, Stop), scores (Min, Max) or members
// (LexMin, LexMax).
const (
	ZByRank ZRangeBy = iota
	ZByScore
	ZByLex
)

// ScoreBound is one end of a score range; Excl for an open end ("(1.5").
type ScoreBound struct {
	Value float64
	Excl  bool
}

// LexBound is one end of a lex range: "-" (Inf -1), "+" (Inf 1), or
// Value, included ("[a") or not ("(a").
type LexBound struct {
	Value []byte
	Excl  bool
	Inf   int8
}

// ZRange is a range of a sorted set as ZRANGE and its kin take it. Start
// and Stop are ranks as Redis reads them (negative from the end); Offset
// and Limit apply to score and lex ranges (Limit < 0: no limit). Rev
// counts ranks from the highest score and walks the range downwards.
type ZRange struct {
	By             ZRangeBy
	Start, Stop    int64
	Min, Max       ScoreBound
	LexMin, LexMax LexBound
	Rev            bool
	Offset, Limit  int64
}

// bounds is the forward ranks [from, to) of the members within r's score
// or lex bounds, before any offset or limit.
func (r ZRange) bounds(v *zsetView) (from, to int) {
	if r.By == ZByScore {
		from = v.before(func(x zent) bool {
			return x.score > r.Min.Value || !r.Min.Excl && x.score == r.Min.Value
		})
		to = v.before(func(x zent) bool {
			return x.score > r.Max.Value || r.Max.Excl && x.score == r.Max.Value
		})
		return from, max(from, to)
	}
	from = v.before(func(x zent) bool { return r.LexMin.admitsFrom(x.member) })
	to = v.before(func(x zent) bool { return r.LexMax.endsBy(x.member) })
	return from, max(from, to)
}

// admitsFrom reports whether m is at or past b as a range's minimum.
func (b LexBound) admitsFrom(m string) bool { return b.past(m, !b.Excl) }

// endsBy reports whether m is past b as a range's maximum.
func (b LexBound) endsBy(m string) bool { return b.past(m, b.Excl) }

// past reports whether m sorts after b, or is b and atB.
func (b LexBound) past(m string, atB bool) bool {
	switch b.Inf {
	case -1:
		return true
	case 1:
		return false
	}
	c := strings.Compare(m, string(b.Value))
	return c > 0 || c == 0 && atB
}

// span is the forward ranks [from, to) r selects in v, walked backwards
// if r.Rev.
func (r ZRange) span(v *zsetView) (from, to int) {
	n := int64(v.card())
	if r.By == ZByRank {
		start, stop := r.Start, r.Stop
		if start < 0 {
			start += n
		}
		if stop < 0 {
			stop += n
		}
		start = max(start, 0)
		if start > stop || start >= n {
			return 0, 0
		}
		stop = min(stop, n-1)
		if r.Rev {
			return int(n - 1 - stop), int(n - start)
		}
		return int(start), int(stop + 1)
	}
	lo, hi := r.bounds(v)
	if r.Offset < 0 || r.Offset >= int64(hi-lo) {
		return 0, 0
	}
	if r.Rev {
		top := int64(hi) - r.Offset
		bottom := int64(lo)
		if r.Limit >= 0 {
			bottom = max(bottom, top-r.Limit)
		}
		return int(bottom), int(top)
	}
	from64 := int64(lo) + r.Offset
	to64 := int64(hi)
	if r.Limit >= 0 {
		to64 = min(to64, from64+r.Limit)
	}
	return int(from64), int(to64)
}

// ScoredWriter takes a range of a sorted set's members as the engine
// walks them: first how many there are, then each with its score, in the
// range's order.
type ScoredWriter interface {
	Count(n int)
	Member(m []byte, score float64)
}

// ZRangeTo writes to w the members of the sorted set at key in r, as
// ZRange returns them (none if key is missing), without copying them
// first: ZRANGE writes them straight into its reply. w runs under the
// key's shard's read lock, as View's fn: it must be quick, must not keep
// or modify the members and must not call the store. On an error w is not
// called.
func (s *Store) ZRangeTo(key []byte, r ZRange, w ScoredWriter) error {
	found, err := s.readColl(key, TypeZSet, func(c collection) {
		v := viewZSet(c)
		from, to := r.span(v)
		w.Count(max(to-from, 0))
		v.walk(from, to, r.Rev, func(e zent) bool {
			w.Member(unsafe.Slice(unsafe.StringData(e.member), len(e.member)), e.score)
			return true
		})
	})
	if err == nil && !found {
		w.Count(0)
	}
	return err
}

// ZCount is the number of members of the sorted set at key within r's
// score or lex bounds (ZCOUNT, ZLEXCOUNT).
func (s *Store) ZCount(key []byte, r ZRange) (n int, err error) {
	_, err = s.readColl(key, TypeZSet, func(c collection) {
		from, to := r.bounds(viewZSet(c))
		n = to - from
	})
	return n, err
}

// ZRemRange removes the members of the sorted set at key that r selects
// (ZREMRANGEBYRANK, ZREMRANGEBYSCORE, ZREMRANGEBYLEX) and returns how many
// went, deleting the key if it empties.
func (s *Store) ZRemRange(key []byte, r ZRange) (removed int, err error) {
	err = s.shrinkColl(key, TypeZSet, func(cur collection, exists bool) (collection, collChange, error) {
		if !exists {
			return cur, collUnchanged, nil
		}
		e := editZSet(cur, s.zsetLimits())
		from, to := r.span(e.view())
		removed = e.removeRanks(from, to)
		next, change := e.result()
		return next, change, nil
	})
	return removed, err
}

// ZRangeStore stores at dst the members of the sorted set at src in r,
// replacing whatever dst held (an empty range deletes it), and returns
// how many it stored and whether dst changed: stored, or deleted
// (ZRANGESTORE).
func (s *Store) ZRangeStore(dst, src []byte, r ZRange) (stored int, changed bool, err error) {
	return s.ZStoreFrom(dst, src, func(z ZSetReader, _ bool, add func([]byte, float64)) error {
		from, to := r.span(z.v)
		z.v.walk(from, to, false, func(e zent) bool {
			add(unsafe.Slice(unsafe.StringData(e.member), len(e.member)), e.score)
			return true
		})
		return nil
	})
}

// ZSetReader reads a sorted set for a function the store calls under the
// set's shard lock (ZRead, ZStoreFrom). It is valid only during that
// call, and so are the members it hands out, which alias the set.
type ZSetReader struct{ v *zsetView }

// Card is the number of members.
func (z ZSetReader) Card() int { return z.v.card() }

// Score is member's score, if it is a member.
func (z ZSetReader) Score(member []byte) (float64, bool) { return z.v.score(member) }

// ScoreRange calls fn with each member whose score is within min and max,
// in ascending order, until fn returns false. fn must not keep member.
func (z ZSetReader) ScoreRange(min, max ScoreBound, fn func(member []byte, score float64) bool) {
	from, to := ZRange{By: ZByScore, Min: min, Max: max}.bounds(z.v)
	z.v.walk(from, to, false, func(e zent) bool {
		return fn(unsafe.Slice(unsafe.StringData(e.member), len(e.member)), e.score)
	})
}

// ZRead calls fn with the sorted set at key under its shard's read lock,
// and not at all if key is missing (found false) or holds another type
// (ErrWrongType). A command that reads a set several times (a GEO search,
// cell by cell) reads it at one instant so. fn must be quick and must not
// call the store.
func (s *Store) ZRead(key []byte, fn func(ZSetReader)) (found bool, err error) {
	return s.readColl(key, TypeZSet, func(c collection) { fn(ZSetReader{v: viewZSet(c)}) })
}

// ZStoreFrom stores at dst the sorted set fn computes from the one at src,
// replacing whatever dst held (a set of no members deletes it), under one
// hold of both keys' shard locks: no command sees src change between the
// read and the store, or dst half written. fn gets src (an empty set if
// src is missing: found says which) and adds the result's members, each
// once, in any order; their bytes are copied, so they may alias src. An
// error from fn, or src holding another type (ErrWrongType, fn not
// called), changes nothing. It returns how many members it stored and
// whether dst changed: stored, or deleted (ZRANGESTORE, GEOSEARCHSTORE,
// GEORADIUS's STORE).
func (s *Store) ZStoreFrom(dst, src []byte, fn func(z ZSetReader, found bool, add func(member []byte, score float64)) error) (stored int, changed bool, err error) {
	if err := s.admit(0); err != nil {
		return 0, false, err
	}
	shards := s.lockShards([][]byte{dst, src}, 1)
	defer s.grown(s.hash(dst)) // after the unlock below
	defer unlockShards(shards, (*sync.RWMutex).Unlock)
	c, found, err := s.readCollLocked(src, TypeZSet)
	if err != nil {
		return 0, false, err
	}
	var ents []zent
	add := func(member []byte, score float64) {
		ents = append(ents, zent{member: string(member), score: score})
	}
	if err := fn(ZSetReader{v: viewZSet(c)}, found, add); err != nil {
		return 0, false, err
	}
	slices.SortFunc(ents, zcmp)
	changed, err = s.storeZSetLocked(dst, ents)
	return len(ents), changed, err
}

// storeZSetLocked makes dst hold the sorted set of ents (in order), or
// deletes it if there are none, as the *STORE commands do, and reports
// whether dst changed.
func (s *Store) storeZSetLocked(dst []byte, ents []zent) (bool, error) {
	var next collection
	if len(ents) > 0 {
		next = newZSetOf(ents, s.zsetLimits())
	}
	return s.replaceCollLocked(dst, TypeZSet, next)
}

// ZPop removes up to count members of the lowest scores (the highest if
// highest) from the first of keys that is live, which must hold a sorted
// set, and returns that key and the members in the order popped, as
// ZPOPMIN, ZPOPMAX and ZMPOP do; key is nil if none is live. It is the one
// pop of sorted sets, for the blocking pops too.
func (s *Store) ZPop(keys [][]byte, highest bool, count int) (key []byte, popped []ScoreMember, err error) {
	pop := func(cur collection, exists bool) (collection, collChange, error) {
		if !exists {
			return cur, collUnchanged, nil
		}
		if o, ok := cur.obj.(*zsetObject); ok {
			popped = o.pop(count, highest)
			switch {
			case len(popped) == 0:
				return cur, collUnchanged, nil
			case o.tree.len() == 0:
				return collection{}, collDelete, nil
			}
			return collection{obj: o, charge: o.charge()}, collStore, nil
		}
		e := editZSet(cur, s.zsetLimits())
		v := e.view()
		n := min(count, v.card())
		from, to := 0, n
		if highest {
			from, to = v.card()-n, v.card()
		}
		popped = v.entries(from, to, highest)
		e.removeRanks(from, to)
		next, change := e.result()
		return next, change, nil
	}
	if len(keys) == 1 {
		if err := s.shrinkColl(keys[0], TypeZSet, pop); err != nil || popped == nil {
			return nil, nil, err
		}
		return keys[0], popped, nil
	}
	shards := s.lockShards(keys, 1)
	defer unlockShards(shards, (*sync.RWMutex).Unlock)
	for _, k := range keys {
		h := s.hash(k)
		if _, live := s.liveKeyLocked(s.shardOf(h), h, k); !live {
			continue
		}
		if err := s.writeCollLocked(s.shardOf(h), h, k, TypeZSet, pop); err != nil {
			return nil, nil, err
		}
		return k, popped, nil
	}
	return nil, nil, nil
}

// ZRandMember draws from the sorted set at key as ZRANDMEMBER does: with
// count >= 0, that many distinct members (all of them, highest first, if
// it has no more); with count < 0, -count members drawn independently.
func (s *Store) ZRandMember(key []byte, count int64) (out []ScoreMember, err error) {
	_, err = s.readColl(key, TypeZSet, func(c collection) {
		v := viewZSet(c)
		size := v.card()
		if count < 0 {
			out = make([]ScoreMember, 0, -count)
			for range -count {
				e := v.at(rand.IntN(size))
				out = append(out, ScoreMember{Member: []byte(e.member), Score: e.score})
			}
			return
		}
		if count >= int64(size) {
			// Redis walks the whole set from its end here.
			out = v.entries(0, size, true)
			return
		}
		if count*3 > int64(size) {
			// Most of the set: shuffle the front of all of it, rather
			// than draw until enough distinct ranks come up.
			out = v.entries(0, size, false)
			for i := range int(count) {
				j := i + rand.IntN(size-i)
				out[i], out[j] = out[j], out[i]
			}
			out = out[:count]
			return
		}
		picked := make(map[int]bool, count)
		for len(out) < int(count) {
			if i := rand.IntN(size); !picked[i] {
				picked[i] = true
				e := v.at(i)
				out = append(out, ScoreMember{Member: []byte(e.member), Score: e.score})
			}
		}
	})
	return out, err
}

// ZScan is one step of ZSCAN over the sorted set at key from cursor, as
// SScan walks a set: a listpack comes whole in one step; a heap set is
// walked in the order of its members' hashes, about count a step.
func (s *Store) ZScan(key []byte, cursor uint64, f ScanFilter, count int) (next uint64, out []ScoreMember, err error) {
	_, err = s.readColl(key, TypeZSet, func(c collection) {
		v := viewZSet(c)
		if v.obj == nil {
			out = v.entries(0, v.card(), false)
			return
		}
		var step []string
		step, next = s.hashOrderStep(maps.Keys(v.obj.scores), cursor, count)
		for _, m := range step {
			out = append(out, ScoreMember{Member: []byte(m), Score: v.obj.scores[m]})
		}
	})
	return next, filterNames(f, out, func(e ScoreMember) []byte { return e.Member }), err
}

// ZAggregate is how ZUNION and ZINTER combine a member's scores.
type ZAggregate uint8

// The aggregates of ZUNION and ZINTER.
const (
	ZSum ZAggregate = iota
	ZMin
	ZMax
)

func (a ZAggregate) apply(target *float64, v float64) {
	switch a {
	case ZSum:
		*target += v
		if math.IsNaN(*target) {
			*target = 0
		}
	case ZMin:
		if v < *target {
			*target = v
		}
	case ZMax:
		if v > *target {
			*target = v
		}
	}
}

// ZSetOp is ZUNION, ZINTER or ZDIFF over the sorted sets (or sets, whose
// members score 1) at Keys: each source's scores multiplied by its weight
// (1 if Weights is nil), combined by Aggregate.
type ZSetOp struct {
	Op        SetOp
	Keys      [][]byte
	Weights   []float64
	Aggregate ZAggregate
}

// zsrc is one source of a ZSetOp.
type zsrc struct {
	z      *zsetView
	set    *setView
	weight float64
}

func (z zsrc) card() int {
	switch {
	case z.z != nil:
		return z.z.card()
	case z.set != nil:
		return z.set.card()
	}
	return 0
}

func (z zsrc) each(fn func(m string, score float64) bool) {
	switch {
	case z.z != nil:
		z.z.walk(0, z.z.card(), false, func(e zent) bool { return fn(e.member, e.score) })
	case z.set != nil:
		z.set.each(func(m []byte) bool { return fn(string(m), 1) })
	}
}

func (z zsrc) find(m string) (float64, bool) {
	switch {
	case z.z != nil:
		return z.z.score([]byte(m))
	case z.set != nil:
		return 1, z.set.has([]byte(m))
	}
	return 0, false
}

// ZCompute is the result of op, ordered by score then member.
func (s *Store) ZCompute(op ZSetOp) ([]ScoreMember, error) {
	shards := s.lockShards(op.Keys, 1)
	ents, err := s.zsetOpLocked(op, 0)
	unlockShards(shards, (*sync.RWMutex).Unlock)
	out := make([]ScoreMember, len(ents))
	for i, e := range ents {
		out[i] = ScoreMember{Member: []byte(e.member), Score: e.score}
	}
	return out, err
}

// ZStore stores op's result at dst, replacing whatever it held (an empty
// result deletes it), and returns its size and whether dst changed:
// stored, or deleted (ZUNIONSTORE and the like).
func (s *Store) ZStore(dst []byte, op ZSetOp) (stored int, changed bool, err error) {
	if err := s.admit(0); err != nil {
		return 0, false, err
	}
	shards := s.lockShards(append([][]byte{dst}, op.Keys...), 1)
	defer s.grown(s.hash(dst)) // after the unlock below
	defer unlockShards(shards, (*sync.RWMutex).Unlock)
	ents, err := s.zsetOpLocked(op, 0)
	if err != nil {
		return 0, false, err
	}
	changed, err = s.storeZSetLocked(dst, ents)
	return len(ents), changed, err
}

// ZInterCard is the size of the intersection of the sorted sets (or sets)
// at keys, counted up to limit if limit > 0.
func (s *Store) ZInterCard(keys [][]byte, limit int) (int, error) {
	shards := s.lockShards(keys, 1)
	ents, err := s.zsetOpLocked(ZSetOp{Op: SetInter, Keys: keys}, limit)
	unlockShards(shards, (*sync.RWMutex).Unlock)
	return len(ents), err
}

// zsetOpLocked computes op over keys, whose shards the caller has locked,
// as Redis's zunionInterDiffGenericCommand: every key is checked for its
// type first; union and intersection take the sources from the smallest;
// an intersection stops at limit members if limit > 0. Members are copies.
func (s *Store) zsetOpLocked(op ZSetOp, limit int) ([]zent, error) {
	srcs := make([]zsrc, len(op.Keys))
	for i, k := range op.Keys {
		srcs[i].weight = 1
		if op.Weights != nil {
			srcs[i].weight = op.Weights[i]
		}
		h := s.hash(k)
		sh := s.shardOf(h)
		sl, found := s.liveKeyLocked(sh, h, k)
		if !found {
			s.missed(sh, k)
			continue
		}
		sh.hits.Add(1)
		c := sh.collectionOf(&sl.rec)
		switch sl.rec.typ() {
		case TypeZSet:
			srcs[i].z = viewZSet(c)
		case TypeSet:
			v := viewSet(c)
			srcs[i].set = &v
		default:
			return nil, ErrWrongType
		}
	}
	if op.Op != SetDiff {
		slices.SortStableFunc(srcs, func(a, b zsrc) int { return a.card() - b.card() })
	}
	var out []zent
	switch op.Op {
	case SetInter:
		if len(srcs) == 0 || srcs[0].card() == 0 {
			return nil, nil
		}
		srcs[0].each(func(m string, sc float64) bool {
			score := srcs[0].weight * sc
			if math.IsNaN(score) {
				score = 0
			}
			for _, o := range srcs[1:] {
				v, ok := o.find(m)
				if !ok {
					return true
				}
				op.Aggregate.apply(&score, v*o.weight)
			}
			out = append(out, zent{member: strings.Clone(m), score: score})
			return limit <= 0 || len(out) < limit
		})
	case SetUnion:
		acc := make(map[string]float64)
		for _, src := range srcs {
			src.each(func(m string, sc float64) bool {
				score := src.weight * sc
				if math.IsNaN(score) {
					score = 0
				}
				if cur, ok := acc[m]; ok {
					op.Aggregate.apply(&cur, score)
					acc[m] = cur
				} else {
					acc[strings.Clone(m)] = score
				}
				return true
			})
		}
		out = make([]zent, 0, len(acc))
		for m, sc := range acc {
			out = append(out, zent{member: m, score: sc})
		}
	case SetDiff:
		srcs[0].each(func(m string, sc float64) bool {
			for _, o := range srcs[1:] {
				if _, ok := o.find(m); ok {
					return true
				}
			}
			out = append(out, zent{member: strings.Clone(m), score: sc})
			return true
		})
	}
	slices.SortFunc(out, zcmp)
	return out, nil
}
