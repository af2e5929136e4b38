package engine

import (
	"bytes"
	"encoding/binary"
	"math"
	"slices"
	"strconv"
)

// A stream (Redis's t_stream.c) is always held on the heap: Redis has no
// compact form of it either. Its entries live in nodes laid out as
// Redis's radix tree lays out its listpacks: a node takes entries until
// it has had stream-node-max-entries (100) of them, deleted ones
// included, or its listpack would pass stream-node-max-bytes (4096).
// Keeping Redis's node boundaries is what makes the approximate trims
// (MAXLEN ~, MINID ~), which only drop whole nodes, remove what Redis
// removes. A node is a slice of live entries in ID order; the stream is a
// slice of nodes, so an append is at the end of the last node and a
// lookup two binary searches.

// StreamID is a stream entry's ID: a time in milliseconds and a sequence.
type StreamID struct{ Ms, Seq uint64 }

// MaxStreamID is the greatest ID, "+" in a range.
var MaxStreamID = StreamID{math.MaxUint64, math.MaxUint64}

// Cmp compares a and b: -1, 0 or 1.
func (a StreamID) Cmp(b StreamID) int {
	switch {
	case a.Ms < b.Ms:
		return -1
	case a.Ms > b.Ms:
		return 1
	case a.Seq < b.Seq:
		return -1
	case a.Seq > b.Seq:
		return 1
	}
	return 0
}

// IsZero reports whether id is 0-0.
func (a StreamID) IsZero() bool { return a.Ms == 0 && a.Seq == 0 }

// Next is the ID after a; ok is false if a is the greatest (streamIncrID).
func (a StreamID) Next() (StreamID, bool) {
	switch {
	case a.Seq != math.MaxUint64:
		return StreamID{a.Ms, a.Seq + 1}, true
	case a.Ms != math.MaxUint64:
		return StreamID{a.Ms + 1, 0}, true
	}
	return StreamID{}, false
}

// Prev is the ID before a; ok is false if a is 0-0 (streamDecrID).
func (a StreamID) Prev() (StreamID, bool) {
	switch {
	case a.Seq != 0:
		return StreamID{a.Ms, a.Seq - 1}, true
	case a.Ms != 0:
		return StreamID{a.Ms - 1, math.MaxUint64}, true
	}
	return MaxStreamID, false
}

// AppendTo appends a as Redis writes it, "<ms>-<seq>".
func (a StreamID) AppendTo(b []byte) []byte {
	b = strconv.AppendUint(b, a.Ms, 10)
	b = append(b, '-')
	return strconv.AppendUint(b, a.Seq, 10)
}

func (a StreamID) String() string { return string(a.AppendTo(nil)) }

// Redis's defaults of stream-node-max-entries and stream-node-max-bytes.
const (
	DefaultStreamNodeMaxEntries = 100
	DefaultStreamNodeMaxBytes   = 4096
)

// SetStreamNodeLimits sets stream-node-max-entries and
// stream-node-max-bytes: where a stream's next entry starts a node
// (0: no limit). Nodes already made stay as they are.
func (s *Store) SetStreamNodeLimits(entries, bytes int64) { s.streamNode.set(entries, bytes) }

// StreamNodeLimits returns what SetStreamNodeLimits set.
func (s *Store) StreamNodeLimits() (entries, bytes int64) { return s.streamNode.get() }

// streamNode is one of Redis's listpack nodes: its live entries, and what
// decides when the next entry starts a new node.
//
// As a listpack does, a node holds its entries in one buffer (buf), each
// where its offset says: its ID as a delta from the node's master ID (its
// first entry's), then its fields, or its values alone if its field names
// are the master entry's. An entry costs its offset and its bytes, no
// allocation or slice header of its own; a lookup by ID searches the nodes
// by their last IDs, then the node's offsets, decoding an ID at each step.
// The buffer grows by a quarter as entries come and is cut to its length
// when the next node starts (close), so a full node holds no slack. A
// deleted entry's bytes stay until its node goes, as a listpack's
// tombstone does.
type streamNode struct {
	master StreamID // the node's first entry's ID, deleted or not
	offs   []uint32 // where each live entry starts in buf, in ID order
	buf    []byte   // the entries (entryData)
	total  int      // entries ever added, deleted ones included
	lp     int      // the bytes Redis's listpack would have
	fields [][]byte // the master entry's field names
}

// held is what the node's slices hold, in bytes.
func (n *streamNode) held() int64 { return int64(cap(n.buf) + 4*cap(n.offs)) }

// add appends the entry id of fields, returning how many more bytes the
// node holds.
func (n *streamNode) add(id StreamID, fields [][]byte) int64 {
	before := n.held()
	if len(n.buf) == 0 {
		n.master = id // the node's first entry (an import's: its first live one)
	}
	same := sameFields(n.fields, fields)
	size := n.entrySize(id, fields, same)
	if cap(n.buf)-len(n.buf) < size {
		grown := make([]byte, len(n.buf), max(len(n.buf)+size, len(n.buf)+len(n.buf)/4+64))
		copy(grown, n.buf)
		n.buf = grown
	}
	n.offs = append(n.offs, uint32(len(n.buf)))
	n.buf = n.appendEntry(n.buf, id, fields, same)
	return n.held() - before
}

// close cuts the node's slices to their lengths, once no entry will be
// added to it, where they hold more than an eighth beyond (a copy is
// garbage the collector must find), and returns how many bytes fewer it
// holds.
func (n *streamNode) close() int64 {
	before := n.held()
	if cap(n.buf)-len(n.buf) > len(n.buf)/8 {
		n.buf = slices.Clip(slices.Clone(n.buf))
	}
	if cap(n.offs)-len(n.offs) > len(n.offs)/8 {
		n.offs = slices.Clip(slices.Clone(n.offs))
	}
	return before - n.held()
}

// An entry in its node's buffer: its ID's milliseconds less the master's
// and its sequence number (less the master's if the milliseconds are the
// same), two uvarints; then a uvarint, its number of field-value pairs
// times two, plus one if its field names are the master entry's (same);
// then each field and value (its value alone, if same) as a uvarint
// length and its bytes.

// idDelta is id's delta from the node's master ID.
func (n *streamNode) idDelta(id StreamID) (ms, seq uint64) {
	ms, seq = id.Ms-n.master.Ms, id.Seq
	if ms == 0 {
		seq -= n.master.Seq
	}
	return ms, seq
}

// entrySize is the size of the entry id of fields in the buffer.
func (n *streamNode) entrySize(id StreamID, fields [][]byte, same bool) int {
	ms, seq := n.idDelta(id)
	size := uvarintLen(ms) + uvarintLen(seq) + uvarintLen(uint64(len(fields)))
	for i, f := range fields {
		if i%2 == 1 || !same {
			size += uvarintLen(uint64(len(f))) + len(f)
		}
	}
	return size
}

// appendEntry appends the entry id of fields to b.
func (n *streamNode) appendEntry(b []byte, id StreamID, fields [][]byte, same bool) []byte {
	ms, seq := n.idDelta(id)
	b = binary.AppendUvarint(binary.AppendUvarint(b, ms), seq)
	h := uint64(len(fields)/2) << 1
	if same {
		h |= 1
	}
	b = binary.AppendUvarint(b, h)
	for i, f := range fields {
		if i%2 == 1 || !same {
			b = binary.AppendUvarint(b, uint64(len(f)))
			b = append(b, f...)
		}
	}
	return b
}

// idAt decodes the ID of the entry at data, returning it and the rest.
func (n *streamNode) idAt(data []byte) (StreamID, []byte) {
	ms, k := binary.Uvarint(data)
	seq, j := binary.Uvarint(data[k:])
	id := StreamID{n.master.Ms + ms, seq}
	if ms == 0 {
		id.Seq += n.master.Seq
	}
	return id, data[k+j:]
}

// id is the ID of the node's live entry i.
func (n *streamNode) id(i int) StreamID {
	id, _ := n.idAt(n.buf[n.offs[i]:])
	return id
}

// entry appends to dst the fields and values of the node's live entry i,
// aliasing the node.
func (n *streamNode) entry(dst [][]byte, i int) [][]byte {
	_, data := n.idAt(n.buf[n.offs[i]:])
	h, k := binary.Uvarint(data)
	data = data[k:]
	pairs, same := int(h>>1), h&1 == 1
	next := func() []byte {
		l, k := binary.Uvarint(data)
		v := data[k : k+int(l) : k+int(l)]
		data = data[k+int(l):]
		return v
	}
	for j := range pairs {
		if same {
			dst = append(dst, n.fields[j], next())
		} else {
			name := next()
			dst = append(dst, name, next())
		}
	}
	return dst
}

// len is the number of the node's live entries.
func (n *streamNode) len() int { return len(n.offs) }

// last is the ID of the node's last live entry.
func (n *streamNode) last() StreamID { return n.id(n.len() - 1) }

// find is the index of the first live entry whose ID is at least id
// (n.len() if none).
func (n *streamNode) find(id StreamID) int {
	i, _ := slices.BinarySearchFunc(n.offs, id, func(off uint32, id StreamID) int {
		got, _ := n.idAt(n.buf[off:])
		return got.Cmp(id)
	})
	return i
}

// remove removes the live entries from i to j.
func (n *streamNode) remove(i, j int) { n.offs = slices.Delete(n.offs, i, j) }

// Stream is a stream's value. Its methods run under the key's shard lock
// (Store.StreamOp); slices they hand out alias it and must be copied to
// be kept past the operation.
type Stream struct {
	nodes        []*streamNode
	length       uint64
	lastID       StreamID
	firstID      StreamID
	maxDeleted   StreamID
	entriesAdded uint64
	groups       []*StreamGroup // by name, as Redis's radix tree orders them
	bytes        int64          // what the nodes' slices hold (streamNode.held)
	// The node limits as the operation found them (StreamTx.Stream).
	nodeEntries, nodeBytes int64
	pels                   int64 // pending entries, of all groups
	names                  int64 // groups' and consumers' name bytes
	consumers              int64
}

// What a stream is charged beyond its nodes' slices (Stream.bytes): per
// node its header, per group, consumer and pending entry their
// structures and their places in the sorted lists that hold them.
const (
	streamBase         = 160
	streamPerNode      = 160
	streamPerGroup     = 160
	streamPerConsumer  = 96
	streamPerPending   = 96
	streamPendingChunk = 64
)

func (st *Stream) charge() int64 {
	return streamBase + st.bytes + int64(len(st.nodes))*streamPerNode +
		int64(len(st.groups))*streamPerGroup + st.consumers*streamPerConsumer + st.pels*streamPerPending + st.names
}

func (st *Stream) clone() heapObject {
	c := &Stream{length: st.length, lastID: st.lastID, firstID: st.firstID, maxDeleted: st.maxDeleted,
		entriesAdded: st.entriesAdded, pels: st.pels, names: st.names, consumers: st.consumers}
	for _, n := range st.nodes {
		cn := &streamNode{master: n.master, total: n.total, lp: n.lp, fields: n.fields,
			offs: slices.Clone(n.offs), buf: slices.Clone(n.buf)}
		c.nodes = append(c.nodes, cn)
		c.bytes += cn.held()
	}
	for _, g := range st.groups {
		cg := &StreamGroup{name: g.name, lastID: g.lastID, entriesRead: g.entriesRead}
		byName := map[*streamConsumer]*streamConsumer{}
		for _, sc := range g.consumers {
			nc := &streamConsumer{name: sc.name, seen: sc.seen}
			byName[sc] = nc
			cg.consumers = append(cg.consumers, nc)
		}
		g.pel.each(StreamID{}, func(n *pending) bool {
			nn := &pending{id: n.id, delivered: n.delivered, count: n.count, consumer: byName[n.consumer]}
			cg.pel.insert(nn)
			if nn.consumer != nil {
				nn.consumer.pel.insert(nn)
			}
			return true
		})
		c.groups = append(c.groups, cg)
	}
	return c
}

// NewStream is an empty stream.
func NewStream() *Stream {
	return &Stream{nodeEntries: DefaultStreamNodeMaxEntries, nodeBytes: DefaultStreamNodeMaxBytes}
}

// Len is the number of entries.
func (st *Stream) Len() uint64 { return st.length }

// LastID is the last ID the stream generated or was given.
func (st *Stream) LastID() StreamID { return st.lastID }

// FirstID is the recorded first entry's ID, 0-0 if empty.
func (st *Stream) FirstID() StreamID { return st.firstID }

// MaxDeletedID is the greatest ID deleted (XDEL), 0-0 if none.
func (st *Stream) MaxDeletedID() StreamID { return st.maxDeleted }

// EntriesAdded counts every entry ever added.
func (st *Stream) EntriesAdded() uint64 { return st.entriesAdded }

// Nodes is the number of listpack nodes Redis would have (XINFO's
// radix-tree-keys).
func (st *Stream) Nodes() int { return len(st.nodes) }

// lpIntSize is the size of an integer entry of a listpack with its
// backlen.
func lpIntSize(v int64) int {
	switch {
	case v >= 0 && v <= 127:
		return 2
	case v >= -4096 && v <= 4095:
		return 3
	case v >= math.MinInt16 && v <= math.MaxInt16:
		return 4
	case v >= -1<<23 && v < 1<<23:
		return 5
	case v >= math.MinInt32 && v <= math.MaxInt32:
		return 6
	}
	return 10
}

// lpStrSize is the size of s as a listpack entry with its backlen: an
// integer if it reads as one, as lpAppend stores it.
func lpStrSize(s []byte) int {
	if len(s) > 0 && len(s) <= 20 {
		if v, err := strconv.ParseInt(string(s), 10, 64); err == nil && strconv.FormatInt(v, 10) == string(s) {
			return lpIntSize(v)
		}
	}
	n := len(s)
	switch {
	case n < 64:
		n++
	case n < 4096:
		n += 2
	default:
		n += 5
	}
	switch {
	case n < 128:
		return n + 1
	case n < 16384:
		return n + 2
	case n < 2097152:
		return n + 3
	case n < 268435456:
		return n + 4
	}
	return n + 5
}

func lpDelta(v uint64) int { return lpIntSize(int64(v)) }

// sameFields reports whether fields' names are the master's.
func sameFields(master, fields [][]byte) bool {
	if len(master)*2 != len(fields) {
		return false
	}
	for i, f := range master {
		if !bytes.Equal(f, fields[2*i]) {
			return false
		}
	}
	return true
}

// ErrStreamIDTooSmall is XADD's error for an ID not above the last one.
var ErrStreamIDTooSmall = errorString("The ID specified in XADD is equal or smaller than the target stream top item")

// ErrStreamExhausted is XADD's error once the last ID is the greatest.
var ErrStreamExhausted = errorString("The stream has exhausted the last possible ID, unable to add more items")

// ErrStreamTooLarge is XADD's error for an entry over 1 GB.
var ErrStreamTooLarge = errorString("Elements are too large to be stored")

type errorString string

func (e errorString) Error() string { return string(e) }

// streamMaxEntrySize is Redis's STREAM_LISTPACK_MAX_SIZE.
const streamMaxEntrySize = 1 << 30

// Add appends an entry of fields (field, value, ...), as XADD does: with
// the ID given, or with its sequence generated (seqGiven false), or
// generated whole from nowMs (id nil). It returns the ID.
func (st *Stream) Add(fields [][]byte, id *StreamID, seqGiven bool, nowMs uint64) (StreamID, error) {
	if st.lastID == MaxStreamID {
		return StreamID{}, ErrStreamExhausted
	}
	var nid StreamID
	switch {
	case id == nil:
		if nowMs > st.lastID.Ms {
			nid = StreamID{nowMs, 0}
		} else {
			nid, _ = st.lastID.Next()
		}
	case seqGiven:
		nid = *id
	case st.lastID.Ms == id.Ms:
		if st.lastID.Seq == math.MaxUint64 {
			return StreamID{}, ErrStreamIDTooSmall
		}
		nid = StreamID{id.Ms, st.lastID.Seq + 1}
	default:
		nid = StreamID{id.Ms, 0}
	}
	if nid.Cmp(st.lastID) <= 0 {
		return StreamID{}, ErrStreamIDTooSmall
	}
	total := 0
	for _, f := range fields {
		total += len(f)
	}
	if total > streamMaxEntrySize {
		return StreamID{}, ErrStreamTooLarge
	}
	st.appendEntry(nid, fields, total)
	st.length++
	st.entriesAdded++
	st.lastID = nid
	if st.length == 1 {
		st.firstID = nid
	}
	return nid, nil
}

// appendEntry puts the entry id of fields at the end, starting a node
// where Redis's streamAppendItem would.
func (st *Stream) appendEntry(id StreamID, fields [][]byte, total int) {
	var n *streamNode
	if k := len(st.nodes); k > 0 {
		n = st.nodes[k-1]
		maxBytes := st.nodeBytes
		if maxBytes <= 0 || maxBytes > streamMaxEntrySize {
			maxBytes = streamMaxEntrySize
		}
		if int64(n.lp+total) >= maxBytes || (st.nodeEntries > 0 && int64(n.total) >= st.nodeEntries) {
			n = nil
		}
	}
	var master StreamID
	if n == nil {
		if k := len(st.nodes); k > 0 {
			st.bytes -= st.nodes[k-1].close()
		}
		n = &streamNode{}
		// The listpack's header and end, and its master entry: count,
		// deleted, the number of fields, the fields and a terminator.
		n.lp = 7 + 2 + 2 + lpIntSize(int64(len(fields)/2)) + 2
		for i := 0; i < len(fields); i += 2 {
			f := bytes.Clone(fields[i])
			n.fields = append(n.fields, f)
			n.lp += lpStrSize(f)
		}
		st.nodes = append(st.nodes, n)
		master = id
	} else {
		master = n.master
	}
	sz := 2 + lpDelta(id.Ms-master.Ms) + lpDelta(id.Seq-master.Seq) + 2
	same := sameFields(n.fields, fields)
	if !same {
		sz += lpIntSize(int64(len(fields) / 2))
	}
	for i, f := range fields {
		if i%2 == 1 || !same {
			sz += lpStrSize(f)
		}
	}
	n.lp += sz
	n.total++
	st.bytes += n.add(id, fields)
}

// locate is the position of the first entry whose ID is at least id: the
// node and the index in it (past the end: len(nodes)).
func (st *Stream) locate(id StreamID) (ni, ei int) {
	ni, _ = slices.BinarySearchFunc(st.nodes, id, func(n *streamNode, id StreamID) int { return n.last().Cmp(id) })
	if ni == len(st.nodes) {
		return ni, 0
	}
	return ni, st.nodes[ni].find(id)
}

// Range calls fn with each entry from start to end, inclusive, in order
// (or reversed), until fn returns false or count (0: no limit) entries
// were given. fields aliases the stream and is reused between calls.
func (st *Stream) Range(start, end StreamID, count int, rev bool, fn func(id StreamID, fields [][]byte) bool) int {
	if start.Cmp(end) > 0 {
		return 0
	}
	var buf [16][]byte
	n := 0
	if !rev {
		ni, ei := st.locate(start)
		for ; ni < len(st.nodes); ni, ei = ni+1, 0 {
			node := st.nodes[ni]
			for i := ei; i < node.len(); i++ {
				id := node.id(i)
				if id.Cmp(end) > 0 || (count > 0 && n >= count) {
					return n
				}
				n++
				if !fn(id, node.entry(buf[:0], i)) {
					return n
				}
			}
		}
		return n
	}
	ni, ei := st.locate(end)
	// Start past the last entry at most end.
	if ni == len(st.nodes) {
		if ni == 0 {
			return 0
		}
		ni--
		ei = st.nodes[ni].len()
	} else if st.nodes[ni].id(ei) == end {
		ei++
	}
	for ; ni >= 0; ni-- {
		node := st.nodes[ni]
		if ei < 0 {
			ei = node.len()
		}
		for i := ei - 1; i >= 0; i-- {
			id := node.id(i)
			if id.Cmp(start) < 0 || (count > 0 && n >= count) {
				return n
			}
			n++
			if !fn(id, node.entry(buf[:0], i)) {
				return n
			}
		}
		ei = -1
	}
	return n
}

// Get calls fn with the entry id, if the stream has it.
func (st *Stream) Get(id StreamID, fn func(fields [][]byte)) bool {
	ni, ei := st.locate(id)
	if ni == len(st.nodes) || st.nodes[ni].id(ei) != id {
		return false
	}
	var buf [16][]byte
	fn(st.nodes[ni].entry(buf[:0], ei))
	return true
}

// Has reports whether the stream holds the entry id.
func (st *Stream) Has(id StreamID) bool {
	ni, ei := st.locate(id)
	return ni < len(st.nodes) && st.nodes[ni].id(ei) == id
}

// lastLive is the last entry's ID, 0-0 if none.
func (st *Stream) lastLive() StreamID {
	if len(st.nodes) == 0 {
		return StreamID{}
	}
	return st.nodes[len(st.nodes)-1].last()
}

// LastEntryID is the last entry's ID and whether there is one.
func (st *Stream) LastEntryID() (StreamID, bool) { return st.lastLive(), st.length > 0 }

func (st *Stream) firstLive() StreamID {
	if len(st.nodes) == 0 {
		return StreamID{}
	}
	return st.nodes[0].id(0)
}

// removeAt removes the entry at ei of node ni; a node left with no
// entry goes, as Redis frees a listpack whose count drops to 0.
func (st *Stream) removeAt(ni, ei int) {
	n := st.nodes[ni]
	n.remove(ei, ei+1)
	st.length--
	if n.len() == 0 {
		st.bytes -= n.held()
		st.nodes = slices.Delete(st.nodes, ni, ni+1)
	}
}

// Delete removes the entries of ids, as XDEL does, and returns how many
// it removed.
func (st *Stream) Delete(ids []StreamID) int {
	deleted := 0
	firstGone := false
	for _, id := range ids {
		ni, ei := st.locate(id)
		if ni == len(st.nodes) || st.nodes[ni].id(ei) != id {
			continue
		}
		st.removeAt(ni, ei)
		if id == st.firstID {
			firstGone = true
		}
		if id.Cmp(st.maxDeleted) > 0 {
			st.maxDeleted = id
		}
		deleted++
	}
	if deleted > 0 {
		if st.length == 0 {
			st.firstID = StreamID{}
		} else if firstGone {
			st.firstID = st.firstLive()
		}
	}
	return deleted
}

// Trim is a trimming of XADD and XTRIM: to MaxLen entries, or of the
// entries below MinID; Approx removes only whole nodes, and Limit (0:
// none) bounds the entries removed.
type Trim struct {
	ByID   bool
	MaxLen uint64
	MinID  StreamID
	Approx bool
	Limit  int64
}

// Trim removes entries from the head as Redis's streamTrim does and
// returns how many.
func (st *Stream) Trim(t Trim) int64 {
	var deleted int64
	for len(st.nodes) > 0 {
		if !t.ByID && st.length <= t.MaxLen {
			break
		}
		n := st.nodes[0]
		entries := int64(n.len())
		if t.Limit > 0 && deleted+entries > t.Limit {
			break
		}
		var whole bool
		if t.ByID {
			whole = n.last().Cmp(t.MinID) < 0
		} else {
			whole = st.length-uint64(entries) >= t.MaxLen
		}
		if whole {
			st.bytes -= n.held()
			st.nodes = st.nodes[1:]
			st.length -= uint64(entries)
			deleted += entries
			continue
		}
		if t.Approx {
			break
		}
		k := 0
		for k < n.len() {
			if t.ByID {
				if n.id(k).Cmp(t.MinID) >= 0 {
					break
				}
			} else if st.length <= t.MaxLen {
				break
			}
			st.length--
			k++
		}
		n.remove(0, k)
		deleted += int64(k)
		break
	}
	if st.length == 0 {
		st.firstID = StreamID{}
	} else if deleted > 0 {
		st.firstID = st.firstLive()
	}
	return deleted
}

// FirstEntryID is the first entry's ID, 0-0 if empty (what XADD
// propagates for a MINID ~ trim).
func (st *Stream) FirstEntryID() StreamID { return st.firstLive() }

// SetID is XSETID's change, checked: the last ID, and entriesAdded and
// maxDeleted when given (entriesAdded -1 and a zero maxDeleted: not).
func (st *Stream) SetID(id StreamID, entriesAdded int64, maxDeleted StreamID) error {
	if st.length > 0 {
		if id.Cmp(st.lastLive()) < 0 {
			return errorString("The ID specified in XSETID is smaller than the target stream top item")
		}
		if entriesAdded != -1 && st.length > uint64(entriesAdded) {
			return errorString("The entries_added specified in XSETID is smaller than the target stream length")
		}
	}
	st.lastID = id
	if entriesAdded != -1 {
		st.entriesAdded = uint64(entriesAdded)
	}
	if !maxDeleted.IsZero() {
		st.maxDeleted = maxDeleted
	}
	return nil
}

// rangeHasTombstones is Redis's streamRangeHasTombstones from start to
// the end.
func (st *Stream) rangeHasTombstones(start StreamID) bool {
	if st.length == 0 || st.maxDeleted.IsZero() {
		return false
	}
	if st.firstID.Cmp(st.maxDeleted) > 0 {
		return false
	}
	return start.Cmp(st.maxDeleted) <= 0
}

// estimateDistance is Redis's streamEstimateDistanceFromFirstEverEntry:
// id's logical read counter, or -1 if it cannot be known.
func (st *Stream) estimateDistance(id StreamID) int64 {
	if st.entriesAdded == 0 {
		return 0
	}
	if st.length == 0 && id.Cmp(st.lastID) < 1 {
		return int64(st.entriesAdded)
	}
	switch id.Cmp(st.lastID) {
	case 0:
		return int64(st.entriesAdded)
	case 1:
		return -1
	}
	cmpFirst := id.Cmp(st.firstID)
	if st.maxDeleted.IsZero() || st.maxDeleted.Cmp(st.firstID) < 0 {
		if cmpFirst < 0 {
			return int64(st.entriesAdded - st.length)
		} else if cmpFirst == 0 {
			return int64(st.entriesAdded - st.length + 1)
		}
	}
	return -1
}

// Lag is a group's lag as XINFO shows it; ok is false where Redis
// answers null.
func (st *Stream) Lag(g *StreamGroup) (lag int64, ok bool) {
	if st.entriesAdded == 0 {
		return 0, true
	}
	if g.entriesRead != -1 && !st.rangeHasTombstones(g.lastID) {
		return int64(st.entriesAdded) - g.entriesRead, true
	}
	if read := st.estimateDistance(g.lastID); read != -1 {
		return int64(st.entriesAdded) - read, true
	}
	return 0, false
}
