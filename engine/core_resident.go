package engine

import "github.com/stampedeless/stampedeless/internal/memsize"

// defaultFileResident is what fileResident assumes where /proc cannot tell:
// the server's binary, measured resident at about 14 MiB.
const defaultFileResident = 16 << 20

// fileResident is how much of the process's resident memory is file-backed
// (its binary and libraries), which neither Go's memory limit nor the
// arena counts.
func fileResident() int64 {
	if _, file, ok := memsize.Resident(); ok {
		return file
	}
	return defaultFileResident
}
