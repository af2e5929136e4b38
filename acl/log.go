package acl

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Reason is why a command or an authentication was denied.
type Reason int

// The reasons, as ACL LOG names them.
const (
	DeniedCommand Reason = iota // the user may not run the command
	DeniedKey                   // nor access one of its keys
	DeniedChannel               // nor one of its channels
	DeniedAuth                  // AUTH or HELLO with a wrong user or password
	// NumReasons is how many reasons there are.
	NumReasons
)

var reasonNames = [NumReasons]string{"command", "key", "channel", "auth"}

// Reasons are every reason, in order.
var Reasons = []Reason{DeniedCommand, DeniedKey, DeniedChannel, DeniedAuth}

func (r Reason) String() string { return reasonNames[r] }

// Entry is one line of the ACL log: denials alike (same reason, context,
// object and user, within a minute of each other) are counted in one.
type Entry struct {
	Count  int64
	Reason Reason
	// Context is where the command ran: "toplevel", or "multi" inside a
	// transaction.
	Context string
	// Object is the command, key or channel denied, or AUTH's name as sent.
	Object   string
	Username string
	// Updated is when the entry last counted a denial; ClientInfo is
	// CLIENT INFO's line for the client then.
	Updated    time.Time
	ClientInfo string
}

// Log is the ACL log, newest entry first, and the count of every denial.
// Its methods are safe for concurrent use.
type Log struct {
	mu      sync.Mutex
	entries []Entry
	denied  [NumReasons]atomic.Int64
	// limit is SetMaxLen's length plus one; 0: LogMaxLen.
	limit atomic.Int64
}

// LogMaxLen is how many entries the log keeps unless SetMaxLen says
// otherwise, Redis's default acllog-max-len.
const LogMaxLen = 128

// MaxLen is how many entries the log keeps, Redis's acllog-max-len.
func (l *Log) MaxLen() int64 {
	if n := l.limit.Load(); n > 0 {
		return n - 1
	}
	return LogMaxLen
}

// SetMaxLen sets how many entries the log keeps (n >= 0); as in Redis, a
// log longer than that is cut at its next entry.
func (l *Log) SetMaxLen(n int64) { l.limit.Store(min(n, math.MaxInt64-1) + 1) }

// logGrouping is how close in time denials alike must be to share an entry.
const logGrouping = 60 * time.Second

// Add records a denial. As in Redis, it looks for an entry alike among the
// ten newest and moves it to the front, or adds one.
func (l *Log) Add(e Entry) {
	l.denied[e.Reason].Add(1)
	e.Count = 1
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := range min(10, len(l.entries)) {
		old := l.entries[i]
		delta := e.Updated.Sub(old.Updated).Abs()
		if old.Reason != e.Reason || old.Context != e.Context || delta > logGrouping ||
			old.Object != e.Object || old.Username != e.Username {
			continue
		}
		e.Count = old.Count + 1
		copy(l.entries[1:i+1], l.entries[:i])
		l.entries[0] = e
		return
	}
	l.entries = append(l.entries, Entry{})
	copy(l.entries[1:], l.entries)
	l.entries[0] = e
	if n := l.MaxLen(); int64(len(l.entries)) > n {
		l.entries = l.entries[:n]
	}
}

// Entries returns the n newest entries (all if n is larger).
func (l *Log) Entries(n int) []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]Entry(nil), l.entries[:min(max(n, 0), len(l.entries))]...)
}

// Reset empties the log; the counts of denials go on.
func (l *Log) Reset() {
	l.mu.Lock()
	l.entries = nil
	l.mu.Unlock()
}

// Denied is how many denials for reason there have been since the log was
// made.
func (l *Log) Denied(r Reason) int64 { return l.denied[r].Load() }
