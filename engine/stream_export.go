package engine

import (
	"bytes"
	"errors"
)

// StreamData is a stream in a portable form, for snapshots, DUMP and
// RESTORE: what Redis's RDB holds of it. Slices are the holder's own.
type StreamData struct {
	Entries                     []StreamDataEntry // in ID order
	LastID, FirstID, MaxDeleted StreamID
	EntriesAdded                uint64
	Groups                      []StreamDataGroup
}

// StreamDataEntry is an entry: its ID and fields and values.
type StreamDataEntry struct {
	ID     StreamID
	Fields [][]byte
}

// StreamDataGroup is a consumer group. EstimateRead asks the store to
// estimate EntriesRead, as Redis does loading a stream saved before it
// kept one.
type StreamDataGroup struct {
	Name         []byte
	LastID       StreamID
	EntriesRead  int64
	EstimateRead bool
	Pending      []StreamDataPending
	Consumers    []StreamDataConsumer
}

// StreamDataPending is a pending entry of a group.
type StreamDataPending struct {
	ID        StreamID
	Delivered int64
	Count     uint64
}

// StreamDataConsumer is a consumer and the IDs of the entries it owns.
type StreamDataConsumer struct {
	Name    []byte
	Seen    int64
	Pending []StreamID
}

// ErrBadStream is a StreamData that no stream can be: entries out of
// order, a consumer's pending entry its group lacks or two consumers own.
var ErrBadStream = errors.New("engine: inconsistent stream data")

func (st *Stream) export() *StreamData {
	d := &StreamData{LastID: st.lastID, FirstID: st.firstID, MaxDeleted: st.maxDeleted, EntriesAdded: st.entriesAdded}
	st.Range(StreamID{}, MaxStreamID, 0, false, func(id StreamID, fields [][]byte) bool {
		e := StreamDataEntry{ID: id, Fields: make([][]byte, len(fields))}
		for i, f := range fields {
			e.Fields[i] = bytes.Clone(f)
		}
		d.Entries = append(d.Entries, e)
		return true
	})
	for _, g := range st.groups {
		dg := StreamDataGroup{Name: []byte(g.name), LastID: g.lastID, EntriesRead: g.entriesRead}
		g.pel.each(StreamID{}, func(p *pending) bool {
			dg.Pending = append(dg.Pending, StreamDataPending{ID: p.id, Delivered: p.delivered, Count: p.count})
			return true
		})
		for _, c := range g.consumers {
			dc := StreamDataConsumer{Name: []byte(c.name), Seen: c.seen}
			c.pel.each(StreamID{}, func(p *pending) bool {
				dc.Pending = append(dc.Pending, p.id)
				return true
			})
			dg.Consumers = append(dg.Consumers, dc)
		}
		d.Groups = append(d.Groups, dg)
	}
	return d
}

// streamOf builds the stream d describes, laying its entries out in
// nodes as appends would.
func (s *Store) streamOf(d *StreamData) (*Stream, error) {
	st := NewStream()
	st.nodeEntries, st.nodeBytes = s.streamNode.get()
	prev := StreamID{}
	for i, e := range d.Entries {
		if (i > 0 && e.ID.Cmp(prev) <= 0) || len(e.Fields) < 2 || len(e.Fields)%2 != 0 {
			return nil, ErrBadStream
		}
		prev = e.ID
		total := 0
		for _, f := range e.Fields {
			total += len(f)
		}
		st.appendEntry(e.ID, e.Fields, total)
		st.length++
	}
	st.lastID, st.firstID, st.maxDeleted, st.entriesAdded = d.LastID, d.FirstID, d.MaxDeleted, d.EntriesAdded
	if st.length > 0 && st.lastID.Cmp(prev) < 0 {
		return nil, ErrBadStream
	}
	for _, dg := range d.Groups {
		read := dg.EntriesRead
		if dg.EstimateRead {
			read = st.estimateDistance(dg.LastID)
		}
		if !st.CreateGroup(dg.Name, dg.LastID, read) {
			return nil, ErrBadStream
		}
		g := st.Group(dg.Name)
		for _, p := range dg.Pending {
			if !g.pel.insert(&pending{id: p.ID, delivered: p.Delivered, count: p.Count}) {
				return nil, ErrBadStream
			}
			st.pels++
		}
		for _, dc := range dg.Consumers {
			if !st.CreateConsumer(g, dc.Name, dc.Seen) {
				return nil, ErrBadStream
			}
			c := g.lookupConsumer(dc.Name, false, 0)
			for _, id := range dc.Pending {
				p := g.pel.find(id)
				if p == nil || p.consumer != nil {
					return nil, ErrBadStream
				}
				p.consumer = c
				c.pel.insert(p)
			}
		}
	}
	// Redis's loader refuses a PEL entry no consumer owns.
	for _, g := range st.groups {
		bad := false
		g.pel.each(StreamID{}, func(p *pending) bool {
			bad = p.consumer == nil
			return !bad
		})
		if bad {
			return nil, ErrBadStream
		}
	}
	return st, nil
}
