package uring

import (
	"errors"
	"fmt"
	"sync/atomic"
	"syscall"
	"unsafe"
)

// The io_uring ABI (include/uapi/linux/io_uring.h) as far as a Ring uses it.
const (
	sysSetup = 425
	sysEnter = 426

	setupSubmitAll   = 1 << 7 // go on submitting after an operation fails
	setupCoopTaskrun = 1 << 8 // no interrupt to run completion work: there is none left after Submit

	enterGetEvents = 1 << 0

	offSQRing = 0
	offCQRing = 0x8000000
	offSQEs   = 0x10000000

	opSend = 26
	opRecv = 27

	msgDontWait = syscall.MSG_DONTWAIT
)

type params struct {
	sqEntries, cqEntries, flags, sqThreadCPU, sqThreadIdle, features, wqFD uint32
	resv                                                                   [3]uint32
	sqOff                                                                  sqOffsets
	cqOff                                                                  cqOffsets
}

// sqOffsets is struct io_sqring_offsets: where the SQ ring's fields are
// in its mapping.
type sqOffsets struct {
	head, tail, ringMask, ringEntries, flags, dropped, array, resv1 uint32
	userAddr                                                        uint64
}

// cqOffsets is struct io_cqring_offsets, the CQ ring's.
type cqOffsets struct {
	head, tail, ringMask, ringEntries, overflow, cqes, flags, resv1 uint32
	userAddr                                                        uint64
}

// sqe is struct io_uring_sqe, 64 bytes.
type sqe struct {
	opcode, flags uint8
	ioprio        uint16
	fd            int32
	off, addr     uint64
	len, opFlags  uint32
	userData      uint64
	bufIndex      uint16
	personality   uint16
	spliceFDIn    int32
	addr3, pad    uint64
}

// cqe is struct io_uring_cqe, 16 bytes.
type cqe struct {
	userData uint64
	res      int32
	flags    uint32
}

// Ring is one io_uring. Its zero value is not usable: New makes one.
type Ring struct {
	fd      int
	mems    [3][]byte // the mapped rings, for Close
	sqTail  *uint32
	sqMask  uint32
	sqArray []uint32
	sqes    []sqe
	cqHead  *uint32
	cqTail  *uint32
	cqMask  uint32
	cqes    []cqe
	queued  uint32 // operations queued since the last Submit
}

// ErrFull is what Recv and Send return when the ring holds as many
// operations as it has room for: Submit them first.
var ErrFull = errors.New("uring: submission queue full")

// New returns a Ring with room for entries operations per Submit (a power
// of two, at most 4096), or an error when the kernel has no io_uring or
// does not allow it (a seccomp filter, io_uring_disabled). The setup
// flags it asks for need Linux 5.19 (older kernels refuse them), and
// every io_uring from 5.6 on has the send and receive operations, so a
// Ring that exists never has an operation refused as unknown.
func New(entries uint32) (*Ring, error) {
	p := params{flags: setupSubmitAll | setupCoopTaskrun}
	fd, _, errno := syscall.Syscall(sysSetup, uintptr(entries), uintptr(unsafe.Pointer(&p)), 0)
	if errno != 0 {
		return nil, fmt.Errorf("io_uring_setup: %w", errno)
	}
	r := &Ring{fd: int(fd)}
	sqSize := int(p.sqOff.array + p.sqEntries*4) // the array is the SQ ring's last part
	cqSize := int(p.cqOff.cqes + p.cqEntries*uint32(unsafe.Sizeof(cqe{})))
	sizes := [3]int{sqSize, cqSize, int(p.sqEntries) * int(unsafe.Sizeof(sqe{}))}
	offsets := [3]int64{offSQRing, offCQRing, offSQEs}
	for i := range r.mems {
		m, err := syscall.Mmap(r.fd, offsets[i], sizes[i], syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED|syscall.MAP_POPULATE)
		if err != nil {
			r.Close()
			return nil, fmt.Errorf("io_uring mmap: %w", err)
		}
		r.mems[i] = m
	}
	sq, cq := r.mems[0], r.mems[1]
	r.sqTail = (*uint32)(unsafe.Pointer(&sq[p.sqOff.tail]))
	r.sqMask = *(*uint32)(unsafe.Pointer(&sq[p.sqOff.ringMask]))
	r.sqArray = unsafe.Slice((*uint32)(unsafe.Pointer(&sq[p.sqOff.array])), p.sqEntries)
	r.sqes = unsafe.Slice((*sqe)(unsafe.Pointer(&r.mems[2][0])), p.sqEntries)
	r.cqHead = (*uint32)(unsafe.Pointer(&cq[p.cqOff.head]))
	r.cqTail = (*uint32)(unsafe.Pointer(&cq[p.cqOff.tail]))
	r.cqMask = *(*uint32)(unsafe.Pointer(&cq[p.cqOff.ringMask]))
	r.cqes = unsafe.Slice((*cqe)(unsafe.Pointer(&cq[p.cqOff.cqes])), p.cqEntries)
	return r, nil
}

// Close releases the ring.
func (r *Ring) Close() error {
	for i, m := range r.mems {
		if m != nil {
			syscall.Munmap(m)
			r.mems[i] = nil
		}
	}
	return syscall.Close(r.fd)
}

// Recv queues a receive from socket fd into p; its completion carries tag.
func (r *Ring) Recv(fd int, p []byte, tag uint64) error { return r.queue(opRecv, fd, p, tag) }

// Send queues a send of p to socket fd; its completion carries tag.
func (r *Ring) Send(fd int, p []byte, tag uint64) error { return r.queue(opSend, fd, p, tag) }

func (r *Ring) queue(op uint8, fd int, p []byte, tag uint64) error {
	if int(r.queued) == len(r.sqes) {
		return ErrFull
	}
	tail := *r.sqTail
	i := tail & r.sqMask
	r.sqArray[i] = i
	s := &r.sqes[i]
	*s = sqe{opcode: op, fd: int32(fd), len: uint32(len(p)), opFlags: msgDontWait, userData: tag}
	if len(p) > 0 {
		s.addr = uint64(uintptr(unsafe.Pointer(&p[0])))
	}
	// The kernel reads the entry after it sees the new tail.
	atomic.StoreUint32(r.sqTail, tail+1)
	r.queued++
	return nil
}

// Queued reports how many operations wait for Submit.
func (r *Ring) Queued() int { return int(r.queued) }

// Submit makes every queued operation in one system call and calls done
// with each one's tag and result: the bytes moved, or a negative errno
// (-EAGAIN: the socket had no input, or no room). The operations never
// wait, so it returns once all of them have completed. Should the kernel
// refuse the call, done is called with -ECANCELED for each operation it
// did not take, which was not made, and Submit returns the error.
func (r *Ring) Submit(done func(tag uint64, res int32)) error {
	want := r.queued
	var err error
	for wait := want; r.queued > 0; {
		n, _, errno := syscall.RawSyscall6(sysEnter, uintptr(r.fd), uintptr(r.queued), uintptr(wait), enterGetEvents, 0, 0)
		if errno == syscall.EINTR {
			continue
		}
		if errno != 0 {
			err = fmt.Errorf("io_uring_enter: %w", errno)
			break
		}
		r.queued -= uint32(n)
		wait = 0 // the rest are waited for below
	}
	tail := *r.sqTail
	for i := tail - r.queued; i != tail; i++ {
		done(r.sqes[i&r.sqMask].userData, -int32(syscall.ECANCELED))
	}
	*r.sqTail -= r.queued
	want -= r.queued
	r.queued = 0
	for got := uint32(0); got < want; {
		head, tail := *r.cqHead, atomic.LoadUint32(r.cqTail)
		if head == tail {
			// Submitted but not yet complete: wait for the rest (they
			// never wait on a socket, so this is at most a moment).
			_, _, errno := syscall.RawSyscall6(sysEnter, uintptr(r.fd), 0, uintptr(want-got), enterGetEvents, 0, 0)
			if errno != 0 && errno != syscall.EINTR {
				return errors.Join(err, fmt.Errorf("io_uring_enter: %w", errno))
			}
			continue
		}
		for ; head != tail; head++ {
			e := &r.cqes[head&r.cqMask]
			done(e.userData, e.res)
			got++
		}
		atomic.StoreUint32(r.cqHead, head)
	}
	return err
}
