// Package uring batches socket reads and writes through Linux's io_uring:
// many sends or receives, one system call.
//
// An event loop that serves many connections at pipeline depth 1 makes a
// read and a write per request. A Ring takes the reads (or the writes) of
// every connection ready in a loop turn and makes them in one
// io_uring_enter, which saves each call's entry into the kernel and exit
// from it: a few percent of what a request costs on loopback, where the
// TCP work itself is most of it.
//
// A Ring is for non-blocking sockets only, and never waits on one: every
// operation carries MSG_DONTWAIT, so the kernel completes it at once
// (-EAGAIN when the socket has no input or no room), while Submit runs.
// The buffers given to Recv and Send need only live until Submit returns.
// A Ring is used by one goroutine at a time; it may move between threads.
// Linux only: elsewhere the package is empty.
package uring
