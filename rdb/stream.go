package rdb

import (
	"bytes"
	"encoding/binary"
	"math"

	"github.com/stampedeless/stampedeless/internal/redisnum"
)

// StreamID is a stream entry's ID.
type StreamID struct{ Ms, Seq uint64 }

// StreamEntry is one entry: its ID and its fields and values (field,
// value, ...).
type StreamEntry struct {
	ID     StreamID
	Fields [][]byte
}

// StreamPending is an entry of a group's pending entries list.
type StreamPending struct {
	ID        StreamID
	Delivered int64 // unix ms
	Count     uint64
}

// StreamConsumer is a consumer and the IDs of its pending entries.
type StreamConsumer struct {
	Name    []byte
	Seen    int64 // unix ms
	Pending []StreamID
}

// EntriesReadUnknown is a group's EntriesRead read from a version-1
// stream, which had none: the store estimates it as Redis's loader does.
const EntriesReadUnknown = math.MinInt64

// StreamGroup is a consumer group.
type StreamGroup struct {
	Name        []byte
	LastID      StreamID
	EntriesRead int64 // -1: not known
	Pending     []StreamPending
	Consumers   []StreamConsumer
}

// Stream is a stream's value as RDB_TYPE_STREAM_LISTPACKS_2 holds it.
type Stream struct {
	Entries      []StreamEntry // in ID order
	LastID       StreamID
	FirstID      StreamID
	MaxDeleted   StreamID
	EntriesAdded uint64
	Groups       []StreamGroup
}

// The flags of a stream entry in its listpack (src/t_stream.c).
const (
	streamFlagDeleted    = 1
	streamFlagSameFields = 2
)

func appendStreamKey(b []byte, id StreamID) []byte {
	b = binary.BigEndian.AppendUint64(b, id.Ms)
	return binary.BigEndian.AppendUint64(b, id.Seq)
}

// appendStream writes st as Redis 7.0's rdbSaveObject writes a stream:
// its entries in listpacks of at most 100 entries or 4 KB, each headed
// by its master entry (the first entry's fields), then its metadata and
// its groups.
func appendStream(b []byte, st *Stream) (byte, []byte) {
	type node struct {
		master StreamID
		lp     listpack
	}
	var nodes []node
	var cur *node
	var masterFields [][]byte
	var count int
	var num []byte
	appendNum := func(lp *listpack, v int64) {
		num = appendIntTo(num[:0], v)
		lp.append(num)
	}
	flush := func() {
		if cur == nil {
			return
		}
		// The master entry's count, written last: rebuild the body with it.
		var lp listpack
		appendNum(&lp, int64(count))
		lp.body = append(lp.body, cur.lp.body...)
		lp.n += cur.lp.n
		cur.lp = lp
		nodes = append(nodes, *cur)
		cur = nil
	}
	for _, e := range st.Entries {
		total := 0
		for _, f := range e.Fields {
			total += len(f)
		}
		if cur != nil && (lpHeaderSize+len(cur.lp.body)+1+total >= 4096 || count >= 100) {
			flush()
		}
		if cur == nil {
			cur = &node{master: e.ID}
			count = 0
			masterFields = masterFields[:0]
			appendNum(&cur.lp, 0) // deleted
			appendNum(&cur.lp, int64(len(e.Fields)/2))
			for i := 0; i < len(e.Fields); i += 2 {
				cur.lp.append(e.Fields[i])
				masterFields = append(masterFields, e.Fields[i])
			}
			appendNum(&cur.lp, 0)
		}
		same := len(masterFields)*2 == len(e.Fields)
		for i := 0; same && i < len(masterFields); i++ {
			same = bytes.Equal(masterFields[i], e.Fields[2*i])
		}
		flags := int64(0)
		if same {
			flags = streamFlagSameFields
		}
		appendNum(&cur.lp, flags)
		appendNum(&cur.lp, int64(e.ID.Ms-cur.master.Ms))
		appendNum(&cur.lp, int64(e.ID.Seq-cur.master.Seq))
		n := int64(len(e.Fields) / 2)
		if !same {
			appendNum(&cur.lp, n)
		}
		for i, f := range e.Fields {
			if same && i%2 == 0 {
				continue
			}
			cur.lp.append(f)
		}
		lpCount := n + 3
		if !same {
			lpCount += n + 1
		}
		appendNum(&cur.lp, lpCount)
		count++
	}
	flush()
	b = appendLen(b, uint64(len(nodes)))
	var key []byte
	for i := range nodes {
		key = appendStreamKey(key[:0], nodes[i].master)
		b = appendString(b, key)
		b = appendString(b, nodes[i].lp.bytes())
	}
	b = appendLen(b, uint64(len(st.Entries)))
	for _, v := range []uint64{st.LastID.Ms, st.LastID.Seq, st.FirstID.Ms, st.FirstID.Seq, st.MaxDeleted.Ms, st.MaxDeleted.Seq, st.EntriesAdded} {
		b = appendLen(b, v)
	}
	b = appendLen(b, uint64(len(st.Groups)))
	for _, g := range st.Groups {
		b = appendString(b, g.Name)
		b = appendLen(b, g.LastID.Ms)
		b = appendLen(b, g.LastID.Seq)
		b = appendLen(b, uint64(g.EntriesRead))
		b = appendLen(b, uint64(len(g.Pending)))
		for _, p := range g.Pending {
			b = appendStreamKey(b, p.ID)
			b = binary.LittleEndian.AppendUint64(b, uint64(p.Delivered))
			b = appendLen(b, p.Count)
		}
		b = appendLen(b, uint64(len(g.Consumers)))
		for _, c := range g.Consumers {
			b = appendString(b, c.Name)
			b = binary.LittleEndian.AppendUint64(b, uint64(c.Seen))
			b = appendLen(b, uint64(len(c.Pending)))
			for _, id := range c.Pending {
				b = appendStreamKey(b, id)
			}
		}
	}
	return typeStream2, b
}

// stream reads a stream (RDB_TYPE_STREAM_LISTPACKS, and _2 where v2), as
// rdbLoadObject does, checking each listpack's layout.
func (s *source) stream(v2 bool) (*Stream, error) {
	start := s.off
	st := &Stream{}
	nodes, err := s.count("stream")
	if err != nil {
		return nil, err
	}
	for range nodes {
		key, err := s.str()
		if err != nil {
			return nil, err
		}
		if len(key) != 16 {
			return nil, corrupt(s.off, "stream node key of %d bytes", len(key))
		}
		master := StreamID{binary.BigEndian.Uint64(key), binary.BigEndian.Uint64(key[8:])}
		lp, err := s.str()
		if err != nil {
			return nil, err
		}
		var elems [][]byte
		if _, err := eachListpack(lp, func(e []byte) { elems = append(elems, bytes.Clone(e)) }); err != nil {
			return nil, at(err, start)
		}
		if err := streamNodeEntries(st, master, elems); err != nil {
			return nil, at(err, start)
		}
	}
	length, err := s.plainLen("stream length")
	if err != nil {
		return nil, err
	}
	if length != uint64(len(st.Entries)) {
		return nil, corrupt(s.off, "stream says %d entries, has %d", length, len(st.Entries))
	}
	meta := make([]uint64, 2, 7)
	if v2 {
		meta = meta[:7]
	}
	for i := range meta {
		if meta[i], err = s.plainLen("stream id"); err != nil {
			return nil, err
		}
	}
	st.LastID = StreamID{meta[0], meta[1]}
	if v2 {
		st.FirstID = StreamID{meta[2], meta[3]}
		st.MaxDeleted = StreamID{meta[4], meta[5]}
		st.EntriesAdded = meta[6]
	} else {
		st.EntriesAdded = length
		if len(st.Entries) > 0 {
			st.FirstID = st.Entries[0].ID
		}
	}
	groups, err := s.count("stream groups")
	if err != nil {
		return nil, err
	}
	for range groups {
		var g StreamGroup
		if g.Name, err = s.str(); err != nil {
			return nil, err
		}
		var ms, seq uint64
		if ms, err = s.plainLen("group id"); err != nil {
			return nil, err
		}
		if seq, err = s.plainLen("group id"); err != nil {
			return nil, err
		}
		g.LastID = StreamID{ms, seq}
		g.EntriesRead = EntriesReadUnknown
		if v2 {
			n, err := s.plainLen("entries read")
			if err != nil {
				return nil, err
			}
			g.EntriesRead = int64(n)
		}
		pel, err := s.count("stream PEL")
		if err != nil {
			return nil, err
		}
		owner := make(map[StreamID]bool, pel)
		for range pel {
			raw, err := s.take(24, "stream PEL entry")
			if err != nil {
				return nil, err
			}
			p := StreamPending{ID: StreamID{binary.BigEndian.Uint64(raw), binary.BigEndian.Uint64(raw[8:])},
				Delivered: int64(binary.LittleEndian.Uint64(raw[16:]))}
			if p.Count, err = s.plainLen("delivery count"); err != nil {
				return nil, err
			}
			owner[p.ID] = false
			g.Pending = append(g.Pending, p)
		}
		consumers, err := s.count("stream consumers")
		if err != nil {
			return nil, err
		}
		for range consumers {
			var c StreamConsumer
			if c.Name, err = s.str(); err != nil {
				return nil, err
			}
			raw, err := s.take(8, "seen time")
			if err != nil {
				return nil, err
			}
			c.Seen = int64(binary.LittleEndian.Uint64(raw))
			n, err := s.count("stream consumer PEL")
			if err != nil {
				return nil, err
			}
			for range n {
				raw, err := s.take(16, "stream consumer PEL entry")
				if err != nil {
					return nil, err
				}
				id := StreamID{binary.BigEndian.Uint64(raw), binary.BigEndian.Uint64(raw[8:])}
				if taken, ok := owner[id]; !ok || taken {
					return nil, corrupt(s.off, "consumer PEL entry %d-%d not in its group's PEL once", id.Ms, id.Seq)
				}
				owner[id] = true
				c.Pending = append(c.Pending, id)
			}
			g.Consumers = append(g.Consumers, c)
		}
		st.Groups = append(st.Groups, g)
	}
	return st, nil
}

// streamNodeEntries appends the live entries of a node's listpack
// elements to st.
func streamNodeEntries(st *Stream, master StreamID, elems [][]byte) error {
	i := 0
	num := func() (int64, bool) {
		if i >= len(elems) {
			return 0, false
		}
		v, ok := redisnum.ParseInt(elems[i])
		i++
		return v, ok
	}
	bad := func(what string) error { return corrupt(0, "stream listpack: bad %s", what) }
	count, ok1 := num()
	deleted, ok2 := num()
	nf, ok3 := num()
	if !ok1 || !ok2 || !ok3 || nf < 0 || i+int(nf) > len(elems) || count+deleted == 0 {
		return bad("master entry")
	}
	mfields := elems[i : i+int(nf)]
	i += int(nf)
	if z, ok := num(); !ok || z != 0 {
		return bad("master entry terminator")
	}
	for i < len(elems) {
		flags, ok := num()
		if !ok {
			return bad("entry flags")
		}
		dms, ok1 := num()
		dseq, ok2 := num()
		if !ok1 || !ok2 {
			return bad("entry ID")
		}
		n := nf
		same := flags&streamFlagSameFields != 0
		if !same {
			if n, ok = num(); !ok || n < 0 {
				return bad("entry field count")
			}
		}
		var fields [][]byte
		for k := int64(0); k < n; k++ {
			if same {
				fields = append(fields, mfields[k])
			} else {
				if i >= len(elems) {
					return bad("entry field")
				}
				fields = append(fields, elems[i])
				i++
			}
			if i >= len(elems) {
				return bad("entry value")
			}
			fields = append(fields, elems[i])
			i++
		}
		if _, ok := num(); !ok {
			return bad("entry lp-count")
		}
		if flags&streamFlagDeleted == 0 {
			id := StreamID{master.Ms + uint64(dms), master.Seq + uint64(dseq)}
			st.Entries = append(st.Entries, StreamEntry{ID: id, Fields: fields})
		}
	}
	return nil
}
