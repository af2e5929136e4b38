//go:build unix

package slab

import "syscall"

// mapMemory returns n bytes of zeroed memory outside Go's heap: the
// collector neither scans it nor counts it towards its next cycle, so slabs
// do not let garbage grow with them, and unmapping gives the pages back to
// the system at once.
func mapMemory(n int) ([]byte, error) {
	return syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
}

func unmapMemory(b []byte) { syscall.Munmap(b) }
