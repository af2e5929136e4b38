//go:build !unix

package rusage

import "time"

// CPU is not known on this platform: INFO's cpu section is empty.
func CPU() (sys, user time.Duration, ok bool) { return 0, 0, false }
