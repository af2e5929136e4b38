package rdb

import (
	"errors"
	"math"
	"strconv"
)

// errEmpty is a collection with no members, which Redis skips when it
// loads a file (and refuses in a DUMP payload).
var errEmpty = errors.New("rdb: empty collection")

// errSkip is a value of a type this server lacks that the reader skipped.
var errSkip = errors.New("rdb: value skipped")

// value reads the value of type typ into e, as rdbLoadObject reads it.
// skip says to read past a module value (type 7) rather than refuse it.
func (s *source) value(typ byte, e *Entry, skip bool) error {
	start := s.off
	var err error
	switch typ {
	case typeString:
		e.Kind = KindString
		e.Value, err = s.str()
		return err
	case typeList:
		e.Kind = KindList
		e.Members, err = s.strings(1)
	case typeSet:
		e.Kind = KindSet
		e.Members, err = s.strings(1)
	case typeHash:
		e.Kind = KindHash
		e.Pairs, err = s.strings(2)
	case typeZSet, typeZSet2:
		e.Kind = KindZSet
		e.Scored, err = s.zset(typ == typeZSet2)
	case typeHashZipmap:
		e.Kind = KindHash
		e.Pairs, err = s.blob(eachZipmap, 2)
	case typeListZiplist:
		e.Kind = KindList
		e.Members, err = s.blob(eachZiplist, 1)
	case typeSetIntset:
		e.Kind = KindSet
		e.Members, err = s.blob(eachIntset, 1)
	case typeHashZiplist:
		e.Kind = KindHash
		e.Pairs, err = s.blob(eachZiplist, 2)
	case typeHashListpack:
		e.Kind = KindHash
		e.Pairs, err = s.blob(eachListpack, 2)
	case typeZSetZiplist, typeZSetListpack:
		e.Kind = KindZSet
		each := eachListpack
		if typ == typeZSetZiplist {
			each = eachZiplist
		}
		var flat [][]byte
		if flat, err = s.blob(each, 2); err == nil {
			e.Scored, err = scoredOf(flat, start)
		}
	case typeListQuicklist, typeListQuicklist2:
		e.Kind = KindList
		e.Members, err = s.quicklist(typ == typeListQuicklist2)
	case typeStreamListpacks, typeStream2:
		e.Kind = KindStream
		e.Stream, err = s.stream(typ == typeStream2)
		return err
	case typeModule, typeModule2:
		// A module value of the first kind says nothing of its own length,
		// so only the second kind can be read past.
		if !skip || typ == typeModule {
			return &UnsupportedError{Key: string(e.Key), Type: "module value"}
		}
		if _, err := s.plainLen("module id"); err != nil {
			return err
		}
		if err := s.skipModuleValue(); err != nil {
			return err
		}
		return errSkip
	default:
		return corrupt(start-1, "unknown value type %d", typ)
	}
	if err != nil {
		return err
	}
	if len(e.Members) == 0 && len(e.Pairs) == 0 && len(e.Scored) == 0 {
		return errEmpty
	}
	return nil
}

// strings reads a count of groups of per strings each.
func (s *source) strings(per int) ([][]byte, error) {
	n, err := s.count("collection")
	if err != nil {
		return nil, err
	}
	out := make([][]byte, 0, min(n, 1024)*per)
	var total uint64
	for i := 0; i < n*per; i++ {
		m, err := s.str()
		if err != nil {
			return nil, err
		}
		if total += uint64(len(m)); total > uint64(s.max) {
			return nil, corrupt(s.off, "collection past the bound of %d bytes", s.max)
		}
		out = append(out, m)
	}
	return out, nil
}

func (s *source) zset(binaryScores bool) ([]Scored, error) {
	n, err := s.count("sorted set")
	if err != nil {
		return nil, err
	}
	out := make([]Scored, 0, min(n, 1024))
	var total uint64
	for range n {
		m, err := s.str()
		if err != nil {
			return nil, err
		}
		if total += uint64(len(m)); total > uint64(s.max) {
			return nil, corrupt(s.off, "sorted set past the bound of %d bytes", s.max)
		}
		var f float64
		if binaryScores {
			f, err = s.binaryDouble()
		} else {
			f, err = s.textDouble()
		}
		if err != nil {
			return nil, err
		}
		if math.IsNaN(f) {
			return nil, corrupt(s.off, "sorted set with a NaN score")
		}
		out = append(out, Scored{Member: m, Score: f})
	}
	return out, nil
}

// textDouble is rdbLoadDoubleValue, the version-1 sorted set's score: a
// byte of length (253 NaN, 254 +inf, 255 -inf) and that many characters.
func (s *source) textDouble() (float64, error) {
	c, err := s.byte()
	if err != nil {
		return 0, err
	}
	switch c {
	case 253:
		return math.NaN(), nil
	case 254:
		return math.Inf(1), nil
	case 255:
		return math.Inf(-1), nil
	}
	p, err := s.take(uint64(c), "score")
	if err != nil {
		return 0, err
	}
	f, perr := strconv.ParseFloat(string(p), 64)
	if perr != nil {
		return 0, corrupt(s.off, "score %q", p)
	}
	return f, nil
}

// blob reads a string holding an encoded collection and decodes it whole;
// the count of its entries must be a multiple of per.
func (s *source) blob(each func([]byte, func([]byte)) (int, error), per int) ([][]byte, error) {
	start := s.off
	b, err := s.str()
	if err != nil {
		return nil, err
	}
	n, err := each(b, nil)
	if err != nil {
		return nil, at(err, start)
	}
	if n%per != 0 {
		return nil, corrupt(start, "encoded collection of %d entries, not a multiple of %d", n, per)
	}
	out := make([][]byte, 0, n)
	each(b, func(m []byte) { out = append(out, m) })
	return out, nil
}

// at places a blob's error at the blob's offset in the input.
func at(err error, off int64) error {
	return corrupt(off, "%v", errors.Unwrap(err))
}

func scoredOf(flat [][]byte, off int64) ([]Scored, error) {
	out := make([]Scored, 0, len(flat)/2)
	for i := 0; i+1 < len(flat); i += 2 {
		f, err := strconv.ParseFloat(string(flat[i+1]), 64)
		if err != nil || math.IsNaN(f) {
			return nil, corrupt(off, "sorted set score %q", flat[i+1])
		}
		out = append(out, Scored{Member: flat[i], Score: f})
	}
	return out, nil
}

// quicklist reads a list of nodes: ziplists (version 1) or, in version 2,
// listpacks and plain single elements.
func (s *source) quicklist(v2 bool) ([][]byte, error) {
	nodes, err := s.count("quicklist")
	if err != nil {
		return nil, err
	}
	var out [][]byte
	var total uint64
	for range nodes {
		container := uint64(containerPacked)
		if v2 {
			if container, err = s.plainLen("quicklist container"); err != nil {
				return nil, err
			}
		}
		start := s.off
		b, err := s.str()
		if err != nil {
			return nil, err
		}
		if total += uint64(len(b)); total > uint64(s.max) {
			return nil, corrupt(s.off, "list past the bound of %d bytes", s.max)
		}
		switch {
		case container == containerPlain && v2:
			out = append(out, b)
			continue
		case container != containerPacked:
			return nil, corrupt(start, "quicklist container %d", container)
		}
		each := eachZiplist
		if v2 {
			each = eachListpack
		}
		if _, err := each(b, nil); err != nil {
			return nil, at(err, start)
		}
		each(b, func(m []byte) { out = append(out, m) })
	}
	return out, nil
}

// Module value opcodes (src/rdb.h RDB_MODULE_OPCODE_*).
const (
	moduleEOF    = 0
	moduleSInt   = 1
	moduleUInt   = 2
	moduleFloat  = 3
	moduleDouble = 4
	moduleString = 5
)

// skipModuleValue reads past a module value's annotated opcodes up to its
// EOF, as redis-check-rdb does (rdbLoadCheckModuleValue).
func (s *source) skipModuleValue() error {
	for {
		op, err := s.plainLen("module opcode")
		if err != nil {
			return err
		}
		switch op {
		case moduleEOF:
			return nil
		case moduleSInt, moduleUInt:
			_, err = s.plainLen("module integer")
		case moduleFloat:
			_, err = s.fixed(4)
		case moduleDouble:
			_, err = s.fixed(8)
		case moduleString:
			_, err = s.str()
		default:
			return corrupt(s.off, "unknown module opcode %d", op)
		}
		if err != nil {
			return err
		}
	}
}
