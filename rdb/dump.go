package rdb

import (
	"encoding/binary"
	"errors"
)

// ErrDumpPayload is RESTORE's refusal of a payload whose footer is wrong:
// too short, of a later RDB version, or failing its checksum. Its text is
// Redis's reply.
var ErrDumpPayload = errors.New("DUMP payload version or checksum are wrong")

// dumpFooter is the RDB version (2 bytes) and the CRC64 (8 bytes).
const dumpFooter = 10

// Dump is DUMP's serialization of e's value: its type and value as a file
// holds them, the RDB version as two little-endian bytes, and the CRC64 of
// all that, little-endian (src/cluster.c, createDumpPayload). Strings
// are LZF-compressed as Redis compresses them, though not always to the
// same bytes (the compressor is not Redis's): each side restores the
// other's.
func Dump(e *Entry) []byte {
	b := []byte{0}
	typ, b := appendValue(b, e)
	b[0] = typ
	b = binary.LittleEndian.AppendUint16(b, Version)
	return binary.LittleEndian.AppendUint64(b, crcUpdate(0, b))
}

// ParseDump checks a DUMP payload's footer as Redis's verifyDumpPayload
// does, then decodes its value into an Entry without a key. A bad footer
// is ErrDumpPayload; a bad value (or an empty collection, which Redis
// refuses here) wraps ErrCorrupt; a module value is an
// *UnsupportedError. maxValue bounds the value as Options.MaxValue does.
func ParseDump(p []byte, maxValue int64) (*Entry, error) {
	if len(p) < dumpFooter {
		return nil, ErrDumpPayload
	}
	footer := p[len(p)-dumpFooter:]
	if binary.LittleEndian.Uint16(footer) > Version ||
		crcUpdate(0, p[:len(p)-8]) != binary.LittleEndian.Uint64(footer[2:]) {
		return nil, ErrDumpPayload
	}
	if maxValue <= 0 {
		maxValue = DefaultMaxValue
	}
	body := p[:len(p)-dumpFooter]
	s := bytesSource(body, maxValue)
	typ, err := s.byte()
	if err != nil {
		return nil, err
	}
	e := &Entry{}
	switch err := s.value(typ, e, false); {
	case errors.Is(err, errEmpty):
		return nil, corrupt(0, "an empty %s", e.Kind)
	case err != nil:
		return nil, err
	}
	return e, nil
}
