//go:build unix

package rusage

import "testing"

// TestCPU: the process's CPU time is known, and grows with work done.
func TestCPU(t *testing.T) {
	sys0, user0, ok := CPU()
	if !ok {
		t.Fatal("CPU() not known on a unix")
	}
	x := 0
	for i := range 50_000_000 {
		x ^= i * i
	}
	sys1, user1, ok := CPU()
	if !ok || sys1+user1 <= sys0+user0 || x == 1 {
		t.Fatalf("CPU time did not grow with work: %v+%v, then %v+%v", sys0, user0, sys1, user1)
	}
}
