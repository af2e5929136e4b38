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
	// AfterFunc calls f in its own goroutine after d, for AllowLate's
	// lines. If nil, time.AfterFunc. Tests give a fake clock's.
	AfterFunc func(d time.Duration, f func())

	mu   sync.Mutex
	keys map[string]*window // by key; lazily made
}

// window is what a Limiter remembers of one key.
type window struct {
	logged time.Time // when its last line went out
	held   int       // events since then that were not logged
	// late is AllowLate's line for the events held, nil if none is due;
	// while pending, a timer is set to write it at the interval's end.
	late    func(events int)
	pending bool
}

// Allow counts one event of key and reports whether to log it, and if so
// how many events the line stands for: this one and those held back since
// the key's last line. The first event of a key is always logged. Events
// held back are reported only with the key's next line: for a burst whose
// end must be told too, use AllowLate.
func (l *Limiter) Allow(key string) (events int, ok bool) { return l.AllowLate(key, nil) }

// AllowLate is Allow, and when it holds an event back it makes sure the
// events held are reported when the interval ends, not at the key's next
// event, which may never come: then it calls late with their count
// (the last event held gives the late that is called), unless a line of
// the key went out meanwhile. A storm of failures is thus told whole, an
// interval after its end at the latest.
func (l *Limiter) AllowLate(key string, late func(events int)) (events int, ok bool) {
	every := l.every()
	t := l.now()
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
		if late != nil {
			if !w.pending {
				w.pending = true
				l.afterFunc(w.logged.Add(every).Sub(t), func() { l.flush(w) })
			}
			w.late = late
		}
		return 0, false
	}
	events = w.held + 1
	w.logged, w.held, w.late = t, 0, nil
	return events, true
}

// flush writes w's late line, if its events held were not reported since;
// if a line went out since the timer was set, it waits for that line's
// interval to end.
func (l *Limiter) flush(w *window) {
	every := l.every()
	t := l.now()
	l.mu.Lock()
	if left := w.logged.Add(every).Sub(t); left > 0 && w.held > 0 {
		l.mu.Unlock()
		l.afterFunc(left, func() { l.flush(w) })
		return
	}
	late, n := w.late, w.held
	w.pending, w.late = false, nil
	if late != nil && n > 0 {
		w.logged, w.held = t, 0
	}
	l.mu.Unlock()
	if late != nil && n > 0 {
		late(n)
	}
}

// afterFunc calls f after d, on the Limiter's clock.
func (l *Limiter) afterFunc(d time.Duration, f func()) {
	if l.AfterFunc != nil {
		l.AfterFunc(d, f)
		return
	}
	time.AfterFunc(d, f)
}

func (l *Limiter) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}

func (l *Limiter) every() time.Duration {
	if l.Every > 0 {
		return l.Every
	}
	return DefaultEvery
}
