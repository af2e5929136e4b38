//go:build race

package engine

// raceEnabled is true when the race detector, which slows the store's
// bookkeeping about tenfold, is on.
const raceEnabled = true
