package swr

import (
	"sync"

	"github.com/stampedeless/stampedeless/engine"
	"github.com/stampedeless/stampedeless/loader"
)

// flightFences holds the fence of each running flight, by key, so that a
// caller about to join a flight can tell whether a client wrote or
// deleted the key since the flight began. The fence already keeps such a
// flight's value out of the store; a caller whose read starts after the
// write must not be handed that value either, so it starts a new flight.
type flightFences struct {
	mu sync.Mutex
	m  map[string]*engine.Fence
}

// began records fence as the one of key's running flight.
func (ff *flightFences) began(key string, fence *engine.Fence) {
	ff.mu.Lock()
	if ff.m == nil {
		ff.m = make(map[string]*engine.Fence)
	}
	ff.m[key] = fence
	ff.mu.Unlock()
}

// ended forgets fence when key's flight ends, unless a newer flight of
// key, started after this one was detached, has recorded its own.
func (ff *flightFences) ended(key string, fence *engine.Fence) {
	ff.mu.Lock()
	if ff.m[key] == fence {
		delete(ff.m, key)
	}
	ff.mu.Unlock()
}

// detachOvertaken detaches key's running flight from g if the key was
// written since it began, so that the caller's Join starts a new one. A
// flight that has not taken its fence yet has not called its origin
// either: what it loads is newer than any write before the caller came.
func (ff *flightFences) detachOvertaken(g *loader.Group, key string) {
	ff.mu.Lock()
	fence := ff.m[key]
	ff.mu.Unlock()
	if fence == nil || !fence.Written() {
		return
	}
	ff.mu.Lock()
	if ff.m[key] == fence {
		// Detached once: the callers after this one join the new flight.
		delete(ff.m, key)
		g.Forget(key)
	}
	ff.mu.Unlock()
}
