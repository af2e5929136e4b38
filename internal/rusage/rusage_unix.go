//go:build unix

package rusage

import (
	"syscall"
	"time"
)

// CPU is the process's system and user CPU time so far.
func CPU() (sys, user time.Duration, ok bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0, false
	}
	return time.Duration(ru.Stime.Nano()), time.Duration(ru.Utime.Nano()), true
}
