// Package lograte holds back repeated log lines: at most one line per key
// (a loader, a kind of failure) per interval, each line saying how many
// events it stands for, so a failure storm costs a few lines, not one per
// event, and still tells how big it was.
package lograte

import (
	"sync"
	"time"
)

// DefaultEvery is the interval of a Limiter whose Every is zero.
const DefaultEvery = 10 * time.Second

// maxKeys bounds the keys a Limiter remembers; past it they are all
// forgotten, which at worst lets one early line through per key.
const maxKeys = 4096

// Limiter decides which events of a key are logged. The zero value is
// usable with DefaultEvery and the real clock; set the fields before first
// use. It is safe for concurrent use.
type Limiter struct {
	// Every is the shortest time between two lines of one key. If zero,
	// DefaultEvery.
	Every time.Duration
	// Now returns the current time. If nil, time.Now. Tests move it by hand.
	Now func() time.Time

	mu   sync.Mutex
	keys map[string]*window // by key; lazily made
}

// window is what a Limiter remembers of one key.
type window struct {
	logged time.Time // when its last line went out
	held   int       // events since then that were not logged
}

// Allow counts one event of key and reports whether to log it, and if so
// how many events the line stands for: this one and those held back since
// the key's last line. The first event of a key is always logged.
func (l *Limiter) Allow(key string) (events int, ok bool) {
	now := time.Now
	if l.Now != nil {
		now = l.Now
	}
	every := l.Every
	if every <= 0 {
		every = DefaultEvery
	}
	t := now()
	l.mu.Lock()
	defer l.mu.Unlock()
	w, found := l.keys[key]
	if !found {
		if l.keys == nil || len(l.keys) >= maxKeys {
			l.keys = make(map[string]*window)
		}
		l.keys[key] = &window{logged: t}
		return 1, true
	}
	if t.Sub(w.logged) < every {
		w.held++
		return 0, false
	}
	events = w.held + 1
	w.logged, w.held = t, 0
	return events, true
}
