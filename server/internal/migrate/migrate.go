// Package migrate is MIGRATE's side of the wire, as Redis 7.0's
// migrateCommand speaks it: the connections to the targets, kept a while
// for the next MIGRATE to the same host and port (Redis's
// migrate_cached_sockets), and one transfer over one of them: AUTH if
// asked, SELECT unless the connection has the database selected already,
// then a RESTORE of each key, all written at once, then their replies read
// in order, each line within the timeout.
//
// It knows no store and no client: the server hands it the payloads DUMP
// makes and turns its Outcome into MIGRATE's reply. Nothing here holds a
// lock across I/O: a connection is taken out of the cache for a transfer
// and given back after it.
package migrate

import (
	"bufio"
	"errors"
	"net"
	"strconv"
	"sync"
	"syscall"
	"time"
)

const (
	// IdleTimeout is how long a connection stays cached unused, Redis's
	// MIGRATE_SOCKET_CACHE_TTL.
	IdleTimeout = 10 * time.Second
	// cacheItems bounds the cache, Redis's MIGRATE_SOCKET_CACHE_ITEMS: a
	// new target past it drops an idle connection.
	cacheItems = 64
	// chunk is how much is written at a time, each within the timeout.
	chunk = 64 * 1024
	// lineMax is the longest reply line read as one, as Redis reads them
	// into a buffer of 1024 bytes: the rest of a longer one is read as
	// the next reply.
	lineMax = 1023
)

// Transfer is one MIGRATE: where to, how, and the keys with their
// payloads (DUMP's) and TTLs (milliseconds, 0 for none), in order.
type Transfer struct {
	Host, Port string
	// Timeout bounds the connection, each write of a chunk and the wait
	// for each byte of a reply, as Redis's sync I/O does.
	Timeout time.Duration
	// Auth, if not nil, are AUTH's arguments, sent first: the password,
	// or the user name and the password (AUTH2).
	Auth           [][]byte
	DB             int64
	Replace        bool
	Keys, Payloads [][]byte
	TTLs           []int64
}

// Failure is where a transfer's connection failed, if it did.
type Failure uint8

const (
	None       Failure = iota
	Connecting         // no connection within the timeout
	Writing
	Reading
)

// Outcome is what a transfer came to: the keys the target took, the first
// error it answered, and a failure of the connection. Redis answers a
// target's error before a failure that followed it.
type Outcome struct {
	// Taken[i]: the target answered +OK to Keys[i]'s RESTORE, after an
	// AUTH and a SELECT that did not fail.
	Taken []bool
	// Refused: the target answered an error, TargetError (without its
	// '-'), the first of its replies that was one.
	Refused     bool
	TargetError string
	Failure     Failure
}

// Targets are the cached connections to MIGRATE's targets, by "host:port"
// as MIGRATE names them. Its methods are safe for concurrent use.
type Targets struct {
	idle time.Duration

	mu     sync.Mutex // guards conns, closed and each target's busy and uses
	conns  map[string]*target
	closed bool
}

// New returns an empty cache whose connections close after idle unused.
func New(idle time.Duration) *Targets {
	return &Targets{idle: idle, conns: make(map[string]*target)}
}

// Len is how many connections the cache holds, those in use included:
// INFO's migrate_cached_sockets.
func (t *Targets) Len() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.conns)
}

// Close closes the idle connections and makes those in use close when
// their transfer ends; nothing is cached after it.
func (t *Targets) Close() {
	t.mu.Lock()
	t.closed = true
	var idle []*target
	for name, c := range t.conns {
		if !c.busy {
			idle = append(idle, c)
			delete(t.conns, name)
		}
	}
	t.mu.Unlock()
	for _, c := range idle {
		c.nc.Close()
	}
}

// target is one connection to a target.
type target struct {
	name string
	nc   net.Conn
	in   *timedReader
	br   *bufio.Reader
	// db is the database selected on the connection, if selected: a
	// transfer to it sends no SELECT (Redis's last_dbid).
	db       int64
	selected bool
	// cached: in Targets.conns (a second transfer to a target in use
	// gets one of its own, closed after it). busy: a transfer holds it.
	// uses counts the times it went back idle, so that the idle timer of
	// an earlier time closes nothing.
	cached bool
	busy   bool
	uses   int
}

// timedReader reads from a connection, each read within timeout: Redis
// waits up to its timeout for each byte of a reply.
type timedReader struct {
	nc      net.Conn
	timeout time.Duration
}

func (r *timedReader) Read(p []byte) (int, error) {
	r.nc.SetReadDeadline(time.Now().Add(r.timeout))
	return r.nc.Read(p)
}

// Run makes the transfer, as migrateCommand does: on a cached connection
// that fails before the first RESTORE's reply was read, by other than a
// timeout, it tries once more on a new one (the target may have closed
// the idle connection).
//
// Redis's connect does not wait for the target's answer to be known: a
// connection refused, or one not made within the timeout, fails as its
// first write does ("writing"), after another try for a refusal; only a
// target it cannot even send to (a name that does not resolve, a network
// it has no route to) fails "connecting".
func (t *Targets) Run(tr *Transfer) Outcome {
	name := tr.Host + ":" + tr.Port
	for retry := true; ; retry = false {
		c, err := t.take(name, tr)
		switch {
		case err == nil:
		case !sent(err):
			return Outcome{Failure: Connecting}
		case retry && !isTimeout(err):
			continue
		default:
			return Outcome{Failure: Writing}
		}
		out, broken, again := c.exchange(tr, retry)
		t.giveBack(c, broken)
		if !again {
			return out
		}
	}
}

// take returns the cached connection to name if one is idle, else a new
// one, cached if name has none.
func (t *Targets) take(name string, tr *Transfer) (*target, error) {
	if tr.Host == "" {
		return nil, errNoHost
	}
	t.mu.Lock()
	if c := t.conns[name]; c != nil && !c.busy {
		c.busy = true
		t.mu.Unlock()
		return c, nil
	}
	t.mu.Unlock()
	nc, err := net.DialTimeout("tcp", net.JoinHostPort(tr.Host, strconv.Itoa(atoi(tr.Port))), tr.Timeout)
	if err != nil {
		return nil, err
	}
	in := &timedReader{nc: nc}
	c := &target{name: name, nc: nc, in: in, br: bufio.NewReader(in), busy: true}
	var dropped *target
	t.mu.Lock()
	if _, taken := t.conns[name]; !taken && !t.closed {
		if len(t.conns) >= cacheItems {
			dropped = t.idleOneLocked()
		}
		if len(t.conns) < cacheItems {
			t.conns[name], c.cached = c, true
		}
	}
	t.mu.Unlock()
	if dropped != nil {
		dropped.nc.Close()
	}
	return c, nil
}

// idleOneLocked removes an idle connection from the cache and returns it,
// or nil when every one is in use; t.mu is held.
func (t *Targets) idleOneLocked() *target {
	for name, c := range t.conns {
		if !c.busy {
			delete(t.conns, name)
			return c
		}
	}
	return nil
}

// giveBack ends a transfer's hold of c: a broken connection, or one not
// cached, is closed; a cached one waits idle for the next transfer, and
// closes after t.idle unused.
func (t *Targets) giveBack(c *target, broken bool) {
	t.mu.Lock()
	if broken || !c.cached || t.closed {
		if c.cached && t.conns[c.name] == c {
			delete(t.conns, c.name)
		}
		t.mu.Unlock()
		c.nc.Close()
		return
	}
	c.busy = false
	c.uses++
	use := c.uses
	t.mu.Unlock()
	time.AfterFunc(t.idle, func() { t.expire(c, use) })
}

// expire closes c if it is still cached and has been idle since its use
// numbered use ended.
func (t *Targets) expire(c *target, use int) {
	t.mu.Lock()
	if t.conns[c.name] != c || c.busy || c.uses != use {
		t.mu.Unlock()
		return
	}
	delete(t.conns, c.name)
	t.mu.Unlock()
	c.nc.Close()
}

// exchange sends tr's commands on c and reads their replies. broken: c
// failed and must be closed; again: the failure allows another try on a
// new connection (mayRetry, nothing answered yet, not a timeout).
func (c *target) exchange(tr *Transfer, mayRetry bool) (out Outcome, broken, again bool) {
	c.in.timeout = tr.Timeout
	selects := !c.selected || c.db != tr.DB
	cmds := commandsOf(tr, selects)
	failed := func(f Failure, err error) (Outcome, bool, bool) {
		return Outcome{Failure: f}, true, mayRetry && !isTimeout(err)
	}
	for pos := 0; pos < len(cmds); pos += chunk {
		c.nc.SetWriteDeadline(time.Now().Add(tr.Timeout))
		if _, err := c.nc.Write(cmds[pos:min(pos+chunk, len(cmds))]); err != nil {
			return failed(Writing, err)
		}
	}
	var authReply, selectReply string
	var err error
	if tr.Auth != nil {
		if authReply, err = c.readLine(); err != nil {
			return failed(Reading, err)
		}
	}
	if selects {
		if selectReply, err = c.readLine(); err != nil {
			return failed(Reading, err)
		}
	}
	out.Taken = make([]bool, len(tr.Keys))
	j := 0
	for ; j < len(tr.Keys); j++ {
		var line string
		if line, err = c.readLine(); err != nil {
			broken = true
			break
		}
		refusal := line
		switch {
		case tr.Auth != nil && isError(authReply):
			refusal = authReply
		case selects && isError(selectReply):
			refusal = selectReply
		case !isError(line):
			out.Taken[j] = true
			continue
		}
		if !out.Refused {
			// After an error the database selected is no longer known.
			c.selected = false
			out.Refused, out.TargetError = true, refusal[1:]
		}
	}
	switch {
	case broken && !out.Refused && j == 0 && mayRetry && !isTimeout(err):
		return Outcome{Failure: Reading}, true, true
	case broken && !out.Refused:
		out.Failure = Reading
	case !out.Refused:
		c.db, c.selected = tr.DB, true
	}
	return out, broken, false
}

// readLine reads one reply line as Redis's syncReadLine does: up to
// lineMax bytes or the newline, without its "\r"; a bare newline is an
// error, as it is to Redis.
func (c *target) readLine() (string, error) {
	line := make([]byte, 0, 16)
	for len(line) < lineMax {
		b, err := c.br.ReadByte()
		if err != nil {
			return "", err
		}
		if b == '\n' {
			if len(line) == 0 {
				return "", errBareNewline
			}
			if line[len(line)-1] == '\r' {
				line = line[:len(line)-1]
			}
			break
		}
		line = append(line, b)
	}
	return string(line), nil
}

var (
	errBareNewline = errors.New("migrate: the target answered an empty line")
	errNoHost      = errors.New("migrate: no host")
)

// sent reports whether a failed dial got as far as sending to the target:
// not a name that does not resolve, an address that is not one, or a
// network with no route.
func sent(err error) bool {
	var dnsErr *net.DNSError
	var addrErr *net.AddrError
	return !errors.Is(err, errNoHost) && !errors.As(err, &dnsErr) && !errors.As(err, &addrErr) &&
		!errors.Is(err, syscall.ENETUNREACH)
}

// isError reports whether a reply line is an error; an empty one (a lone
// "\r\n") is not, as Redis looks at its first byte.
func isError(line string) bool { return len(line) > 0 && line[0] == '-' }

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// commandsOf is what a transfer writes: AUTH, SELECT, then a RESTORE
// key ttl payload [REPLACE] per key, in RESP.
func commandsOf(tr *Transfer, selects bool) []byte {
	n := 64
	for i, k := range tr.Keys {
		n += len(k) + len(tr.Payloads[i]) + 64
	}
	b := make([]byte, 0, n)
	if tr.Auth != nil {
		b = appendCommand(b, append([][]byte{[]byte("AUTH")}, tr.Auth...)...)
	}
	if selects {
		b = appendCommand(b, []byte("SELECT"), strconv.AppendInt(nil, tr.DB, 10))
	}
	for i, k := range tr.Keys {
		ttl := strconv.AppendInt(nil, tr.TTLs[i], 10)
		if tr.Replace {
			b = appendCommand(b, []byte("RESTORE"), k, ttl, tr.Payloads[i], []byte("REPLACE"))
		} else {
			b = appendCommand(b, []byte("RESTORE"), k, ttl, tr.Payloads[i])
		}
	}
	return b
}

// appendCommand appends args as a RESP array of bulk strings.
func appendCommand(b []byte, args ...[]byte) []byte {
	b = append(strconv.AppendInt(append(b, '*'), int64(len(args)), 10), '\r', '\n')
	for _, a := range args {
		b = append(strconv.AppendInt(append(b, '$'), int64(len(a)), 10), '\r', '\n')
		b = append(append(b, a...), '\r', '\n')
	}
	return b
}

// atoi reads a port as C's atoi does, as Redis reads MIGRATE's: leading
// blanks, a sign, the digits up to the first other byte; 0 if none.
func atoi(s string) int {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] >= '\t' && s[i] <= '\r') {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	n := 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9' && n < 1<<31; i++ {
		n = n*10 + int(s[i]-'0')
	}
	if neg {
		n = -n
	}
	return n
}
