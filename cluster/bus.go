package cluster

import (
	"encoding/binary"
	"errors"
)

// Kinds of message on the event channel. Every replica publishes and hears
// all of them; a replica ignores its own.
const (
	// msgWrite: a client wrote or deleted keys on the sender; drop local
	// copies and acknowledge on the sender's ack channel.
	msgWrite byte = 'w'
	// msgFlush: a client flushed the channel's database on the sender
	// (FLUSHDB); flush it and acknowledge.
	msgFlush byte = 'F'
	// msgFlushAll: a client ran FLUSHALL on the sender (on database 0's
	// channel); flush every database and acknowledge.
	msgFlushAll byte = 'A'
	// msgFilled: a lease holder published a value of a key; followers look
	// again, other replicas drop their copy if it is stale (a fresh one may
	// be the announced value itself).
	msgFilled byte = 'f'
	// msgFailed: a lease holder published a failure; followers look again.
	msgFailed byte = 'x'
	// msgHello: the sender just subscribed; peers answer with a beat so it
	// learns of them at once.
	msgHello byte = 'H'
	// msgBeat: the sender is alive.
	msgBeat byte = 'h'
	// msgBye: the sender is shutting down.
	msgBye byte = 'b'
	// msgAck, on an ack channel only: the sender applied the invalidations
	// whose ids are the message's keys, in decimal.
	msgAck byte = 'a'
	// msgPublish and msgSPublish, on the pub/sub channel only: a client
	// ran PUBLISH or SPUBLISH on the sender; the keys are the channel and
	// the message.
	msgPublish  byte = 'p'
	msgSPublish byte = 's'
	// msgLoader: the sender stored a loader registration; the keys are the
	// prefix and the registration as stored (see loaders.go). Receivers
	// apply it if it outranks theirs.
	msgLoader byte = 'L'
	// msgPurge: a client ran PURGE.TAG on the sender, which purged the
	// shared tier; the keys are "1" for SOFT or "0", the number of tags,
	// the tags, then keys the shared tier held with them (purge.go).
	// Receivers purge their own store and acknowledge.
	msgPurge byte = 'T'
)

// replicaIDLen is the length of a replica id: 8 random bytes in hex.
const replicaIDLen = 16

// message is one event. It is binary-safe: keys are any bytes.
type message struct {
	kind   byte
	sender string
	id     uint64 // matches an invalidation with its acknowledgements
	keys   []string
}

func (m message) encode() string {
	b := make([]byte, 0, 1+replicaIDLen+binary.MaxVarintLen64+16*len(m.keys))
	b = append(b, m.kind)
	b = append(b, m.sender...)
	b = binary.AppendUvarint(b, m.id)
	return string(appendStrings(b, m.keys))
}

// appendStrings appends each of ss as a uvarint length and its bytes.
func appendStrings(b []byte, ss []string) []byte {
	for _, s := range ss {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

// parseStrings is the inverse of appendStrings.
func parseStrings(b []byte) ([]string, error) {
	var ss []string
	for len(b) > 0 {
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return nil, errBadMessage
		}
		ss = append(ss, string(b[n:n+int(l)]))
		b = b[n+int(l):]
	}
	return ss, nil
}

var errBadMessage = errors.New("cluster: malformed event message")

func decodeMessage(s string) (m message, err error) {
	if len(s) < 1+replicaIDLen+1 {
		return message{}, errBadMessage
	}
	m = message{kind: s[0], sender: s[1 : 1+replicaIDLen]}
	rest := []byte(s[1+replicaIDLen:])
	id, n := binary.Uvarint(rest)
	if n <= 0 {
		return message{}, errBadMessage
	}
	m.id = id
	if m.keys, err = parseStrings(rest[n:]); err != nil {
		return message{}, err
	}
	return m, nil
}
