package rdb

import (
	"encoding/binary"
	"errors"

	"github.com/stampedeless/stampedeless/internal/crc64"
)

// ErrDumpPayload is RESTORE's refusal of a payload whose footer is wrong:
// too short, of a later RDB version, or failing its checksum. Its text is
// Redis's reply.
var ErrDumpPayload = errors.New("DUMP payload version or checksum are wrong")

// ErrNotFunction is FUNCTION RESTORE's refusal of a payload whose footer
// is right but that holds something other than libraries.
var ErrNotFunction = errors.New("given type is not a function")

// dumpFooter is the RDB version (2 bytes) and the CRC64 (8 bytes).
const dumpFooter = 10

// Dump is DUMP's serialization of e's value: its type and value as a file
// holds them, the RDB version as two little-endian bytes, and the CRC64 of
// all that, little-endian (src/cluster.c, createDumpPayload). Where the
// value's encoding is the one redis-server holds it in (see the package
// comment), the payload is redis-server's byte for byte, strings
// LZF-compressed as it compresses them.
func Dump(e *Entry) []byte {
	b := []byte{0}
	typ, b := appendValue(b, e)
	b[0] = typ
	return appendFooter(b)
}

// DumpFunctions is FUNCTION DUMP's payload for the libraries of codes:
// for each, the FUNCTION2 opcode and its code as an RDB string (as
// rdbSaveFunctions writes them), then the footer DUMP's payloads end with.
func DumpFunctions(codes []string) []byte {
	var b []byte
	for _, code := range codes {
		b = appendString(append(b, opFunction2), []byte(code))
	}
	return appendFooter(b)
}

// appendFooter appends the RDB version and the CRC64 of b with it.
func appendFooter(b []byte) []byte {
	b = binary.LittleEndian.AppendUint16(b, Version)
	return binary.LittleEndian.AppendUint64(b, crc64.Update(0, b))
}

// payloadBody checks a payload's footer as Redis's verifyDumpPayload does
// and returns what comes before it.
func payloadBody(p []byte) ([]byte, error) {
	if len(p) < dumpFooter {
		return nil, ErrDumpPayload
	}
	footer := p[len(p)-dumpFooter:]
	if binary.LittleEndian.Uint16(footer) > Version ||
		crc64.Update(0, p[:len(p)-8]) != binary.LittleEndian.Uint64(footer[2:]) {
		return nil, ErrDumpPayload
	}
	return p[:len(p)-dumpFooter], nil
}

// ParseDump checks a DUMP payload's footer as Redis's verifyDumpPayload
// does, then decodes its value into an Entry without a key. A bad footer
// is ErrDumpPayload; a bad value (or an empty collection, which Redis
// refuses here) wraps ErrCorrupt; a module value is an
// *UnsupportedError. maxValue bounds the value as Options.MaxValue does.
func ParseDump(p []byte, maxValue int64) (*Entry, error) {
	body, err := payloadBody(p)
	if err != nil {
		return nil, err
	}
	if maxValue <= 0 {
		maxValue = DefaultMaxValue
	}
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

// ParseFunctions checks a FUNCTION DUMP payload's footer and returns its
// libraries' code. A bad footer is ErrDumpPayload, anything but a library
// in it ErrNotFunction, a library's code that does not decode an error
// that wraps ErrCorrupt.
func ParseFunctions(p []byte) ([]string, error) {
	body, err := payloadBody(p)
	if err != nil {
		return nil, err
	}
	s := bytesSource(body, DefaultMaxValue)
	var codes []string
	for s.left > 0 {
		if op, _ := s.byte(); op != opFunction2 {
			return nil, ErrNotFunction
		}
		code, err := s.str()
		if err != nil {
			return nil, err
		}
		codes = append(codes, string(code))
	}
	return codes, nil
}
