package rdb

import (
	"errors"
	"fmt"
)

// Kind is the type of an Entry's value.
type Kind uint8

const (
	KindString Kind = iota // Value
	KindList               // Members, head first
	KindSet                // Members
	KindZSet               // Scored
	KindHash               // Pairs
	KindStream             // Stream
)

var kindNames = [...]string{"string", "list", "set", "zset", "hash", "stream"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", k)
}

// Scored is one member of a sorted set.
type Scored struct {
	Member []byte
	Score  float64
}

// Entry is one key with its value and what the RDB keeps beside it. Only
// the field of its Kind is used. Entries a Reader returns own their bytes.
type Entry struct {
	DB   int
	Key  []byte
	Kind Kind
	// Value is a string's bytes.
	Value []byte
	// Members are a list's elements in order, or a set's members.
	Members [][]byte
	// Scored are a sorted set's members. Redis writes a big sorted set
	// greatest first, so the Writer takes them in ascending order (score,
	// then member) and writes them as Redis would; the Reader returns them
	// in the file's order.
	Scored []Scored
	// Pairs are a hash's fields and values: field, value, field, value...
	Pairs [][]byte
	// Stream is a stream's entries, metadata and consumer groups.
	Stream *Stream
	// ExpireAt is the key's deadline in unix milliseconds; 0 is none.
	ExpireAt int64
	// Idle (LRU idle seconds) and Freq (LFU counter) are written when their
	// Has flags are set, as Redis writes them under an LRU or LFU
	// maxmemory-policy.
	Idle    int64
	HasIdle bool
	Freq    uint8
	HasFreq bool
	// Plain, on write, asks for a collection's big encoding even when it
	// is small enough for the compact one, as Redis keeps a hash, set or
	// sorted set in its big form once it has left the compact one.
	Plain bool
}

// AuxField is an AUX field of the file's header: Redis writes redis-ver,
// redis-bits, ctime, used-mem and aof-base, and ignores fields it does not
// know.
type AuxField struct {
	Key, Value string
}

// ErrCorrupt is wrapped by every error about a malformed file or value:
// errors.Is(err, ErrCorrupt) tells bad input from an I/O error.
var ErrCorrupt = errors.New("rdb: corrupt")

// ErrChecksum is wrapped (with ErrCorrupt) when the CRC64 footer does not
// match the file.
var ErrChecksum = errors.New("rdb: checksum mismatch")

// UnsupportedError is a value of a type this server does not have (a
// module's value, a function library), refused by name.
type UnsupportedError struct {
	Key  string // the key, or "" for a function library or module AUX data
	Type string // "stream", "module", "function"
}

func (e *UnsupportedError) Error() string {
	if e.Key == "" {
		return fmt.Sprintf("rdb: the file holds %s data, which this server does not have", e.Type)
	}
	return fmt.Sprintf("rdb: key %q holds a %s, a type this server does not have", e.Key, e.Type)
}

// corrupt is an ErrCorrupt naming what was wrong and where.
func corrupt(off int64, format string, args ...any) error {
	return fmt.Errorf("%w at byte %d: %s", ErrCorrupt, off, fmt.Sprintf(format, args...))
}
