package hll

import (
	"fmt"
	"math/rand/v2"
	"strconv"
)

// SelfTest checks, as Redis's PFSELFTEST does, that dense registers read
// back what was written, and that a sparse HLL and a dense one fed the
// same elements hold the same registers and count the same.
func SelfTest() error {
	rng := rand.New(rand.NewPCG(1, 2))
	regs := make([]byte, DenseSize-HeaderSize)
	var want Max
	for range 100 {
		for i := range want {
			want[i] = uint8(rng.IntN(regMax + 1))
			setReg(regs, i, want[i])
		}
		for i := range want {
			if got := getReg(regs, i); got != want[i] {
				return fmt.Errorf("Register error at %d", i)
			}
		}
	}
	sparse, dense := load(Empty()), load(Empty())
	if err := dense.toDense(); err != nil {
		return err
	}
	for i := range 20000 {
		index, count := patLen(strconv.AppendInt(nil, int64(i), 10))
		a, err := sparse.set(index, count, DenseSize)
		if err != nil {
			return err
		}
		b, _ := dense.set(index, count, DenseSize)
		if a != b {
			return fmt.Errorf("sparse and dense disagree on element %d", i)
		}
	}
	sv, _, _ := ToDense(sparse.bytes())
	for i, r := range DenseRegisters(sv) {
		if r != getReg(dense.b[HeaderSize:DenseSize], i) {
			return fmt.Errorf("sparse and dense registers differ at %d", i)
		}
	}
	return nil
}
