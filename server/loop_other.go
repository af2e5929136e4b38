//go:build !linux

package server

import "errors"

// eventLoop exists only on Linux; elsewhere Options.EventLoop is refused.
type eventLoop struct{}

func newEventLoop(*Server) (*eventLoop, error) {
	return nil, errors.New("event loop: only on Linux")
}

func (*eventLoop) adopt(*Conn)        {}
func (*eventLoop) take(*Conn) bool    { return false }
func (*eventLoop) notify()            {}
func (*eventLoop) kill(*Conn)         {}
func (*eventLoop) run()               {}
func (*eventLoop) clientCount() int64 { return 0 }
