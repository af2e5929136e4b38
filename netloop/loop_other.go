//go:build !linux

package netloop

import (
	"crypto/tls"
	"errors"
	"io"
	"net"
	"sync/atomic"
)

// The event loops are epoll's: elsewhere New refuses to serve.
var errNoEventLoop = errors.New("netloop: serving needs Linux (epoll)")

type eventLoop struct {
	attend  []*Conn
	waiting atomic.Int64
}

func newEventLoop(*Loops) (*eventLoop, error) { return nil, errNoEventLoop }

func (*eventLoop) adopt(*Conn, net.Conn) error { return errNoEventLoop }
func (*eventLoop) post(*[]*Conn, *Conn)        {}
func (*eventLoop) notify()                     {}
func (*eventLoop) force()                      {}
func (*eventLoop) run()                        {}
func (*eventLoop) close()                      {}

func (c *Conn) Wake() {}

func (c *Conn) Handshake(net.Conn, *tls.Config) error { return errNoEventLoop }

type tlsStream struct {
	net.Conn
	nc net.Conn
	fd int
}

type tlsSocket struct {
	conn   io.Writer
	stream *tlsStream
}

func (*tlsSocket) Read([]byte) (int, error)               { return 0, errNoEventLoop }
func (*tlsSocket) Write([]byte) (int, error)              { return 0, errNoEventLoop }
func (*tlsSocket) Pending() int                           { return 0 }
func (*tlsSocket) FlushPending() error                    { return errNoEventLoop }
func (*tlsSocket) readsAhead() bool                       { return false }
func (*tlsSocket) blocking() (net.Conn, io.Writer, error) { return nil, nil, errNoEventLoop }

type loopReader struct{ c *Conn }

func (loopReader) Read([]byte) (int, error) { return 0, errNoEventLoop }
