// Package digest is Redis's DEBUG DIGEST and DIGEST-VALUE: SHA1 digests
// of a value and of a whole dataset, mixed as Redis's debug.c mixes
// them, so that two servers holding the same data agree.
package digest

import (
	"crypto/sha1"
	"encoding/binary"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/internal/redisnum"
)

// Redis's type numbers, which its digest mixes in.
var digestTypes = map[engine.Type]uint32{
	engine.TypeString: 0, engine.TypeList: 1, engine.TypeSet: 2, engine.TypeZSet: 3, engine.TypeHash: 4,
}

// xorItemDigest mixes a value into digest as Redis's xorObjectDigest does:
// its type, then its elements (in order for a list, xored for the
// unordered types), then whether it has a deadline.
func xorItemDigest(digest []byte, it *engine.SnapshotItem) {
	var typ [4]byte
	binary.BigEndian.PutUint32(typ[:], digestTypes[it.Type])
	mixDigest(digest, typ[:])
	switch it.Type {
	case engine.TypeString:
		mixDigest(digest, it.Value)
	case engine.TypeList:
		for _, e := range it.Members {
			mixDigest(digest, e)
		}
	case engine.TypeSet:
		for _, m := range it.Members {
			xorDigest(digest, m)
		}
	case engine.TypeZSet:
		for _, sm := range it.Scored {
			var e [20]byte
			mixDigest(e[:], sm.Member)
			mixDigest(e[:], redisnum.AppendG(nil, sm.Score, 17))
			xorDigest(digest, e[:])
		}
	case engine.TypeHash:
		for i := 0; i+1 < len(it.Pairs); i += 2 {
			var e [20]byte
			mixDigest(e[:], it.Pairs[i])
			mixDigest(e[:], it.Pairs[i+1])
			xorDigest(digest, e[:])
		}
	}
	if it.StaleUntil != 0 {
		xorDigest(digest, []byte("!!expire!!"))
	}
}

// xorDigest xors SHA1(data) into digest.
func xorDigest(digest, data []byte) {
	h := sha1.Sum(data)
	for i := range h {
		digest[i] ^= h[i]
	}
}

// mixDigest makes digest SHA1(digest xor SHA1(data)), which, unlike
// xorDigest, depends on the order of what is mixed.
func mixDigest(digest, data []byte) {
	xorDigest(digest, data)
	h := sha1.Sum(digest[:20])
	copy(digest, h[:])
}

// Item is the digest of one value, as Redis's xorObjectDigest makes it.
func Item(it *engine.SnapshotItem) [20]byte {
	var d [20]byte
	xorItemDigest(d[:], it)
	return d
}

// Store is Redis's digest of a whole dataset: for each database holding
// keys, its number mixed in, then the xor of its keys' digests, so that
// their order does not matter; zeros when empty.
func Store(st *engine.Store) [20]byte {
	var final [20]byte
	for n := range st.Databases() {
		first := true
		_ = st.DB(n).Snapshot(func(items []engine.SnapshotItem) error {
			for i := range items {
				if first {
					var db [4]byte
					binary.BigEndian.PutUint32(db[:], uint32(n))
					mixDigest(final[:], db[:])
					first = false
				}
				var d [20]byte
				mixDigest(d[:], items[i].Key)
				xorItemDigest(d[:], &items[i])
				xorDigest(final[:], d[:])
			}
			return nil
		})
	}
	return final
}
