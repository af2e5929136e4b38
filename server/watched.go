package server

import (
	"github.com/stampedeless/stampedeless/engine"
)

// consumeChanges counts a consumer of the store's changes in (1) or out
// (-1). The store's listener is installed only while there is one, so that
// while nothing watches, a write costs the store one atomic load.
func (s *Server) consumeChanges(delta int) {
	s.changesMu.Lock()
	defer s.changesMu.Unlock()
	s.changeConsumers += delta
	switch {
	case delta > 0 && s.changeConsumers == 1:
		s.store.Listen(s.keyChanged)
	case s.changeConsumers == 0:
		s.store.Listen(nil)
	}
}

// keyChanged is the store's listener: it hands each change to the parts of
// the server that consume changes. It runs under the changed key's shard
// lock and must stay quick (engine.Listener).
func (s *Server) keyChanged(ch engine.Change) {
	if ch.Kind == engine.Created || ch.Kind == engine.Missed {
		// No value changed: only keyspace events tell of them.
		s.keyEvents.changed(ch)
		return
	}
	if ch.Unsignalled {
		// A stream's groups or last ID: its readers may answer otherwise
		// (NOGROUP), but no WATCH breaks and no cached read goes stale,
		// as in Redis, which signals no modified key for them.
		s.blocked.KeyWritten(ch)
		return
	}
	s.watches.Changed(ch)
	s.tracking.Changed(ch)
	s.blocked.KeyWritten(ch)
	s.keyEvents.changed(ch)
}
