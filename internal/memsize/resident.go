package memsize

import (
	"os"
	"strconv"
	"strings"
)

// Resident reads the process's resident memory from /proc/self/statm: all
// of it, and the part that is file-backed (the binary and libraries). ok
// is false where /proc cannot tell.
func Resident() (total, file int64, ok bool) {
	data, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, 0, false
	}
	fields := strings.Fields(string(data))
	if len(fields) < 3 {
		return 0, 0, false
	}
	resident, err1 := strconv.ParseInt(fields[1], 10, 64)
	shared, err2 := strconv.ParseInt(fields[2], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	page := int64(os.Getpagesize())
	return resident * page, shared * page, true
}
