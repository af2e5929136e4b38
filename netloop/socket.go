package netloop

import (
	"errors"
	"io"
	"net"
)

// socket is a connection's byte stream as its event loop uses it: nothing
// here waits. Read returns errWouldBlock when the socket has no input now;
// Write may take fewer bytes than given and return errWouldBlock when the
// socket is full. A TLS socket encrypts what it is given at once and keeps
// the ciphertext the socket did not take (Pending), sent by FlushPending.
type socket interface {
	Read(p []byte) (int, error)
	Write(p []byte) (int, error)
	Pending() int
	FlushPending() error
	// readsAhead: the socket may hold input that epoll does not see (a
	// TLS record decrypted ahead), so a read must go on until it would
	// block.
	readsAhead() bool
	// blocking returns a net.Conn on a duplicate of the descriptor, in
	// Go's poller, for the last replies and the linger of a connection
	// the loop closes (eventLoop.drop), and a writer for those
	// replies: the connection itself, or its TLS stream over it.
	blocking() (net.Conn, io.Writer, error)
}

// What a loop connection's reader returns when its socket has no more input
// for now (errWouldBlock), and its flush when the socket takes no more
// output (errOutputBlocked).
var (
	errWouldBlock    = errors.New("netloop: would block")
	errOutputBlocked = errors.New("netloop: output would block")
)
