//go:build unix

package server

import (
	"syscall"
	"time"
)

// cpuTimes is the process's system and user CPU time so far.
func cpuTimes() (sys, user time.Duration, ok bool) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0, false
	}
	return time.Duration(ru.Stime.Nano()), time.Duration(ru.Utime.Nano()), true
}
