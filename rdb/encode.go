package rdb

import (
	"encoding/binary"
	"math"
	"slices"

	"github.com/stampedeless/stampedeless/internal/lzf"
	"github.com/stampedeless/stampedeless/internal/redisnum"
)

// appendLen is rdbSaveLen: 6, 14, 32 or 64 bits, big-endian past six.
func appendLen(b []byte, n uint64) []byte {
	switch {
	case n < 1<<6:
		return append(b, byte(n))
	case n < 1<<14:
		return append(b, byte(n>>8)|len14<<6, byte(n))
	case n <= math.MaxUint32:
		return binary.BigEndian.AppendUint32(append(b, len32), uint32(n))
	}
	return binary.BigEndian.AppendUint64(append(b, len64), n)
}

// appendString is rdbSaveRawString under rdbcompression yes: a string of
// at most 11 bytes that is a canonical integer in 32 bits is written as
// one, and one of more than 20 bytes is LZF-compressed if that saves more
// than 4 bytes.
func appendString(b, s []byte) []byte {
	if len(s) <= 11 {
		if v, ok := redisnum.ParseInt(s); ok {
			if e, ok := appendIntString(b, v); ok {
				return e
			}
		}
	}
	if len(s) > 20 {
		if e, ok := appendLZFString(b, s); ok {
			return e
		}
	}
	b = appendLen(b, uint64(len(s)))
	return append(b, s...)
}

// appendLZFString is rdbSaveLzfStringObject: the encoding, the compressed
// and the original length, the compressed bytes.
func appendLZFString(b, s []byte) ([]byte, bool) {
	// Compress past room for the header, then move the header in front.
	const room = 1 + 9 + 9
	at := len(b)
	b = append(b, make([]byte, room)...)
	b, ok := lzf.Compress(b, s, len(s)-4)
	if !ok {
		return b[:at], false
	}
	clen := len(b) - at - room
	var hdr [room]byte
	h := append(hdr[:0], lenEnc<<6|encLZF)
	h = appendLen(h, uint64(clen))
	h = appendLen(h, uint64(len(s)))
	n := copy(b[at:], h)
	copy(b[at+n:], b[at+room:])
	return b[:at+n+clen], true
}

// appendIntString is rdbEncodeInteger: ok is false if v needs more than
// 32 bits.
func appendIntString(b []byte, v int64) ([]byte, bool) {
	switch {
	case v >= math.MinInt8 && v <= math.MaxInt8:
		return append(b, lenEnc<<6|encInt8, byte(v)), true
	case v >= math.MinInt16 && v <= math.MaxInt16:
		return binary.LittleEndian.AppendUint16(append(b, lenEnc<<6|encInt16), uint16(v)), true
	case v >= math.MinInt32 && v <= math.MaxInt32:
		return binary.LittleEndian.AppendUint32(append(b, lenEnc<<6|encInt32), uint32(v)), true
	}
	return b, false
}

// appendValue appends e's value as rdbSaveObject writes it, and returns
// the type rdbSaveObjectType would write for it (which in a file comes
// before the key).
func appendValue(b []byte, e *Entry) (byte, []byte) {
	switch e.Kind {
	case KindList:
		return appendList(b, e.Members)
	case KindSet:
		return appendSet(b, e.Members, e.Plain)
	case KindZSet:
		return appendZSet(b, e.Scored, e.Plain)
	case KindHash:
		return appendHash(b, e.Pairs, e.Plain)
	case KindStream:
		return appendStream(b, e.Stream)
	}
	return typeString, appendString(b, e.Value)
}

func appendHash(b []byte, pairs [][]byte, plain bool) (byte, []byte) {
	compact := !plain && len(pairs)/2 <= hashMaxListpackEntries
	for i := 0; compact && i < len(pairs); i++ {
		compact = len(pairs[i]) <= hashMaxListpackValue
	}
	if compact {
		var lp listpack
		for _, p := range pairs {
			lp.append(p)
		}
		return typeHashListpack, appendString(b, lp.bytes())
	}
	b = appendLen(b, uint64(len(pairs)/2))
	for _, p := range pairs[:len(pairs)&^1] {
		b = appendString(b, p)
	}
	return typeHash, b
}

func appendSet(b []byte, members [][]byte, plain bool) (byte, []byte) {
	if !plain && len(members) <= setMaxIntsetEntries {
		if is, ok := makeIntset(members); ok {
			return typeSetIntset, appendString(b, is)
		}
	}
	b = appendLen(b, uint64(len(members)))
	for _, m := range members {
		b = appendString(b, m)
	}
	return typeSet, b
}

func appendZSet(b []byte, scored []Scored, plain bool) (byte, []byte) {
	compact := !plain && len(scored) <= zsetMaxListpackEntries
	for i := 0; compact && i < len(scored); i++ {
		compact = len(scored[i].Member) <= zsetMaxListpackValue
	}
	if compact {
		var lp listpack
		var num []byte
		for _, s := range scored {
			lp.append(s.Member)
			num = redisnum.AppendD2String(num[:0], s.Score) // as a listpack holds a score
			lp.append(num)
		}
		return typeZSetListpack, appendString(b, lp.bytes())
	}
	// rdbSaveObject writes a skiplist from its tail, so that loading
	// inserts each member at the head.
	b = appendLen(b, uint64(len(scored)))
	for i := len(scored) - 1; i >= 0; i-- {
		b = appendString(b, scored[i].Member)
		b = binary.LittleEndian.AppendUint64(b, math.Float64bits(scored[i].Score))
	}
	return typeZSet2, b
}

// appendList writes a quicklist of listpack nodes of at most
// list-max-listpack-size bytes each, as Redis 7.0 holds and saves a list.
func appendList(b []byte, members [][]byte) (byte, []byte) {
	var nodes []listpack
	var lp listpack
	for _, m := range members {
		if lp.n > 0 && lp.sizeWith(m) > listMaxListpackSize {
			nodes = append(nodes, lp)
			lp = listpack{}
		}
		lp.append(m)
	}
	if lp.n > 0 {
		nodes = append(nodes, lp)
	}
	b = appendLen(b, uint64(len(nodes)))
	for i := range nodes {
		b = appendLen(b, containerPacked)
		b = appendString(b, nodes[i].bytes())
	}
	return typeListQuicklist2, b
}

// makeIntset is the intset of members if every one is a canonical
// integer: the narrowest width that holds them all, ascending, unique.
func makeIntset(members [][]byte) ([]byte, bool) {
	vs := make([]int64, 0, len(members))
	for _, m := range members {
		v, ok := redisnum.ParseInt(m)
		if !ok {
			return nil, false
		}
		vs = append(vs, v)
	}
	slices.Sort(vs)
	vs = slices.Compact(vs)
	width := 2
	for _, v := range vs {
		switch {
		case v < math.MinInt32 || v > math.MaxInt32:
			width = 8
		case (v < math.MinInt16 || v > math.MaxInt16) && width < 4:
			width = 4
		}
	}
	b := make([]byte, 8, 8+width*len(vs))
	binary.LittleEndian.PutUint32(b, uint32(width))
	binary.LittleEndian.PutUint32(b[4:], uint32(len(vs)))
	for _, v := range vs {
		switch width {
		case 2:
			b = binary.LittleEndian.AppendUint16(b, uint16(v))
		case 4:
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		default:
			b = binary.LittleEndian.AppendUint64(b, uint64(v))
		}
	}
	return b, true
}
