package main

import (
	"bytes"
	"errors"
	"fmt"
	"net"
	"runtime"
	"syscall"
)

// loopConn is one client of the event loop.
type loopConn struct {
	fd   int
	in   []byte // unparsed input; len is what has been read
	out  bytes.Buffer
	args [][]byte
	// waiting: the socket took only part of out; the loop listens for
	// EPOLLOUT instead of EPOLLIN until it drains.
	waiting bool
}

// serveEpoll runs a single-threaded event loop over non-blocking sockets:
// wait for readiness, read what a client sent, run every whole command in
// it, write the replies, as redis-server does.
func serveEpoll(addr string, s *store) error {
	// The loop is the only goroutine doing work; pinning it keeps the
	// runtime from moving it between threads.
	runtime.LockOSThread()
	lfd, err := listen(addr)
	if err != nil {
		return err
	}
	ep, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return fmt.Errorf("epoll_create1: %w", err)
	}
	if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, lfd, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(lfd)}); err != nil {
		return fmt.Errorf("epoll_ctl: %w", err)
	}
	conns := map[int]*loopConn{}
	closeConn := func(c *loopConn) {
		syscall.Close(c.fd) // also removes it from the epoll set
		delete(conns, c.fd)
	}
	events := make([]syscall.EpollEvent, 256)
	for {
		n, err := syscall.EpollWait(ep, events, -1)
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("epoll_wait: %w", err)
		}
		for _, ev := range events[:n] {
			fd := int(ev.Fd)
			if fd == lfd {
				accept(ep, lfd, conns)
				continue
			}
			c := conns[fd]
			if c == nil {
				continue
			}
			if ev.Events&syscall.EPOLLOUT != 0 && !c.flush(ep) {
				closeConn(c)
				continue
			}
			if ev.Events&(syscall.EPOLLIN|syscall.EPOLLHUP|syscall.EPOLLERR) != 0 && !c.waiting {
				if !c.readAndServe(s) || !c.flush(ep) {
					closeConn(c)
				}
			}
		}
	}
}

// listen opens a non-blocking IPv4 listening socket on addr.
func listen(addr string) (int, error) {
	ta, err := net.ResolveTCPAddr("tcp4", addr)
	if err != nil {
		return -1, err
	}
	fd, err := syscall.Socket(syscall.AF_INET, syscall.SOCK_STREAM|syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("socket: %w", err)
	}
	syscall.SetsockoptInt(fd, syscall.SOL_SOCKET, syscall.SO_REUSEADDR, 1)
	sa := &syscall.SockaddrInet4{Port: ta.Port}
	copy(sa.Addr[:], ta.IP.To4())
	if err := syscall.Bind(fd, sa); err != nil {
		return -1, fmt.Errorf("bind %s: %w", addr, err)
	}
	if err := syscall.Listen(fd, 511); err != nil {
		return -1, fmt.Errorf("listen: %w", err)
	}
	return fd, nil
}

// accept takes every pending connection into the loop.
func accept(ep, lfd int, conns map[int]*loopConn) {
	for {
		fd, _, err := syscall.Accept4(lfd, syscall.SOCK_NONBLOCK|syscall.SOCK_CLOEXEC)
		if err != nil {
			return // EAGAIN: none left; anything else: try at the next event
		}
		syscall.SetsockoptInt(fd, syscall.IPPROTO_TCP, syscall.TCP_NODELAY, 1)
		if err := syscall.EpollCtl(ep, syscall.EPOLL_CTL_ADD, fd, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(fd)}); err != nil {
			syscall.Close(fd)
			continue
		}
		conns[fd] = &loopConn{fd: fd, in: make([]byte, 0, 16<<10)}
	}
}

// readAndServe reads once and runs every whole command read so far. It
// reports false when the connection should close.
func (c *loopConn) readAndServe(s *store) bool {
	if len(c.in) == cap(c.in) {
		if cap(c.in) > 2*maxBulk {
			return false
		}
		c.in = append(c.in, make([]byte, cap(c.in))...)[:len(c.in)]
	}
	n, err := syscall.Read(c.fd, c.in[len(c.in):cap(c.in)])
	if errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EINTR) {
		return true
	}
	if err != nil || n == 0 {
		return false
	}
	c.in = c.in[:len(c.in)+n]
	off := 0
	for {
		args, used, err := parseCommand(c.in[off:], c.args[:0])
		if err != nil {
			return false
		}
		if used == 0 {
			break
		}
		s.do(&c.out, args)
		c.args = args
		off += used
	}
	c.in = c.in[:copy(c.in, c.in[off:])]
	return true
}

// flush writes the pending replies, asking for EPOLLOUT (and pausing reads)
// while the socket cannot take them all. It reports false when the
// connection should close.
func (c *loopConn) flush(ep int) bool {
	for c.out.Len() > 0 {
		n, err := syscall.Write(c.fd, c.out.Bytes())
		if errors.Is(err, syscall.EAGAIN) {
			if !c.waiting {
				c.waiting = true
				syscall.EpollCtl(ep, syscall.EPOLL_CTL_MOD, c.fd, &syscall.EpollEvent{Events: syscall.EPOLLOUT, Fd: int32(c.fd)})
			}
			return true
		}
		if errors.Is(err, syscall.EINTR) {
			continue
		}
		if err != nil {
			return false
		}
		c.out.Next(n)
	}
	c.out.Reset()
	if c.waiting {
		c.waiting = false
		syscall.EpollCtl(ep, syscall.EPOLL_CTL_MOD, c.fd, &syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: int32(c.fd)})
	}
	return true
}
