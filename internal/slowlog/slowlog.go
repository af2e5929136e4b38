// Package slowlog is Redis's slow log (SLOWLOG): the newest commands that
// took at least a threshold, each kept as Redis's slowlogCreateEntry keeps
// it, at most a given number of them. It knows no connection or command
// table: the server decides what to log and writes the replies.
package slowlog

import (
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Redis's defaults and bounds for the slow log.
const (
	// DefaultSlowerThan is slowlog-log-slower-than's default, in µs.
	DefaultSlowerThan = 10000
	// DefaultMaxLen is slowlog-max-len's default.
	DefaultMaxLen = 128
	maxArgs       = 32  // an entry's arguments, the last one saying how many more
	maxArgLen     = 128 // bytes of one argument kept
)

// Entry is one entry of SLOWLOG GET, in Redis's shape.
type Entry struct {
	ID, Unix, Micros int64
	Args             [][]byte // copied and cut as Redis cuts them
	Peer, Name       string
}

// Log is a slow log. Commands call Add from every connection's goroutine;
// mu is held only to append and trim. Its zero value is not ready: Init
// it.
type Log struct {
	slowerThan atomic.Int64 // µs; negative: off
	maxLen     atomic.Int64

	mu      sync.Mutex // protects entries and nextID
	entries []Entry    // oldest first
	nextID  int64
}

// Init gives l Redis's defaults.
func (l *Log) Init() {
	l.slowerThan.Store(DefaultSlowerThan)
	l.maxLen.Store(DefaultMaxLen)
}

// SlowerThan is slowlog-log-slower-than, in µs; negative: off.
func (l *Log) SlowerThan() int64 { return l.slowerThan.Load() }

// SetSlowerThan sets slowlog-log-slower-than.
func (l *Log) SetSlowerThan(micros int64) { l.slowerThan.Store(micros) }

// MaxLen is slowlog-max-len.
func (l *Log) MaxLen() int64 { return l.maxLen.Load() }

// SetMaxLen sets slowlog-max-len, dropping the oldest entries past it.
func (l *Log) SetMaxLen(n int64) {
	l.maxLen.Store(n)
	l.mu.Lock()
	l.trimLocked()
	l.mu.Unlock()
}

// Wants reports whether a command of micros µs goes into the log.
func (l *Log) Wants(micros int64) bool {
	t := l.slowerThan.Load()
	return t >= 0 && micros >= t
}

// Add logs a command that took micros µs, as Redis's slowlogCreateEntry
// keeps it: at most 32 arguments and 128 bytes of each, with redacted
// arguments already replaced. now is the server's clock.
func (l *Log) Add(args [][]byte, micros int64, peer, name string, now time.Time) {
	n := min(len(args), maxArgs)
	kept := make([][]byte, n)
	for i := range n {
		a := args[i]
		switch {
		case n != len(args) && i == n-1:
			kept[i] = fmt.Appendf(nil, "... (%d more arguments)", len(args)-n+1)
		case len(a) > maxArgLen:
			kept[i] = fmt.Appendf(append([]byte(nil), a[:maxArgLen]...), "... (%d more bytes)", len(a)-maxArgLen)
		default:
			kept[i] = append([]byte(nil), a...)
		}
	}
	e := Entry{Unix: now.Unix(), Micros: micros, Args: kept, Peer: peer, Name: name}
	l.mu.Lock()
	e.ID = l.nextID
	l.nextID++
	l.entries = append(l.entries, e)
	l.trimLocked()
	l.mu.Unlock()
}

// trimLocked drops the oldest entries past maxLen; with mu held.
func (l *Log) trimLocked() {
	if over := len(l.entries) - int(l.maxLen.Load()); over > 0 {
		l.entries = append(l.entries[:0], l.entries[over:]...)
	}
}

// Newest returns up to n entries, newest first.
func (l *Log) Newest(n int64) []Entry {
	l.mu.Lock()
	defer l.mu.Unlock()
	n = min(n, int64(len(l.entries)))
	out := make([]Entry, n)
	for i := range out {
		out[i] = l.entries[len(l.entries)-1-i]
	}
	return out
}

// Len is how many entries the log holds.
func (l *Log) Len() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	return int64(len(l.entries))
}

// Reset empties the log; ids go on from where they were, as Redis's.
func (l *Log) Reset() {
	l.mu.Lock()
	l.entries = nil
	l.mu.Unlock()
}
