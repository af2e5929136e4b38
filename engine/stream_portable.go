package engine

import (
	"bytes"
	"encoding/binary"
	"math"
)

// A stream's portable form (Store.Export, which the --redis shared tier
// carries) is the whole stream as the store holds it, its nodes
// included: a replica that faults it in then trims (MAXLEN ~, MINID ~),
// starts its next node and answers XINFO's radix-tree-keys as the
// replica that wrote it would, where StreamData (snapshots, DUMP) lays
// the entries out again as appends would. Numbers are uvarints, signed
// ones varints, bytes a uvarint length and the bytes:
//
//	format byte (streamFormatV1)
//	last ID, first ID, max deleted ID (each ms, seq); entries added
//	node count; per node:
//	    entries it had (deleted ones included), its listpack's bytes,
//	    master field count and the fields, live entry count; per entry:
//	        its ID (delta-coded, below);
//	        0 and one value per master field if its fields are the
//	        master's (as a listpack's same-fields flag), else the count
//	        of its fields and values and each (the entry's own data)
//	group count; per group, by name:
//	    name, last ID, entries read (varint, -1: unknown);
//	    consumer count; per consumer, by name: name, seen (varint);
//	    pending count; per pending entry, by ID: its ID (delta-coded),
//	    delivery time (varint), delivery count, its consumer's index
//
// An ID in a sequence (the entries, a PEL) is its ms minus the previous
// one's and then, if that is 0, its seq minus the previous one's, else
// its seq; the first is coded against 0-0.
const streamFormatV1 byte = 1

// exportStream is the portable form of the stream c.
func exportStream(c collection) []byte {
	st := c.obj.(*Stream)
	b := []byte{streamFormatV1}
	for _, id := range []StreamID{st.lastID, st.firstID, st.maxDeleted} {
		b = binary.AppendUvarint(binary.AppendUvarint(b, id.Ms), id.Seq)
	}
	b = binary.AppendUvarint(b, st.entriesAdded)
	b = binary.AppendUvarint(b, uint64(len(st.nodes)))
	var prev StreamID
	var fields [][]byte
	for _, n := range st.nodes {
		b = binary.AppendUvarint(b, uint64(n.total))
		b = binary.AppendUvarint(b, uint64(n.lp))
		b = appendPortableList(b, n.fields)
		b = binary.AppendUvarint(b, uint64(n.len()))
		for i := range n.len() {
			id := n.id(i)
			b = appendIDDelta(b, prev, id)
			prev = id
			fields = n.entry(fields[:0], i)
			if !sameFields(n.fields, fields) {
				b = appendPortableList(b, fields)
				continue
			}
			b = append(b, 0)
			for i := 1; i < len(fields); i += 2 {
				b = appendPortable(b, fields[i])
			}
		}
	}
	b = binary.AppendUvarint(b, uint64(len(st.groups)))
	for _, g := range st.groups {
		b = appendPortable(b, []byte(g.name))
		b = binary.AppendUvarint(binary.AppendUvarint(b, g.lastID.Ms), g.lastID.Seq)
		b = binary.AppendVarint(b, g.entriesRead)
		b = binary.AppendUvarint(b, uint64(len(g.consumers)))
		index := make(map[*streamConsumer]int, len(g.consumers))
		for i, sc := range g.consumers {
			b = appendPortable(b, []byte(sc.name))
			b = binary.AppendVarint(b, sc.seen)
			index[sc] = i
		}
		b = binary.AppendUvarint(b, uint64(g.pel.n))
		prev = StreamID{}
		g.pel.each(StreamID{}, func(p *pending) bool {
			b = appendIDDelta(b, prev, p.id)
			prev = p.id
			b = binary.AppendVarint(b, p.delivered)
			b = binary.AppendUvarint(b, p.count)
			ci, ok := index[p.consumer]
			if !ok {
				// Only an XCLAIM FORCE under way leaves an entry no
				// consumer's: no index is one the import refuses.
				ci = len(g.consumers)
			}
			b = binary.AppendUvarint(b, uint64(ci))
			return true
		})
	}
	return b
}

func appendPortable(b, s []byte) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendPortableList(b []byte, list [][]byte) []byte {
	b = binary.AppendUvarint(b, uint64(len(list)))
	for _, s := range list {
		b = appendPortable(b, s)
	}
	return b
}

func appendIDDelta(b []byte, prev, id StreamID) []byte {
	b = binary.AppendUvarint(b, id.Ms-prev.Ms)
	if id.Ms == prev.Ms {
		return binary.AppendUvarint(b, id.Seq-prev.Seq)
	}
	return binary.AppendUvarint(b, id.Seq)
}

// importStream is the stream whose portable form is b, charged as the
// appends that make it would charge it (its nodes' buffers grown entry by
// entry, and cut when the next node starts); ok is false if b is no stream's portable form: cut
// short, with bytes left over, entries or pending entries out of order,
// two groups or consumers of one name, a pending entry of no consumer.
// Nothing of the stream aliases b.
func importStream(b []byte) (c collection, ok bool) {
	if len(b) == 0 || b[0] != streamFormatV1 {
		return collection{}, false
	}
	r := &portableReader{b: b[1:]}
	st := NewStream()
	st.lastID, st.firstID, st.maxDeleted = r.id(), r.id(), r.id()
	st.entriesAdded = r.uvarint()
	// Each node takes at least 5 bytes, an entry 4, a field 1.
	nodes := r.count(5)
	var prev StreamID
	var fields [][]byte
	for range nodes {
		n := &streamNode{total: r.int(), lp: r.int()}
		for range r.count(1) {
			n.fields = append(n.fields, bytes.Clone(r.bytes()))
		}
		live := r.count(4)
		if r.bad || len(n.fields) == 0 || live == 0 || live > n.total {
			return collection{}, false
		}
		for range live {
			id, ok := r.nextID(prev, st.length == 0)
			fields = fields[:0]
			if k := r.count(1); k == 0 {
				for _, f := range n.fields {
					fields = append(fields, f, r.bytes())
				}
			} else if k%2 == 0 {
				for range k {
					fields = append(fields, r.bytes())
				}
			} else {
				return collection{}, false
			}
			if !ok || r.bad {
				return collection{}, false
			}
			prev = id
			n.add(id, fields)
			st.length++
		}
		if k := len(st.nodes); k > 0 {
			st.nodes[k-1].close()
		}
		st.nodes = append(st.nodes, n)
	}
	for _, n := range st.nodes {
		st.bytes += n.held()
	}
	if st.length > 0 && st.lastID.Cmp(prev) < 0 {
		return collection{}, false
	}
	for range r.count(4) {
		name, last, read := r.bytes(), r.id(), r.varint()
		if r.bad || !st.CreateGroup(name, last, read) {
			return collection{}, false
		}
		g := st.Group(name)
		consumers := make([]*streamConsumer, r.count(2))
		for i := range consumers {
			name, seen := r.bytes(), r.varint()
			if r.bad || !st.CreateConsumer(g, name, seen) {
				return collection{}, false
			}
			consumers[i] = g.lookupConsumer(name, false, 0)
		}
		prev = StreamID{}
		for i := range r.count(5) {
			id, ok := r.nextID(prev, i == 0)
			p := &pending{id: id, delivered: r.varint(), count: r.uvarint()}
			ci := r.uvarint()
			if !ok || r.bad || ci >= uint64(len(consumers)) {
				return collection{}, false
			}
			prev = id
			p.consumer = consumers[ci]
			g.pel.insert(p)
			p.consumer.pel.insert(p)
			st.pels++
		}
	}
	if r.bad || len(r.b) > 0 {
		return collection{}, false
	}
	return collection{obj: st, charge: st.charge()}, true
}

// portableReader reads a portable form; once it finds the form cut short
// or a number out of range it is bad and reads zeros.
type portableReader struct {
	b   []byte
	bad bool
}

func (r *portableReader) uvarint() uint64 { return readNumber(r, binary.Uvarint) }

func (r *portableReader) varint() int64 { return readNumber(r, binary.Varint) }

// readNumber is the number decode (binary.Uvarint or Varint) reads.
func readNumber[T uint64 | int64](r *portableReader, decode func([]byte) (T, int)) T {
	if r.bad {
		return 0
	}
	v, k := decode(r.b)
	if k <= 0 {
		r.bad = true
		return 0
	}
	r.b = r.b[k:]
	return v
}

// int is a uvarint that must fit an int.
func (r *portableReader) int() int {
	v := r.uvarint()
	if v > math.MaxInt {
		r.bad = true
		return 0
	}
	return int(v)
}

// count is a count of items of at least size bytes each: one the bytes
// left cannot hold is bad, so that no allocation outgrows the form.
func (r *portableReader) count(size int) int {
	v := r.uvarint()
	if v > uint64(len(r.b)/size) {
		r.bad = true
		return 0
	}
	return int(v)
}

// bytes is a length and its bytes, aliasing the form.
func (r *portableReader) bytes() []byte {
	n := r.uvarint()
	if n > uint64(len(r.b)) {
		r.bad = true
		return nil
	}
	v := r.b[:n:n]
	r.b = r.b[n:]
	return v
}

func (r *portableReader) id() StreamID {
	return StreamID{Ms: r.uvarint(), Seq: r.uvarint()}
}

// nextID is the ID after prev in a delta-coded sequence (see
// streamFormatV1); ok is false unless it is above prev, or first.
func (r *portableReader) nextID(prev StreamID, first bool) (id StreamID, ok bool) {
	dms, seq := r.uvarint(), r.uvarint()
	if dms > math.MaxUint64-prev.Ms {
		return StreamID{}, false
	}
	id.Ms, id.Seq = prev.Ms+dms, seq
	if dms == 0 {
		if seq > math.MaxUint64-prev.Seq {
			return StreamID{}, false
		}
		id.Seq = prev.Seq + seq
	}
	return id, first || id.Cmp(prev) > 0
}
