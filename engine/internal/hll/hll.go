// Package hll is Redis's HyperLogLog in Redis's own representation: a
// string that starts with a 16-byte header ("HYLL", the encoding, three
// unused bytes, the cached cardinality in 8 little-endian bytes whose top
// bit says the cache is stale) followed by 16384 registers, either dense
// (6 bits each, 12288 bytes) or sparse (a run-length code of ZERO, XZERO
// and VAL opcodes). Elements are hashed with MurmurHash64A and Redis's
// seed, and counted with Ertl's improved estimator, as Redis 7.0 does, so
// that a value moves between redis-server and this package byte for byte
// and counts the same on both.
//
// Every function takes a value without modifying it and returns a new one.
package hll

import (
	"errors"
	"math/bits"
)

// The representation's constants, as Redis defines them.
const (
	// HeaderSize is the length of the header before the registers.
	HeaderSize = 16
	// Registers is how many registers an HLL has (2^14).
	Registers = 1 << precision
	// DenseSize is the exact length of a dense HLL.
	DenseSize = HeaderSize + (Registers*regBits+7)/8

	precision = 14
	hashBits  = 64 - precision // the bits of the hash that count leading zeros
	regBits   = 6
	regMax    = 1<<regBits - 1

	encDense  = 0
	encSparse = 1

	// The sparse opcodes' limits.
	sparseValMax      = 32
	sparseValMaxLen   = 4
	sparseZeroMaxLen  = 64
	sparseXZeroMaxLen = 16384

	seed = 0xadc83b19

	cardOffset  = 8
	staleBit    = 0x80 // in the cached cardinality's last byte
	alphaInf    = 0.721347520444481703680
	sparseSlack = 4 // room past a sparse value: see sketch
)

// The errors of a value that is not an HLL, and of one whose registers are
// corrupt; their texts are Redis's replies.
var (
	ErrNotHLL  = errors.New("WRONGTYPE Key is not a valid HyperLogLog string value.")
	ErrCorrupt = errors.New("INVALIDOBJ Corrupted HLL object detected")
)

// Check reports ErrNotHLL unless v has an HLL's header: the magic, a known
// encoding and, if dense, the exact dense length. A sparse value's opcodes
// are only checked by the operations that walk them.
func Check(v []byte) error {
	if len(v) < HeaderSize || string(v[:4]) != "HYLL" || v[4] > encSparse {
		return ErrNotHLL
	}
	if v[4] == encDense && len(v) != DenseSize {
		return ErrNotHLL
	}
	return nil
}

// Empty returns a new empty HLL: sparse, one XZERO opcode for every
// register, a valid cached cardinality of zero.
func Empty() []byte {
	v := make([]byte, HeaderSize, HeaderSize+2)
	copy(v, "HYLL")
	v[4] = encSparse
	return append(v, xzero(Registers)...)
}

// Add adds elems to the HLL v (nil: a new one), and reports whether any
// register changed (or v was new), which PFADD replies. A sparse HLL is
// promoted to dense when a register needs a value past the sparse code's
// or the sparse value would grow past sparseMax bytes
// (hll-sparse-max-bytes). Unchanged, next is v.
func Add(v []byte, elems [][]byte, sparseMax int) (next []byte, changed bool, err error) {
	if v == nil {
		v, changed = Empty(), true
	} else if err := Check(v); err != nil {
		return nil, false, err
	}
	s := load(v)
	for _, e := range elems {
		index, count := patLen(e)
		set, err := s.set(index, count, sparseMax)
		if err != nil {
			return nil, false, err
		}
		changed = changed || set
	}
	if !changed {
		return v, false, nil
	}
	s.invalidate()
	return s.bytes(), true, nil
}

// Count returns the HLL v's estimated cardinality: the cached one if it is
// valid, else the estimate, with next the value with it cached (nil when
// the cache was used). A sparse value whose opcodes do not cover exactly
// the registers is ErrCorrupt.
func Count(v []byte) (card uint64, next []byte, err error) {
	if err := Check(v); err != nil {
		return 0, nil, err
	}
	if v[cardOffset+7]&staleBit == 0 {
		return le64(v[cardOffset:]), nil, nil
	}
	var hist histogram
	if v[4] == encDense {
		hist.dense(v[HeaderSize:])
	} else if !hist.sparse(v[HeaderSize:]) {
		return 0, nil, ErrCorrupt
	}
	card = hist.estimate()
	next = append(make([]byte, 0, len(v)), v...)
	for i := range 8 {
		next[cardOffset+i] = byte(card >> (8 * i))
	}
	return card, next, nil
}

// Max is a set of registers one byte each, the union of HLLs merged into it.
type Max [Registers]uint8

// Merge raises m's registers to v's and reports whether v is dense. It is
// ErrNotHLL if v is not an HLL, ErrCorrupt if its sparse opcodes do not
// cover exactly the registers.
func (m *Max) Merge(v []byte) (dense bool, err error) {
	if err := Check(v); err != nil {
		return false, err
	}
	if v[4] == encDense {
		regs := v[HeaderSize:]
		for i := range m {
			m[i] = max(m[i], getReg(regs, i))
		}
		return true, nil
	}
	i := 0
	ok := walkSparse(v[HeaderSize:], func(runLen, val int) bool {
		if val == 0 {
			i += runLen
			return true
		}
		if i+runLen > Registers {
			return false
		}
		for ; runLen > 0; runLen-- {
			m[i] = max(m[i], uint8(val))
			i++
		}
		return true
	})
	if !ok || i != Registers {
		return false, ErrCorrupt
	}
	return false, nil
}

// Count is the estimated cardinality of m's union.
func (m *Max) Count() uint64 {
	var hist histogram
	for _, r := range m {
		hist[r]++
	}
	return hist.estimate()
}

// Store writes m's registers into the HLL dst (nil: a new one), which was
// merged into m, as PFMERGE does: dense if dense (one of the merged HLLs
// was), else sparse for as long as it fits sparseMax; its cache is stale.
func (m *Max) Store(dst []byte, dense bool, sparseMax int) ([]byte, error) {
	if dst == nil {
		dst = Empty()
	}
	s := load(dst)
	if dense {
		if err := s.toDense(); err != nil {
			return nil, err
		}
	}
	for i, r := range m {
		if r != 0 {
			// As in Redis, a failure here is ignored: dst was merged,
			// so its opcodes are sound.
			_, _ = s.set(i, r, sparseMax)
		}
	}
	s.invalidate()
	return s.bytes(), nil
}

// ToDense returns the HLL v in the dense encoding, and whether it was
// converted (PFDEBUG TODENSE); a dense v is returned as it is.
func ToDense(v []byte) (next []byte, converted bool, err error) {
	if err := Check(v); err != nil {
		return nil, false, err
	}
	if v[4] == encDense {
		return v, false, nil
	}
	s := load(v)
	if err := s.toDense(); err != nil {
		return nil, false, err
	}
	return s.bytes(), true, nil
}

// DenseRegisters returns the registers of the dense HLL v (PFDEBUG GETREG).
func DenseRegisters(v []byte) []uint8 {
	regs := make([]uint8, Registers)
	for i := range regs {
		regs[i] = getReg(v[HeaderSize:], i)
	}
	return regs
}

// Opcode is one sparse opcode, decoded: Zero is true for ZERO and XZERO
// (Long for XZERO), Value and Len are the register value and run.
type Opcode struct {
	Zero, Long bool
	Value, Len int
}

// Decode returns the sparse HLL v's opcodes (PFDEBUG DECODE).
func Decode(v []byte) []Opcode {
	var ops []Opcode
	b := v[HeaderSize:]
	for p := 0; p < len(b); {
		switch op := b[p]; {
		case isZero(op):
			ops = append(ops, Opcode{Zero: true, Len: zeroLen(op)})
			p++
		case isXZero(op):
			ops = append(ops, Opcode{Zero: true, Long: true, Len: xzeroLen(op, byteAt(b, p+1))})
			p += 2
		default:
			ops = append(ops, Opcode{Value: valValue(op), Len: valLen(op)})
			p++
		}
	}
	return ops
}

// IsSparse reports whether the HLL v is sparse.
func IsSparse(v []byte) bool { return v[4] == encSparse }

// patLen hashes an element to its register and the length of the run of
// zero bits, plus one, in the rest of the hash: the register's candidate
// value, from 1 to hashBits+1.
func patLen(ele []byte) (index int, count uint8) {
	h := murmur64A(ele, seed)
	index = int(h & (Registers - 1))
	h >>= precision
	h |= 1 << hashBits // the run ends by hashBits+1
	return index, uint8(bits.TrailingZeros64(h)) + 1
}

// murmur64A is MurmurHash64A, endian-neutral as Redis's: 8-byte blocks
// are read little-endian.
func murmur64A(key []byte, seed uint32) uint64 {
	const m = 0xc6a4a7935bd1e995
	const r = 47
	h := uint64(seed) ^ uint64(len(key))*m
	for len(key) >= 8 {
		k := le64(key)
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
		key = key[8:]
	}
	if len(key) > 0 {
		for i := len(key) - 1; i >= 0; i-- {
			h ^= uint64(key[i]) << (8 * i)
		}
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

func le64(b []byte) uint64 {
	_ = b[7]
	return uint64(b[0]) | uint64(b[1])<<8 | uint64(b[2])<<16 | uint64(b[3])<<24 |
		uint64(b[4])<<32 | uint64(b[5])<<40 | uint64(b[6])<<48 | uint64(b[7])<<56
}

// getReg reads dense register i of regs. The last register ends inside
// the last byte, so a byte past regs would add nothing.
func getReg(regs []byte, i int) uint8 {
	b, fb := i*regBits/8, uint(i*regBits&7)
	v := uint(regs[b]) >> fb
	if b+1 < len(regs) {
		v |= uint(regs[b+1]) << (8 - fb)
	}
	return uint8(v & regMax)
}

// setReg writes val to dense register i of regs.
func setReg(regs []byte, i int, val uint8) {
	b, fb := i*regBits/8, uint(i*regBits&7)
	regs[b] &^= byte(regMax << fb)
	regs[b] |= byte(uint(val) << fb)
	if b+1 < len(regs) {
		regs[b+1] &^= byte(regMax >> (8 - fb))
		regs[b+1] |= byte(uint(val) >> (8 - fb))
	}
}

// The sparse opcodes: ZERO 00xxxxxx (1-64 zero registers), XZERO 01xxxxxx
// yyyyyyyy (1-16384), VAL 1vvvvvxx (1-4 registers of value 1-32).
func isZero(op byte) bool        { return op&0xc0 == 0 }
func isXZero(op byte) bool       { return op&0xc0 == 0x40 }
func isVal(op byte) bool         { return op&0x80 != 0 }
func zeroLen(op byte) int        { return int(op&0x3f) + 1 }
func xzeroLen(op, next byte) int { return int(op&0x3f)<<8 | int(next) + 1 }
func valValue(op byte) int       { return int(op>>2&0x1f) + 1 }
func valLen(op byte) int         { return int(op&3) + 1 }
func valOp(val, n int) byte      { return byte((val-1)<<2|(n-1)) | 0x80 }
func zeroOp(n int) byte          { return byte(n - 1) }
func xzero(n int) []byte         { return []byte{byte((n-1)>>8) | 0x40, byte(n - 1)} }
func byteAt(b []byte, i int) byte {
	// An XZERO cut off at the end reads the byte past it, which in Redis
	// is the string's terminating zero.
	if i < len(b) {
		return b[i]
	}
	return 0
}

// zeros appends to seq the opcode of a run of n zero registers.
func zeros(seq []byte, n int) []byte {
	if n > sparseZeroMaxLen {
		return append(seq, xzero(n)...)
	}
	return append(seq, zeroOp(n))
}

// walkSparse calls fn with each opcode's run and value (0 for ZERO and
// XZERO) until fn returns false, and reports whether it never did.
func walkSparse(b []byte, fn func(runLen, val int) bool) bool {
	for p := 0; p < len(b); {
		var ok bool
		switch op := b[p]; {
		case isZero(op):
			ok = fn(zeroLen(op), 0)
			p++
		case isXZero(op):
			ok = fn(xzeroLen(op, byteAt(b, p+1)), 0)
			p += 2
		default:
			ok = fn(valLen(op), valValue(op))
			p++
		}
		if !ok {
			return false
		}
	}
	return true
}
