package resp

import (
	"fmt"
	"io"
	"math"

	"github.com/stampedeless/stampedeless/internal/argsplit"
)

// Protocol limits, as Redis 7 applies them.
const (
	// DefaultMaxBulk is the longest bulk string accepted, Redis's
	// proto-max-bulk-len.
	DefaultMaxBulk = 512 << 20
	// DefaultMaxArgs is the most arguments one command may declare.
	DefaultMaxArgs = 1 << 20
	// DefaultMaxQuery bounds the bytes one command may declare in all,
	// Redis's client-query-buffer-limit.
	DefaultMaxQuery = 1 << 30
	// maxInline is the longest inline command, and the longest header line
	// the reader waits for (Redis's PROTO_INLINE_MAX_SIZE).
	maxInline = 64 << 10
	// Before AUTH, Redis allows at most this many arguments of this size
	// (CVE-2021-32675).
	unauthMaxArgs = 10
	unauthMaxBulk = 16 << 10

	readSize = 16 << 10
	// trimThreshold: a buffer no larger is never trimmed (Redis's
	// PROTO_RESIZE_THRESHOLD).
	trimThreshold = 32 << 10
	maxLineDigit  = 20
)

// ProtocolError is a malformed or oversized request. Redis replies with it
// and closes the connection, since the stream can no longer be framed.
type ProtocolError string

func (e ProtocolError) Error() string { return "Protocol error: " + string(e) }

// Limits bounds what a single command may hold. Zero fields mean the defaults.
type Limits struct {
	MaxBulk  int64
	MaxArgs  int
	MaxQuery int64
}

// Reader parses RESP2 multibulk and inline commands from a stream. Every
// limit is checked on the header that declares a size, before the bytes it
// announces are buffered, and the buffer grows only as data arrives.
//
// The arguments returned by ReadCommand alias the reader's buffer and are
// valid until the next call; whoever keeps one must copy it.
type Reader struct {
	rd       io.Reader
	received int64 // bytes read from rd in all
	buf      []byte
	r        int // buf[r:w] is received but not yet returned
	w        int
	peak     int // the most buf held since the last Trim

	// A multibulk command being parsed across reads; offsets are relative
	// to r so that they survive the buffer being moved.
	argc      int   // declared argument count; 0 when none is in progress
	pos       int   // where parsing resumes
	offs      []int // start and end of each complete argument
	declared  int64 // bulk bytes declared so far
	args      [][]byte
	inlineBuf []byte

	// BeforeBlock, if set, is called each time the reader is about to wait
	// for the network. The server schedules the pending replies' write
	// there (at the end of its loop's turn), so a pipeline gets one write
	// per batch and a client never waits for a reply the server is holding.
	BeforeBlock func() error
}

// NewReader returns a Reader reading from rd.
func NewReader(rd io.Reader) *Reader {
	return &Reader{rd: rd, buf: make([]byte, readSize)}
}

// SetSource makes the reader read from rd from now on, keeping what it has
// buffered (a connection that moves from Go's poller to an event loop).
func (r *Reader) SetSource(rd io.Reader) { r.rd = rd }

// Received reports how many bytes the reader has read in all.
func (r *Reader) Received() int64 { return r.received }

// Size is the buffer's size; Free is how much of it is left to read into.
func (r *Reader) Size() int { return len(r.buf) }
func (r *Reader) Free() int { return len(r.buf) - r.w }

// Held reports how many bytes the buffer holds since it was last drained,
// the commands already returned included: Redis's query buffer keeps the
// commands of a read until it has run them all.
func (r *Reader) Held() int { return r.w }

// Buffered reports how many received bytes have not been returned yet.
func (r *Reader) Buffered() int { return r.w - r.r }

// ReadCommand returns the next command's arguments. authenticated selects
// Redis's tighter limits for clients that have not yet passed AUTH. It
// returns a ProtocolError for a malformed request and the reader's error
// (io.EOF at a clean end) otherwise.
func (r *Reader) ReadCommand(lim Limits, authenticated bool) ([][]byte, error) {
	lim = lim.withDefaults()
	for {
		need := 0
		if r.r < r.w {
			args, n, err := r.parse(lim, authenticated)
			if err != nil {
				return nil, err
			}
			if args != nil {
				return args, nil
			}
			need = n
			if n < 0 { // an empty command was consumed
				continue
			}
		}
		if err := r.fill(need); err != nil {
			return nil, err
		}
	}
}

func (l Limits) withDefaults() Limits {
	if l.MaxBulk <= 0 {
		l.MaxBulk = DefaultMaxBulk
	}
	if l.MaxArgs <= 0 {
		l.MaxArgs = DefaultMaxArgs
	}
	if l.MaxQuery <= 0 {
		l.MaxQuery = DefaultMaxQuery
	}
	return l
}

// fill reads more data. need, if positive, is how many unreturned bytes the
// command in progress needs in all; it only caps how far the buffer grows
// ahead of the data.
func (r *Reader) fill(need int) error {
	if len(r.Room()) == 0 {
		size := 2 * len(r.buf)
		if need > len(r.buf) && need < size {
			size = need
		}
		buf := make([]byte, size)
		copy(buf, r.buf[:r.w])
		r.buf = buf
	}
	if r.BeforeBlock != nil {
		if err := r.BeforeBlock(); err != nil {
			return err
		}
	}
	n, err := r.rd.Read(r.buf[r.w:])
	r.Filled(n)
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// Room makes room at the end of the buffer without growing it (a drained
// buffer starts over; a full one moves its unreturned bytes to the front)
// and returns it: what the next read fills, for fill
// and for a caller that reads the source itself (an event loop reading
// many sockets in one system call) and reports what it read with Filled.
// It is empty when the buffer is full of a command in progress:
// ReadCommand then grows it as the command needs.
func (r *Reader) Room() []byte {
	if r.buf == nil { // released
		r.buf = make([]byte, readSize)
	}
	if r.r == r.w {
		r.r, r.w = 0, 0
	}
	if r.w == len(r.buf) && r.r > 0 {
		r.w = copy(r.buf, r.buf[r.r:r.w])
		r.r = 0
	}
	return r.buf[r.w:]
}

// Release gives the buffer back if it holds nothing (no command in
// progress, nothing unreturned), as Redis frees an idle client's query
// buffer, and reports whether it did: a quiet connection then holds no
// buffer (Size and Free are 0) until it sends again, when Room makes one.
func (r *Reader) Release() bool {
	if r.buf == nil || r.r != r.w || r.argc != 0 {
		return false
	}
	r.buf, r.r, r.w = nil, 0, 0
	return true
}

// Trim shrinks a drained buffer that has grown past trimThreshold and is
// more than twice the most it held since the last Trim, to that most (no
// less than the read size), as Redis's clientsCron resizes a query buffer
// against its recent peak; a buffer grown for one large command is so
// kept while large commands keep coming. The caller calls it
// periodically, and Release once the connection is idle.
func (r *Reader) Trim() {
	peak := r.peak
	r.peak = r.w
	if r.buf == nil || r.r != r.w || r.argc != 0 || len(r.buf) <= trimThreshold || len(r.buf)/2 <= peak {
		return
	}
	r.buf, r.r, r.w = make([]byte, max(peak, readSize)), 0, 0
}

// Filled records that n bytes were read into Room's slice.
func (r *Reader) Filled(n int) {
	r.w += n
	r.received += int64(n)
	r.peak = max(r.peak, r.w)
}

// parse tries to complete a command from buf[r:w]. It returns the command,
// or nil and how many bytes it needs (0: unknown, -1: an empty command was
// skipped), or a protocol error.
func (r *Reader) parse(lim Limits, authenticated bool) ([][]byte, int, error) {
	if r.argc == 0 {
		if r.buf[r.r] != '*' {
			return r.parseInline()
		}
		count, line, ok := shortHeader(r.buf[r.r:r.w])
		if !ok {
			if line, ok = r.line(r.r); !ok {
				if r.w-r.r > maxInline {
					return nil, 0, ProtocolError("too big mbulk count string")
				}
				return nil, 0, nil
			}
			count, ok = parseInt(r.buf[r.r+1 : r.r+line])
		}
		switch {
		case !ok || count > math.MaxInt32 || count > int64(lim.MaxArgs):
			return nil, 0, ProtocolError("invalid multibulk length")
		case !authenticated && count > unauthMaxArgs:
			return nil, 0, ProtocolError("unauthenticated multibulk length")
		case count <= 0:
			r.r += line + 2
			return nil, -1, nil
		}
		r.argc = int(count)
		r.pos = line + 2
		r.offs = r.offs[:0]
		r.declared = 0
	}
	if len(r.offs) == 0 {
		if args, ok := r.whole(lim, authenticated); ok {
			return args, 0, nil
		}
	}
	for len(r.offs) < 2*r.argc {
		at := r.r + r.pos
		if at >= r.w {
			return nil, 0, nil
		}
		if r.buf[at] != '$' {
			return nil, 0, ProtocolError(fmt.Sprintf("expected '$', got '%c'", r.buf[at]))
		}
		n, line, ok := shortHeader(r.buf[at:r.w])
		if !ok {
			if line, ok = r.line(at); !ok {
				if r.w-at > maxInline {
					return nil, 0, ProtocolError("too big bulk count string")
				}
				return nil, 0, nil
			}
			n, ok = parseInt(r.buf[at+1 : at+line])
		}
		switch {
		case !ok || n < 0 || n > lim.MaxBulk:
			return nil, 0, ProtocolError("invalid bulk length")
		case !authenticated && n > unauthMaxBulk:
			return nil, 0, ProtocolError("unauthenticated bulk length")
		case r.declared+n > lim.MaxQuery:
			return nil, 0, ProtocolError("query buffer limit exceeded")
		}
		start := r.pos + line + 2
		end := start + int(n)
		if r.r+end+2 > r.w {
			return nil, end + 2, nil
		}
		r.declared += n
		r.offs = append(r.offs, start, end)
		r.pos = end + 2
	}
	r.args = r.args[:0]
	for i := 0; i < len(r.offs); i += 2 {
		r.args = append(r.args, r.buf[r.r+r.offs[i]:r.r+r.offs[i+1]])
	}
	r.r += r.pos
	r.argc = 0
	return r.args, 0, nil
}

// whole parses, in one pass, the arguments of a command whose header has
// been read, when they are all in the buffer with short headers and within
// the limits: the usual command of a pipelined batch. It returns false,
// the reader where it was, for anything else, which parse's resumable loop
// then parses or refuses.
func (r *Reader) whole(lim Limits, authenticated bool) ([][]byte, bool) {
	buf := r.buf[r.r:r.w]
	maxBulk := lim.MaxBulk
	if !authenticated {
		maxBulk = min(maxBulk, unauthMaxBulk)
	}
	args := r.args[:0]
	pos, declared := r.pos, int64(0)
	for range r.argc {
		if pos >= len(buf) || buf[pos] != '$' {
			return nil, false
		}
		n, line, ok := shortHeader(buf[pos:])
		declared += n
		start := pos + line + 2
		end := start + int(n)
		if !ok || n > maxBulk || declared > lim.MaxQuery || end+2 > len(buf) {
			return nil, false
		}
		args = append(args, buf[start:end])
		pos = end + 2
	}
	r.args = args
	r.r += pos
	r.argc = 0
	return args, true
}

// shortHeader is line and parseInt of the usual header at the start of b
// (its type byte first) in one pass: up to 18 digits, no leading zero,
// then '\r' and a byte after it. ok is false for anything else (a sign, a
// longer number, an incomplete or bad line), which the two then read and
// judge as before.
func shortHeader(b []byte) (n int64, line int, ok bool) {
	i := 1
	for end := min(len(b)-1, 1+18); i < end; i++ {
		c := b[i]
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int64(c-'0')
	}
	if i >= len(b)-1 || b[i] != '\r' || i == 1 || i > 2 && b[1] == '0' {
		return 0, 0, false
	}
	return n, i, true
}

// line returns the length of the header line at buf[at:] up to its "\r\n".
// A NUL byte before the '\r' hides it, as Redis's strchr does: the line
// is then never complete, and the reader waits until the header is too
// big (Redis's "too big mbulk count string").
func (r *Reader) line(at int) (int, bool) {
	end := min(r.w, at+maxInline+2)
	for i := at; i+1 < end; i++ {
		switch r.buf[i] {
		case '\r':
			return i - at, true
		case 0:
			return 0, false
		}
	}
	return 0, false
}

// parseInt parses a RESP header number as Redis's string2ll does (its
// processMultibulkBuffer): an optional '-', decimal digits without a
// leading zero ("0" alone is one, "-0", "04", "+4" are not), at most 20
// characters. "$04" and "*02" are protocol errors in Redis 7.
func parseInt(b []byte) (int64, bool) {
	if len(b) > maxLineDigit {
		return 0, false
	}
	return ParseInt(b)
}

// parseInline parses a command typed as a line of text, splitting it the
// way Redis's sdssplitargs does. A NUL byte before the line's '\n' hides
// the end of the line, as in Redis, whose strchr stops at it: the command
// never completes, and once more than 64 KiB wait the connection gets
// "too big inline request" and is closed.
func (r *Reader) parseInline() ([][]byte, int, error) {
	nl := -1
	for i := r.r; i < r.w && r.buf[i] != 0; i++ {
		if r.buf[i] == '\n' {
			nl = i
			break
		}
	}
	if nl < 0 {
		if r.w-r.r > maxInline {
			return nil, 0, ProtocolError("too big inline request")
		}
		return nil, 0, nil
	}
	line := r.buf[r.r:nl]
	r.r = nl + 1
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	if cap(r.inlineBuf) < len(line) {
		r.inlineBuf = make([]byte, 0, len(line))
	}
	args, ok := argsplit.Split(r.args[:0], r.inlineBuf[:0], line)
	r.args = args
	if !ok {
		return nil, 0, errUnbalancedQuotes
	}
	if len(args) == 0 {
		return nil, -1, nil
	}
	return args, 0, nil
}

var errUnbalancedQuotes = ProtocolError("unbalanced quotes in request")
