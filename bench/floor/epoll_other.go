//go:build !linux

package main

import "errors"

// serveEpoll exists only on Linux.
func serveEpoll(string, *store) error {
	return errors.New("-loop epoll: Linux only")
}
