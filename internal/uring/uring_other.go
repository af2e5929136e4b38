//go:build !linux

package uring

import "errors"

// Ring exists only on Linux; New says so elsewhere.
type Ring struct{}

// ErrFull is what Recv and Send return when the ring is full.
var ErrFull = errors.New("uring: submission queue full")

var errUnsupported = errors.New("uring: io_uring is Linux only")

// New reports that there is no io_uring here.
func New(uint32) (*Ring, error) { return nil, errUnsupported }

func (*Ring) Close() error                             { return errUnsupported }
func (*Ring) Recv(int, []byte, uint64) error           { return errUnsupported }
func (*Ring) Send(int, []byte, uint64) error           { return errUnsupported }
func (*Ring) Queued() int                              { return 0 }
func (*Ring) Submit(func(tag uint64, res int32)) error { return errUnsupported }
