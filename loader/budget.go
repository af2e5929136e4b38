package loader

import (
	"context"
	"sync"
)

// DefaultMaxConcurrentFills is the size of a Budget made with a limit of
// zero, and of a zero Budget: the default of --max-concurrent-fills.
const DefaultMaxConcurrentFills = 256

// Budget bounds origin calls across all keys and loaders, so that a mass
// expiry of many keys cannot become as many simultaneous origin requests:
// coalescing only deduplicates calls for the same key.
//
// The zero value is a budget of DefaultMaxConcurrentFills. A Budget is safe
// for concurrent use. Waiters are served in about the order they arrived,
// since they queue on one channel.
type Budget struct {
	once  sync.Once
	limit int           // set by NewBudget, or defaulted by init
	sem   chan struct{} // one token per slot in use; made by init
}

// NewBudget returns a budget of n concurrent slots; n <= 0 means
// DefaultMaxConcurrentFills.
func NewBudget(n int) *Budget {
	return &Budget{limit: n}
}

func (b *Budget) init() {
	b.once.Do(func() {
		if b.limit <= 0 {
			b.limit = DefaultMaxConcurrentFills
		}
		b.sem = make(chan struct{}, b.limit)
	})
}

// Acquire takes a slot, waiting no longer than ctx allows: the waiting is
// part of whoever's deadline ctx carries (a flight's own deadline, inside
// Fetch). It returns ctx.Err() without a slot when ctx ends first, and also
// when ctx has already ended, even if a slot is free, so an expired request
// never starts origin work.
func (b *Budget) Acquire(ctx context.Context) error {
	b.init()
	if err := ctx.Err(); err != nil {
		return err
	}
	select {
	case b.sem <- struct{}{}:
		return nil
	default:
	}
	select {
	case b.sem <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// TryAcquire takes a slot only if one is free now. It suits work that is
// better dropped than queued, such as a background refresh that can be
// retried on a later stale read.
func (b *Budget) TryAcquire() bool {
	b.init()
	select {
	case b.sem <- struct{}{}:
		return true
	default:
		return false
	}
}

// Release returns a slot taken by Acquire or TryAcquire. Releasing more
// than was acquired is a bug in the caller and panics, rather than silently
// raising the limit.
func (b *Budget) Release() {
	b.init()
	select {
	case <-b.sem:
	default:
		panic("loader: Budget.Release without a matching Acquire")
	}
}

// InUse reports how many slots are taken. Tests read it to see every slot
// returned; the operator's view of origin calls in flight is
// stampedeless_fill_loads_in_flight, by loader.
func (b *Budget) InUse() int {
	b.init()
	return len(b.sem)
}

// Limit reports the number of slots.
func (b *Budget) Limit() int {
	b.init()
	return b.limit
}
