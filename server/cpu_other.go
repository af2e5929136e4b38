//go:build !unix

package server

import "time"

// cpuTimes is not known on this platform: INFO's cpu section is empty.
func cpuTimes() (sys, user time.Duration, ok bool) { return 0, 0, false }
