package engine

import (
	"slices"
	"strings"
)

// Consumer groups (Redis's streamCG): a group's pending entries list
// (PEL) holds each entry delivered and not yet acknowledged; each
// consumer's PEL holds the same entries, shared, that it owns.

// pending is a PEL entry, Redis's streamNACK.
type pending struct {
	id        StreamID
	delivered int64 // unix ms of the last delivery
	count     uint64
	consumer  *streamConsumer // nil only while XCLAIM FORCE makes it
}

// pendingList is a PEL: entries by ID in chunks of at most
// streamPendingChunk, so that inserting at the end (the usual delivery)
// and removing anywhere (an ack) move at most a chunk.
type pendingList struct {
	chunks [][]*pending
	n      int
}

func (p *pendingList) chunkOf(id StreamID) int {
	i, _ := slices.BinarySearchFunc(p.chunks, id, func(c []*pending, id StreamID) int {
		return c[len(c)-1].id.Cmp(id)
	})
	return i
}

func (p *pendingList) find(id StreamID) *pending {
	ci := p.chunkOf(id)
	if ci == len(p.chunks) {
		return nil
	}
	c := p.chunks[ci]
	i, ok := slices.BinarySearchFunc(c, id, func(e *pending, id StreamID) int { return e.id.Cmp(id) })
	if !ok {
		return nil
	}
	return c[i]
}

// insert adds e unless its ID is there; it reports whether it did.
func (p *pendingList) insert(e *pending) bool {
	ci := p.chunkOf(e.id)
	if ci == len(p.chunks) {
		if ci > 0 && len(p.chunks[ci-1]) < streamPendingChunk {
			p.chunks[ci-1] = append(p.chunks[ci-1], e)
		} else {
			p.chunks = append(p.chunks, []*pending{e})
		}
		p.n++
		return true
	}
	c := p.chunks[ci]
	i, ok := slices.BinarySearchFunc(c, e.id, func(x *pending, id StreamID) int { return x.id.Cmp(id) })
	if ok {
		return false
	}
	c = slices.Insert(c, i, e)
	if len(c) > 2*streamPendingChunk {
		half := len(c) / 2
		right := slices.Clone(c[half:])
		c = c[:half:half]
		p.chunks = slices.Insert(p.chunks, ci+1, right)
	}
	p.chunks[ci] = c
	p.n++
	return true
}

func (p *pendingList) remove(id StreamID) *pending {
	ci := p.chunkOf(id)
	if ci == len(p.chunks) {
		return nil
	}
	c := p.chunks[ci]
	i, ok := slices.BinarySearchFunc(c, id, func(x *pending, id StreamID) int { return x.id.Cmp(id) })
	if !ok {
		return nil
	}
	e := c[i]
	c = slices.Delete(c, i, i+1)
	if len(c) == 0 {
		p.chunks = slices.Delete(p.chunks, ci, ci+1)
	} else {
		p.chunks[ci] = c
	}
	p.n--
	return e
}

// each calls fn with the entries from the first whose ID is at least
// from, in order, until fn returns false. fn must not change p.
func (p *pendingList) each(from StreamID, fn func(*pending) bool) {
	ci := p.chunkOf(from)
	for ; ci < len(p.chunks); ci++ {
		c := p.chunks[ci]
		i, _ := slices.BinarySearchFunc(c, from, func(x *pending, id StreamID) int { return x.id.Cmp(id) })
		for _, e := range c[i:] {
			if !fn(e) {
				return
			}
		}
		from = StreamID{}
	}
}

func (p *pendingList) first() *pending {
	if p.n == 0 {
		return nil
	}
	return p.chunks[0][0]
}

func (p *pendingList) last() *pending {
	if p.n == 0 {
		return nil
	}
	c := p.chunks[len(p.chunks)-1]
	return c[len(c)-1]
}

// after is the first entry whose ID is above id, or nil.
func (p *pendingList) after(id StreamID) *pending {
	next, ok := id.Next()
	if !ok {
		return nil
	}
	var e *pending
	p.each(next, func(x *pending) bool { e = x; return false })
	return e
}

// streamConsumer is a consumer of a group.
type streamConsumer struct {
	name string
	seen int64 // unix ms
	pel  pendingList
}

// StreamGroup is a consumer group.
type StreamGroup struct {
	name        string
	lastID      StreamID
	entriesRead int64 // -1: not known
	pel         pendingList
	consumers   []*streamConsumer // by name
}

// Name is the group's name.
func (g *StreamGroup) Name() string { return g.name }

// LastID is the last ID delivered to the group.
func (g *StreamGroup) LastID() StreamID { return g.lastID }

// EntriesRead is the group's read counter; ok is false where unknown.
func (g *StreamGroup) EntriesRead() (int64, bool) { return g.entriesRead, g.entriesRead != -1 }

// Pending is the number of entries in the group's PEL.
func (g *StreamGroup) Pending() int { return g.pel.n }

// Consumers is the number of consumers.
func (g *StreamGroup) Consumers() int { return len(g.consumers) }

// Groups are the stream's groups, by name.
func (st *Stream) Groups() []*StreamGroup { return st.groups }

// Group is the group name, nil if there is none.
func (st *Stream) Group(name []byte) *StreamGroup {
	i, ok := slices.BinarySearchFunc(st.groups, string(name), func(g *StreamGroup, n string) int { return strings.Compare(g.name, n) })
	if !ok {
		return nil
	}
	return st.groups[i]
}

// CreateGroup adds a group starting after id, with entriesRead (-1: not
// known); false if the name is taken.
func (st *Stream) CreateGroup(name []byte, id StreamID, entriesRead int64) bool {
	i, ok := slices.BinarySearchFunc(st.groups, string(name), func(g *StreamGroup, n string) int { return strings.Compare(g.name, n) })
	if ok {
		return false
	}
	st.groups = slices.Insert(st.groups, i, &StreamGroup{name: string(name), lastID: id, entriesRead: entriesRead})
	st.names += int64(len(name))
	return true
}

// DestroyGroup removes the group name; false if there is none.
func (st *Stream) DestroyGroup(name []byte) bool {
	i, ok := slices.BinarySearchFunc(st.groups, string(name), func(g *StreamGroup, n string) int { return strings.Compare(g.name, n) })
	if !ok {
		return false
	}
	g := st.groups[i]
	st.pels -= int64(g.pel.n)
	st.consumers -= int64(len(g.consumers))
	st.names -= int64(len(g.name))
	for _, c := range g.consumers {
		st.names -= int64(len(c.name))
	}
	st.groups = slices.Delete(st.groups, i, i+1)
	return true
}

// SetGroupID is XGROUP SETID.
func (g *StreamGroup) SetGroupID(id StreamID, entriesRead int64) {
	g.lastID, g.entriesRead = id, entriesRead
}

func (g *StreamGroup) consumerIndex(name string) (int, bool) {
	return slices.BinarySearchFunc(g.consumers, name, func(c *streamConsumer, n string) int { return strings.Compare(c.name, n) })
}

// lookupConsumer is the consumer name, nil if none; refresh sets its
// seen time to now.
func (g *StreamGroup) lookupConsumer(name []byte, refresh bool, now int64) *streamConsumer {
	i, ok := g.consumerIndex(string(name))
	if !ok {
		return nil
	}
	c := g.consumers[i]
	if refresh {
		c.seen = now
	}
	return c
}

// consumer is the consumer name, made if missing (created says so), its
// seen time now, as Redis's lookup-or-create does.
func (st *Stream) consumer(g *StreamGroup, name []byte, now int64) (c *streamConsumer, created bool) {
	i, ok := g.consumerIndex(string(name))
	if ok {
		c = g.consumers[i]
		c.seen = now
		return c, false
	}
	c = &streamConsumer{name: string(name), seen: now}
	g.consumers = slices.Insert(g.consumers, i, c)
	st.consumers++
	st.names += int64(len(name))
	return c, true
}

// CreateConsumer is XGROUP CREATECONSUMER: false if it exists.
func (st *Stream) CreateConsumer(g *StreamGroup, name []byte, now int64) bool {
	if _, ok := g.consumerIndex(string(name)); ok {
		return false
	}
	st.consumer(g, name, now)
	return true
}

// DelConsumer is XGROUP DELCONSUMER: the consumer's pending entries,
// which leave the group's PEL; found is false if there is no such
// consumer.
func (st *Stream) DelConsumer(g *StreamGroup, name []byte) (pendingN int, found bool) {
	i, ok := g.consumerIndex(string(name))
	if !ok {
		return 0, false
	}
	c := g.consumers[i]
	var ids []StreamID
	c.pel.each(StreamID{}, func(p *pending) bool { ids = append(ids, p.id); return true })
	for _, id := range ids {
		g.pel.remove(id)
	}
	st.pels -= int64(len(ids))
	g.consumers = slices.Delete(g.consumers, i, i+1)
	st.consumers--
	st.names -= int64(len(name))
	return len(ids), true
}

// ConsumerInfo is a consumer as XINFO shows it.
type ConsumerInfo struct {
	Name    string
	Seen    int64
	Pending int
}

// ConsumerList is the group's consumers, by name.
func (g *StreamGroup) ConsumerList() []ConsumerInfo {
	out := make([]ConsumerInfo, len(g.consumers))
	for i, c := range g.consumers {
		out[i] = ConsumerInfo{Name: c.name, Seen: c.seen, Pending: c.pel.n}
	}
	return out
}

// PendingEntry is a PEL entry as XPENDING and XINFO show it.
type PendingEntry struct {
	ID        StreamID
	Consumer  string
	Delivered int64 // unix ms
	Count     uint64
}

func (p *pending) entry() PendingEntry {
	e := PendingEntry{ID: p.id, Delivered: p.delivered, Count: p.count}
	if p.consumer != nil {
		e.Consumer = p.consumer.name
	}
	return e
}

// PendingSummary is XPENDING's summary: the first and last pending IDs and
// each consumer with entries and their number.
func (g *StreamGroup) PendingSummary() (first, last StreamID, consumers []ConsumerInfo) {
	if g.pel.n == 0 {
		return
	}
	first, last = g.pel.first().id, g.pel.last().id
	for _, c := range g.consumers {
		if c.pel.n > 0 {
			consumers = append(consumers, ConsumerInfo{Name: c.name, Pending: c.pel.n})
		}
	}
	return
}

// PendingRange calls fn with up to count entries of the group's PEL (or
// consumer's, if not nil; a missing consumer gives none) from start to
// end idle at least minIdle ms at now.
func (g *StreamGroup) PendingRange(start, end StreamID, count int64, minIdle int64, consumer []byte, now int64, fn func(PendingEntry)) {
	pel := &g.pel
	if consumer != nil {
		c := g.lookupConsumer(consumer, false, now)
		if c == nil {
			return
		}
		pel = &c.pel
	}
	if count <= 0 {
		return
	}
	pel.each(start, func(p *pending) bool {
		if p.id.Cmp(end) > 0 {
			return false
		}
		if minIdle > 0 && now-p.delivered < minIdle {
			return true
		}
		fn(p.entry())
		count--
		return count > 0
	})
}

// EachPending calls fn with up to count (0: all) entries of the group's
// PEL, for XINFO STREAM FULL.
func (g *StreamGroup) EachPending(count int64, fn func(PendingEntry)) {
	n := int64(0)
	g.pel.each(StreamID{}, func(p *pending) bool {
		if count > 0 && n >= count {
			return false
		}
		n++
		fn(p.entry())
		return true
	})
}

// EachConsumerPending calls fn with up to count (0: all) entries of the
// consumer's PEL.
func (g *StreamGroup) EachConsumerPending(name string, count int64, fn func(PendingEntry)) {
	i, ok := g.consumerIndex(name)
	if !ok {
		return
	}
	n := int64(0)
	g.consumers[i].pel.each(StreamID{}, func(p *pending) bool {
		if count > 0 && n >= count {
			return false
		}
		n++
		fn(p.entry())
		return true
	})
}

// Ack is XACK: it removes ids from the group's PEL and returns how many
// were there.
func (st *Stream) Ack(g *StreamGroup, ids []StreamID) int {
	n := 0
	for _, id := range ids {
		if p := g.pel.remove(id); p != nil {
			if p.consumer != nil {
				p.consumer.pel.remove(id)
			}
			n++
		}
	}
	st.pels -= int64(n)
	return n
}

// dropPending removes p from the group's PEL and its consumer's.
func (st *Stream) dropPending(g *StreamGroup, p *pending) {
	g.pel.remove(p.id)
	if p.consumer != nil {
		p.consumer.pel.remove(p.id)
	}
	st.pels--
}

// ReadGroup delivers to consumer the entries after the group's last ID,
// up to count (0: all), as XREADGROUP with ">" does: the group's last ID
// and read counter advance, and unless noack each entry enters the PELs.
// The consumer is made if missing (created). fn gets each entry.
func (st *Stream) ReadGroup(g *StreamGroup, consumer []byte, count int, noack bool, now int64, fn func(id StreamID, fields [][]byte)) (created bool) {
	c, created := st.consumer(g, consumer, now)
	start, ok := g.lastID.Next()
	if !ok {
		return created
	}
	st.Range(start, MaxStreamID, count, false, func(id StreamID, fields [][]byte) bool {
		if id.Cmp(g.lastID) > 0 {
			if g.entriesRead != -1 && !st.rangeHasTombstones(id) {
				g.entriesRead++
			} else if st.entriesAdded != 0 {
				g.entriesRead = st.estimateDistance(id)
			}
			g.lastID = id
		}
		fn(id, fields)
		if !noack {
			p := &pending{id: id, delivered: now, count: 1, consumer: c}
			if g.pel.insert(p) {
				c.pel.insert(p)
				st.pels++
			} else {
				old := g.pel.find(id)
				if old.consumer != nil {
					old.consumer.pel.remove(id)
				}
				old.consumer, old.delivered, old.count = c, now, 1
				c.pel.insert(old)
			}
		}
		return true
	})
	return created
}

// ReadHistory serves XREADGROUP with an ID: the consumer's own pending
// entries from start, up to count (0: all); fn gets each, with nil
// fields (found false) for an entry no longer in the stream. Each entry
// found counts as delivered again.
func (st *Stream) ReadHistory(g *StreamGroup, consumer []byte, start StreamID, count int, now int64, fn func(id StreamID, fields [][]byte, found bool)) (created bool) {
	c, created := st.consumer(g, consumer, now)
	n := 0
	c.pel.each(start, func(p *pending) bool {
		if count > 0 && n >= count {
			return false
		}
		n++
		if st.Get(p.id, func(fields [][]byte) { fn(p.id, fields, true) }) {
			p.delivered = now
			p.count++
		} else {
			fn(p.id, nil, false)
		}
		return true
	})
	return created
}

// Claim is XCLAIM's change.
type Claim struct {
	Consumer   []byte
	MinIdle    int64
	IDs        []StreamID
	Delivered  int64 // unix ms the entries were delivered: -1 for now
	RetryCount int64 // -1: count the delivery (unless JustID)
	Force      bool
	JustID     bool
	LastID     StreamID
}

// Claim gives the entries of cl.IDs to the consumer, as XCLAIM does,
// calling fn with each claimed (fields nil with JustID). created says
// the consumer was made.
func (st *Stream) Claim(g *StreamGroup, cl Claim, now int64, fn func(id StreamID, fields [][]byte)) (created bool) {
	if cl.LastID.Cmp(g.lastID) > 0 {
		g.lastID = cl.LastID
	}
	delivered := cl.Delivered
	if delivered < 0 || delivered > now {
		delivered = now
	}
	var c *streamConsumer
	for _, id := range cl.IDs {
		p := g.pel.find(id)
		if !st.Has(id) {
			if p != nil {
				st.dropPending(g, p)
			}
			continue
		}
		if cl.Force && p == nil {
			p = &pending{id: id, delivered: now, count: 1}
			g.pel.insert(p)
			st.pels++
		}
		if p == nil {
			continue
		}
		if p.consumer != nil && cl.MinIdle > 0 && now-p.delivered < cl.MinIdle {
			continue
		}
		if c == nil {
			var made bool
			c, made = st.consumer(g, cl.Consumer, now)
			created = created || made
		}
		if p.consumer != c && p.consumer != nil {
			p.consumer.pel.remove(id)
		}
		p.delivered = delivered
		if cl.RetryCount >= 0 {
			p.count = uint64(cl.RetryCount)
		} else if !cl.JustID {
			p.count++
		}
		if p.consumer != c {
			c.pel.insert(p)
			p.consumer = c
		}
		if cl.JustID {
			fn(id, nil)
		} else {
			st.Get(id, func(fields [][]byte) { fn(id, fields) })
		}
	}
	return created
}

// AutoClaim is XAUTOCLAIM: from start, it claims up to count entries
// idle at least minIdle, looking at most ten times count, and drops
// those no longer in the stream (deleted). fn gets each claimed; next is
// the cursor for the next call (0-0: the end).
func (st *Stream) AutoClaim(g *StreamGroup, consumer []byte, minIdle int64, start StreamID, count int64, justID bool, now int64, fn func(id StreamID, fields [][]byte)) (next StreamID, deleted []StreamID, created bool) {
	attempts := count * 10
	var seen []*pending
	g.pel.each(start, func(p *pending) bool {
		if int64(len(seen)) >= attempts {
			return false
		}
		seen = append(seen, p)
		return true
	})
	var c *streamConsumer
	last := StreamID{}
	visited := false
	for _, p := range seen {
		if count == 0 {
			break
		}
		last, visited = p.id, true
		if !st.Has(p.id) {
			st.dropPending(g, p)
			deleted = append(deleted, p.id)
			count--
			continue
		}
		if minIdle > 0 && now-p.delivered < minIdle {
			continue
		}
		if c == nil {
			var made bool
			c, made = st.consumer(g, consumer, now)
			created = created || made
		}
		if p.consumer != c && p.consumer != nil {
			p.consumer.pel.remove(p.id)
		}
		p.delivered = now
		if !justID {
			p.count++
		}
		if p.consumer != c {
			c.pel.insert(p)
			p.consumer = c
		}
		if justID {
			fn(p.id, nil)
		} else {
			st.Get(p.id, func(fields [][]byte) { fn(p.id, fields) })
		}
		count--
	}
	if visited {
		if p := g.pel.after(last); p != nil {
			next = p.id
		}
	}
	return next, deleted, created
}
