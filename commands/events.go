package commands

import (
	"errors"
	"strings"
	"sync/atomic"
)

// EventClass is a class of keyspace notification, a bit of Redis's
// notify-keyspace-events (its letter in the constant's comment).
type EventClass uint32

// The classes, Redis's bits. EventKeyspace and EventKeyevent choose the
// channels; the others choose the events.
const (
	EventKeyspace EventClass = 1 << iota // K: __keyspace@<db>__:<key>, the event as message
	EventKeyevent                        // E: __keyevent@<db>__:<event>, the key as message
	EventGeneric                         // g: DEL, EXPIRE, RENAME and the other type-blind commands
	EventString                          // $
	EventList                            // l
	EventSet                             // s
	EventHash                            // h
	EventZSet                            // z
	EventExpired                         // x: a key removed past its deadline
	EventEvicted                         // e: a key removed to make room
	EventStream                          // t: taken and shown; there are no streams
	EventKeyMiss                         // m: keymiss, a read of a missing key
	eventLoaded                          // Redis's modules only
	EventModule                          // d: taken and shown; there are no modules
	EventNew                             // n: new, a key created

	// EventAll is the A of notify-keyspace-events: every class of event
	// but m and n.
	EventAll = EventGeneric | EventString | EventList | EventSet | EventHash | EventZSet |
		EventExpired | EventEvicted | EventStream | EventModule
)

// ErrEventClass is CONFIG SET's reason for a letter that names no class.
var ErrEventClass = errors.New("Invalid event class character. Use 'Ag$lshzxeKEtmdn'.")

// ParseEventClasses reads notify-keyspace-events as Redis's
// keyspaceEventsStringToFlags does: any order, repeats allowed, "" off.
func ParseEventClasses(s string) (EventClass, error) {
	var classes EventClass
	for i := 0; i < len(s); i++ {
		c := strings.IndexByte(eventLetters, s[i])
		switch {
		case s[i] == 'A':
			classes |= EventAll
		case c < 0:
			return 0, ErrEventClass
		default:
			classes |= 1 << c
		}
	}
	return classes, nil
}

// eventLetters are the classes' letters in bit order; '.' is no letter.
const eventLetters = "KEg$lshzxetm.dn"

// String is the classes as CONFIG GET shows them, Redis's
// keyspaceEventsFlagsToString: A for all of A's, else their letters in a
// fixed order, then K, E and m.
func (classes EventClass) String() string {
	var b []byte
	if classes&EventAll == EventAll {
		b = append(b, 'A')
	} else {
		for _, c := range []EventClass{EventGeneric, EventString, EventList, EventSet, EventHash, EventZSet,
			EventExpired, EventEvicted, EventStream, EventModule, EventNew} {
			if classes&c != 0 {
				b = append(b, eventLetters[bitIndex(c)])
			}
		}
	}
	for _, c := range []EventClass{EventKeyspace, EventKeyevent, EventKeyMiss} {
		if classes&c != 0 {
			b = append(b, eventLetters[bitIndex(c)])
		}
	}
	return string(b)
}

func bitIndex(c EventClass) int {
	i := 0
	for c > 1 {
		c >>= 1
		i++
	}
	return i
}

// Events is where handlers send their keyspace notifications: the classes
// notify-keyspace-events turns on, and the publisher that delivers them.
// The zero value (and a nil *Events) sends nothing.
type Events struct {
	// on is the classes turned on; an event is sent when its class is on,
	// and K or E is.
	on atomic.Uint32
	// publish delivers event on key of database db with the classes as
	// they were.
	publish func(classes EventClass, db int, event string, key []byte)
}

// NewEvents makes the Events that hand what is on to publish, which must
// not block (it queues to the subscribers) and must not keep key.
func NewEvents(publish func(classes EventClass, db int, event string, key []byte)) *Events {
	return &Events{publish: publish}
}

// Set turns classes on, and every other off.
func (e *Events) Set(classes EventClass) { e.on.Store(uint32(classes)) }

// Classes is what is on.
func (e *Events) Classes() EventClass {
	if e == nil {
		return 0
	}
	return EventClass(e.on.Load())
}

// Notify sends event, of class, on key, as Redis's notifyKeyspaceEvent:
// when the class is off it costs one atomic load.
func (e *Events) Notify(db int, class EventClass, event string, key []byte) {
	// Kept small enough to be inlined into the handlers.
	if e != nil && EventClass(e.on.Load())&class != 0 {
		e.send(db, event, key)
	}
}

// send publishes an event whose class was on, if a channel is.
//
//go:noinline
func (e *Events) send(db int, event string, key []byte) {
	if on := EventClass(e.on.Load()); on&(EventKeyspace|EventKeyevent) != 0 {
		e.publish(on, db, event, key)
	}
}
