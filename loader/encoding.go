package loader

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"time"
)

// The encoding of a Registration, one for every place one rests: the
// fleet's shared Redis (one hash field per prefix, see package cluster) and
// the snapshot (State). Rank first, so that a script can compare ranks
// without decoding:
//
//	version   20 decimal digits
//	replica   ReplicaIDLen bytes, the registering replica's id ("0"s for
//	          none)
//	fields    each a uvarint length and the bytes: "-" for a removal; else
//	          "+", url, timeout in ms, concurrency, batch, then each
//	          header's name and value. A registration without a batch
//	          field (an even count of fields) is a loader of batch 0, as
//	          replicas before batch loaders wrote it.
//
// The prefix is not in it: the fleet keeps it as the hash field's name,
// State beside it. Header values are in plain text: whoever can read where
// the bytes rest can read them.

// ReplicaIDLen is the length of a replica id in an encoded registration.
const ReplicaIDLen = 16

// RankLen is the length of an encoded registration's rank: its version
// and replica.
const RankLen = 20 + ReplicaIDLen

// NoReplica stands, in an encoded registration, for one made without a
// fleet.
const NoReplica = "0000000000000000"

// ErrBadRegistration is DecodeRegistration's error.
var ErrBadRegistration = errors.New("malformed loader registration")

// EncodeRegistration encodes reg, less its prefix. A replica id not
// ReplicaIDLen bytes long is written as NoReplica.
func EncodeRegistration(reg Registration) string {
	replica := reg.Replica
	if len(replica) != ReplicaIDLen {
		replica = NoReplica
	}
	b := fmt.Appendf(nil, "%020d%s", reg.Version, replica)
	if reg.Removed {
		return string(appendStrings(b, "-"))
	}
	fields := []string{"+", reg.URL, strconv.FormatInt(reg.Timeout.Milliseconds(), 10), strconv.Itoa(reg.Concurrency),
		strconv.Itoa(reg.Batch)}
	for _, h := range reg.Headers {
		fields = append(fields, h.Name, h.Value)
	}
	return string(appendStrings(b, fields...))
}

// DecodeRegistration decodes v, a registration of prefix that
// EncodeRegistration encoded.
func DecodeRegistration(prefix, v string) (Registration, error) {
	reg := Registration{Config: Config{Prefix: prefix}}
	if len(v) < RankLen {
		return reg, ErrBadRegistration
	}
	version, err := strconv.ParseUint(v[:20], 10, 64)
	if err != nil {
		return reg, ErrBadRegistration
	}
	reg.Version = version
	if r := v[20:RankLen]; r != NoReplica {
		reg.Replica = r
	}
	f, ok := parseStrings([]byte(v[RankLen:]))
	switch {
	case !ok || len(f) == 0:
		return reg, ErrBadRegistration
	case f[0] == "-" && len(f) == 1:
		reg.Removed = true
		return reg, nil
	case f[0] != "+" || len(f) < 4:
		return reg, ErrBadRegistration
	}
	ms, err1 := strconv.ParseInt(f[2], 10, 64)
	n, err2 := strconv.Atoi(f[3])
	headers, batch, err3 := 4, 0, error(nil)
	if len(f)%2 != 0 { // with a batch field
		batch, err3 = strconv.Atoi(f[4])
		headers = 5
	}
	if err1 != nil || err2 != nil || err3 != nil {
		return reg, ErrBadRegistration
	}
	reg.URL, reg.Timeout, reg.Concurrency, reg.Batch = f[1], time.Duration(ms)*time.Millisecond, n, batch
	for i := headers; i < len(f); i += 2 {
		reg.Headers = append(reg.Headers, Header{Name: f[i], Value: f[i+1]})
	}
	return reg, nil
}

// appendStrings appends each of ss to b as a uvarint length and its bytes.
func appendStrings(b []byte, ss ...string) []byte {
	for _, s := range ss {
		b = binary.AppendUvarint(b, uint64(len(s)))
		b = append(b, s...)
	}
	return b
}

// parseStrings is the inverse of appendStrings.
func parseStrings(b []byte) ([]string, bool) {
	var ss []string
	for len(b) > 0 {
		l, n := binary.Uvarint(b)
		if n <= 0 || l > uint64(len(b)-n) {
			return nil, false
		}
		ss = append(ss, string(b[n:n+int(l)]))
		b = b[n+int(l):]
	}
	return ss, true
}
