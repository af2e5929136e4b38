package server

import (
	"fmt"
	"sync"

	"github.com/stampedeless/stampedeless/commands"
	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/server/internal/pubsub"
)

// keyspaceEvents are the server's keyspace notifications (Redis's
// notify.c): the handlers send their writes' events through events
// (commands.Ctx.Notify), and the store's listener sends the events no
// command makes: expired, evicted, the "set" of a key a fill stored, and
// the "new" of a key created and the "keymiss" of a read that missed,
// which the store sees where Redis's dbAdd and lookupKeyRead do.
// Each goes to the local subscribers of __keyspace@<db>__:<key> and
// __keyevent@<db>__:<event>, and of the patterns that match them, through
// publish: it queues to their outboxes and never waits, so it is sent
// from inside the atomic section and under a key's shard lock alike.
// With a shared tier it stays on this replica.
type keyspaceEvents struct {
	events *commands.Events
	// mu orders the changes of notify-keyspace-events, and guards
	// listening.
	mu sync.Mutex
	// listening: the store's changes are consumed (consumeChanges), for
	// classes that the store's listener sends.
	listening bool
}

// listenedClasses are the classes the store's listener sends.
const listenedClasses = commands.EventExpired | commands.EventEvicted | commands.EventString |
	commands.EventNew | commands.EventKeyMiss

func (s *Server) initKeyspaceEvents(classes commands.EventClass) {
	s.keyEvents.events = commands.NewEvents(s.publishKeyspaceEvent)
	s.setKeyspaceEvents(classes)
}

// setKeyspaceEvents turns classes on (CONFIG SET notify-keyspace-events),
// and the store's listener with them if they need it.
func (s *Server) setKeyspaceEvents(classes commands.EventClass) {
	k := &s.keyEvents
	k.mu.Lock()
	defer k.mu.Unlock()
	need := classes&listenedClasses != 0 && classes&(commands.EventKeyspace|commands.EventKeyevent) != 0
	if need && !k.listening {
		s.consumeChanges(1)
	}
	k.events.Set(classes)
	if !need && k.listening {
		s.consumeChanges(-1)
	}
	k.listening = need
}

// publishKeyspaceEvent delivers event on key of database db as Redis's
// notifyKeyspaceEvent: on the key's channel (__keyspace@<db>__:<key>)
// first, then on the event's (__keyevent@<db>__:<event>).
func (s *Server) publishKeyspaceEvent(classes commands.EventClass, db int, event string, key []byte) {
	if s.pubsub.Clients() == 0 {
		return
	}
	ev := []byte(event)
	if classes&commands.EventKeyspace != 0 {
		ch := fmt.Appendf(make([]byte, 0, 16+len(key)), "__keyspace@%d__:%s", db, key)
		s.publish(pubsub.Channel, ch, ev, nil)
	}
	if classes&commands.EventKeyevent != 0 {
		ch := fmt.Appendf(make([]byte, 0, 16+len(event)), "__keyevent@%d__:%s", db, event)
		s.publish(pubsub.Channel, ch, key, nil)
	}
}

// changed is the store's listener's part for keyspace events.
func (k *keyspaceEvents) changed(ch engine.Change) {
	switch {
	case ch.Kind == engine.Expired:
		k.events.Notify(ch.DB, commands.EventExpired, "expired", ch.Key)
	case ch.Kind == engine.Evicted:
		k.events.Notify(ch.DB, commands.EventEvicted, "evicted", ch.Key)
	case ch.Kind == engine.Written && ch.Loaded:
		k.events.Notify(ch.DB, commands.EventString, "set", ch.Key)
	case ch.Kind == engine.Created:
		// Told before the write's own event, as Redis's dbAdd is.
		k.events.Notify(ch.DB, commands.EventNew, "new", ch.Key)
	case ch.Kind == engine.Missed:
		k.events.Notify(ch.DB, commands.EventKeyMiss, "keymiss", ch.Key)
	}
}
