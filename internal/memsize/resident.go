package memsize

import (
	"os"
	"sync"
)

// statm is /proc/self/statm, opened once: each Resident is then one pread,
// where opening it each time cost ten system calls (Go's poller tries,
// and fails, to take a /proc file), read every 10 ms by a store near its
// bound.
var statm struct {
	once sync.Once
	f    *os.File // nil where /proc cannot tell
}

// Resident reads the process's resident memory from /proc/self/statm: all
// of it, and the part that is file-backed (the binary and libraries). ok
// is false where /proc cannot tell. It is safe for concurrent use.
func Resident() (total, file int64, ok bool) {
	statm.once.Do(func() { statm.f, _ = os.Open("/proc/self/statm") })
	if statm.f == nil {
		return 0, 0, false
	}
	var buf [128]byte
	n, _ := statm.f.ReadAt(buf[:], 0) // io.EOF with the whole file
	// size resident shared text lib data dt, in pages
	fields := [3]int64{}
	i := 0
	for f := range fields {
		for i < n && buf[i] == ' ' {
			i++
		}
		start := i
		for i < n && buf[i] >= '0' && buf[i] <= '9' {
			fields[f] = fields[f]*10 + int64(buf[i]-'0')
			i++
		}
		if i == start {
			return 0, 0, false
		}
	}
	page := int64(os.Getpagesize())
	return fields[1] * page, fields[2] * page, true
}
