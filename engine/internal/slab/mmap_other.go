//go:build !unix

package slab

// mapMemory falls back to Go's heap where there is no mmap.
func mapMemory(n int) ([]byte, error) { return make([]byte, n), nil }

func unmapMemory([]byte) {}
