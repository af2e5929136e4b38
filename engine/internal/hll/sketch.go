package hll

import "math"

// sketch is an HLL being edited: b[:n] is the value. A sparse sketch keeps
// sparseSlack bytes past n, zero at b[n], as Redis's string does (its room
// for an opcode split, and its terminating zero): an opcode cut off at the
// end reads them as Redis does, so that a damaged value is edited the same
// way on both servers.
type sketch struct {
	b []byte
	n int
}

// load copies v into a new sketch.
func load(v []byte) *sketch {
	b := make([]byte, len(v)+sparseSlack)
	copy(b, v)
	return &sketch{b: b, n: len(v)}
}

func (s *sketch) bytes() []byte { return s.b[:s.n:s.n] }

func (s *sketch) dense() bool { return s.b[4] == encDense }

// invalidate marks the cached cardinality stale.
func (s *sketch) invalidate() { s.b[cardOffset+7] |= staleBit }

// resize changes the value's length by delta and writes the terminating
// zero, as sdsIncrLen does.
func (s *sketch) resize(delta int) {
	s.n += delta
	s.b[s.n] = 0
}

// set raises register index to count if it is lower, and reports whether
// it did; ErrCorrupt if the sparse opcodes do not reach the register or
// cannot be made dense.
func (s *sketch) set(index int, count uint8, sparseMax int) (bool, error) {
	if s.dense() {
		regs := s.b[HeaderSize:DenseSize]
		if getReg(regs, index) >= count {
			return false, nil
		}
		setReg(regs, index, count)
		return true, nil
	}
	return s.sparseSet(index, count, sparseMax)
}

// sparseSet is set of a sparse sketch, which it edits in place as Redis
// does (the same opcodes, the same merges of neighbours), or promotes to
// dense when count is past a VAL's or the value would grow past
// sparseMax.
func (s *sketch) sparseSet(index int, count uint8, sparseMax int) (bool, error) {
	if count > sparseValMax {
		return s.promote(index, count)
	}
	if len(s.b) < s.n+sparseSlack {
		s.b = append(s.b, make([]byte, s.n+sparseSlack-len(s.b))...)
	}
	b := s.b
	// Find the opcode covering index: at p, covering first..first+span-1,
	// after the opcode at prev (-1: none).
	p, end := HeaderSize, s.n
	first, span, prev := 0, 0, -1
	for p < end {
		oplen := 1
		switch op := b[p]; {
		case isZero(op):
			span = zeroLen(op)
		case isVal(op):
			span = valLen(op)
		default:
			span = xzeroLen(op, b[p+1])
			oplen = 2
		}
		if index <= first+span-1 {
			break
		}
		prev = p
		p += oplen
		first += span
	}
	if span == 0 || p >= end {
		return false, ErrCorrupt
	}
	next := p + 1
	if isXZero(b[p]) {
		next = p + 2
	}
	if next >= end {
		next = -1
	}
	op := b[p]
	switch {
	case isVal(op) && valValue(op) >= int(count):
		return false, nil
	case isVal(op) && valLen(op) == 1, isZero(op) && zeroLen(op) == 1:
		b[p] = valOp(int(count), 1)
	default:
		// Split the opcode into up to three: what comes before index,
		// index, what comes after.
		last := first + span - 1
		seq := make([]byte, 0, 5)
		if isVal(op) {
			cur := valValue(op)
			if index != first {
				seq = append(seq, valOp(cur, index-first))
			}
			seq = append(seq, valOp(int(count), 1))
			if index != last {
				seq = append(seq, valOp(cur, last-index))
			}
		} else {
			if index != first {
				seq = zeros(seq, index-first)
			}
			seq = append(seq, valOp(int(count), 1))
			if index != last {
				seq = zeros(seq, last-index)
			}
		}
		oldLen := 1
		if isXZero(op) {
			oldLen = 2
		}
		delta := len(seq) - oldLen
		if delta > 0 && s.n+delta > sparseMax {
			return s.promote(index, count)
		}
		if delta != 0 && next >= 0 {
			copy(b[next+delta:], b[next:end])
		}
		s.resize(delta)
		copy(b[p:], seq)
		end += delta
	}
	s.mergeVals(prev, end)
	s.invalidate()
	return true, nil
}

// mergeVals joins adjacent VAL opcodes of the same value whose runs fit
// one, scanning up to five opcodes from the one at from (-1: the first),
// as Redis does after an edit.
func (s *sketch) mergeVals(from, end int) {
	b, p := s.b, from
	if p < 0 {
		p = HeaderSize
	}
	for scan := 5; p < end && scan > 0; scan-- {
		switch {
		case isXZero(b[p]):
			p += 2
			continue
		case isZero(b[p]):
			p++
			continue
		}
		if p+1 < end && isVal(b[p+1]) {
			v1, v2 := valValue(b[p]), valValue(b[p+1])
			if n := valLen(b[p]) + valLen(b[p+1]); v1 == v2 && n <= sparseValMaxLen {
				b[p+1] = valOp(v1, n)
				copy(b[p:end], b[p+1:end+1])
				s.resize(-1)
				end--
				continue // the merged opcode may merge with the next
			}
		}
		p++
	}
}

// promote makes the sketch dense and sets register index to count, which
// a sparse sketch had to change for.
func (s *sketch) promote(index int, count uint8) (bool, error) {
	if err := s.toDense(); err != nil {
		return false, err
	}
	setReg(s.b[HeaderSize:DenseSize], index, count)
	return true, nil
}

// toDense converts a sparse sketch to dense, keeping the header but for
// the encoding; ErrCorrupt if its opcodes do not cover exactly the
// registers.
func (s *sketch) toDense() error {
	if s.dense() {
		return nil
	}
	d := make([]byte, DenseSize, DenseSize+sparseSlack)
	copy(d, s.b[:HeaderSize])
	d[4] = encDense
	regs := d[HeaderSize:]
	idx := 0
	walkSparse(s.b[HeaderSize:s.n], func(runLen, val int) bool {
		if val == 0 {
			idx += runLen
			return true
		}
		if idx+runLen > Registers {
			return false
		}
		for ; runLen > 0; runLen-- {
			setReg(regs, idx, uint8(val))
			idx++
		}
		return true
	})
	if idx != Registers {
		return ErrCorrupt
	}
	s.b, s.n = d[:cap(d)], DenseSize
	return nil
}

// histogram counts the registers of each value.
type histogram [64]int

func (h *histogram) dense(regs []byte) {
	for i := range Registers {
		h[getReg(regs, i)]++
	}
}

// sparse adds the sparse opcodes b and reports whether they cover exactly
// the registers.
func (h *histogram) sparse(b []byte) bool {
	idx := 0
	walkSparse(b, func(runLen, val int) bool {
		idx += runLen
		h[val] += runLen
		return true
	})
	return idx == Registers
}

// estimate is Ertl's improved estimator ("New cardinality estimation
// algorithms for HyperLogLog sketches", arXiv:1702.01284), computed in the
// order Redis computes it so that the rounding is the same.
func (h *histogram) estimate() uint64 {
	const m = float64(Registers)
	z := m * tau((m-float64(h[hashBits+1]))/m)
	for j := hashBits; j >= 1; j-- {
		z += float64(h[j])
		z *= 0.5
	}
	z += m * sigma(float64(h[0])/m)
	return uint64(math.Round(alphaInf * m * m / z))
}

func sigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		zPrime := z
		z += x * y
		y += y
		if zPrime == z {
			return z
		}
	}
}

func tau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		zPrime := z
		y *= 0.5
		d := 1 - x
		z -= d * d * y
		if zPrime == z {
			return z / 3
		}
	}
}
