package swr

import (
	"context"
	"sync"
	"time"

	"github.com/stampedeless/stampedeless/loader"
)

// KeyAnswer is one key's part of an MGETFILL's answer: the key's Answer, or
// its error (ErrNoLoader, a *TimeoutError, the load's failure), as GETFILL
// would have answered it alone.
type KeyAnswer struct {
	Answer
	Err error
}

// PendingMany is the loads an MGETFILL waits for: what StartMany returns
// when some keys need their origin.
type PendingMany struct {
	f       *Filler
	answers []KeyAnswer // StartMany's, completed by Wait
	loads   []pendingKey
}

// pendingKey is one key's load in a PendingMany.
type pendingKey struct {
	index int // in the answers
	p     *Pending
}

// StartMany is Start for each of reqs (MGETFILL): it answers at once every
// key that needs no load, in order, and returns the loads of the others to
// wait for, or nil when there are none.
func (f *Filler) StartMany(reqs []Request) ([]KeyAnswer, *PendingMany) {
	answers := make([]KeyAnswer, len(reqs))
	var pm *PendingMany
	for i, req := range reqs {
		ans, p, err := f.Start(req)
		if p == nil {
			answers[i] = KeyAnswer{Answer: ans, Err: err}
			continue
		}
		if pm == nil {
			pm = &PendingMany{f: f, answers: answers}
		}
		pm.loads = append(pm.loads, pendingKey{index: i, p: p})
	}
	return answers, pm
}

// Wait joins every key's flight, or starts it, before it waits for any,
// then waits for each, and returns every key's answer. Each key waits as a
// GETFILL would: for its request's timeout (or its loader's), counted from
// the call, and is answered as GETFILL's Wait answers.
//
// The flights it starts of a batch loader's keys call the origin together:
// in requests of at most the loader's Batch keys, each sent as soon as it
// is full, the last once every flight has fetched or settled otherwise
// (from the store, the fleet, or a cooldown). Keys of other loaders load in
// parallel, within the fill budget. A key whose flight someone else
// started (a GETFILL, another MGETFILL, a refresh) joins that flight.
func (pm *PendingMany) Wait(ctx context.Context) []KeyAnswer {
	f, start := pm.f, time.Now()
	batches := make(map[*loader.Loader]*batch)
	slots := make([]*batchSlot, len(pm.loads))
	for i, l := range pm.loads {
		ld := l.p.ld
		if ld.Batch() == 0 {
			continue
		}
		b := batches[ld]
		if b == nil {
			b = &batch{f: f, ld: ld}
			batches[ld] = b
		}
		slots[i] = b.slot()
	}
	// Every slot exists before any flight can settle, so no batch sends
	// its last request before all its keys are in.
	calls := make([]*loader.Call, len(pm.loads))
	for i, l := range pm.loads {
		call, ans, served := l.p.join(ctx, slots[i])
		if served {
			pm.answers[l.index] = KeyAnswer{Answer: ans}
		}
		if call == nil || call.Joined() {
			slots[i].withdraw()
		}
		calls[i] = call
	}
	for i, l := range pm.loads {
		if calls[i] == nil {
			continue // answered from the store (join)
		}
		timeout := l.p.timeout()
		wctx, cancel := context.WithDeadline(ctx, start.Add(timeout))
		res, err := calls[i].Wait(wctx)
		cancel()
		ans, err := l.p.settle(res, err, calls[i].Joined(), timeout)
		pm.answers[l.index] = KeyAnswer{Answer: ans, Err: err}
	}
	return pm.answers
}

// batch gathers the origin calls of one MGETFILL's flights of one batch
// loader into requests of at most the loader's Batch keys. Each flight has
// a slot, which it either queues (its key needs the origin) or withdraws
// (it settled otherwise); a request goes when the queue holds Batch keys,
// or when no slot is still open.
type batch struct {
	f  *Filler
	ld *loader.Loader

	mu    sync.Mutex
	open  int          // slots neither queued nor withdrawn
	queue []*batchSlot // queued, not yet sent
}

// slotState is where a batchSlot is.
type slotState uint8

const (
	slotOpen      slotState = iota // its flight has not reached the origin yet
	slotQueued                     // in the queue or a request: wait for done
	slotWithdrawn                  // its flight settled without the batch
)

// batchSlot is one key's place in a batch.
type batchSlot struct {
	b     *batch
	state slotState // guarded by b.mu
	key   string
	v     loader.Validators

	done chan struct{} // closed once the result below is set
	res  loader.Result
	err  error
	took time.Duration
}

// slot adds a slot to b. Every slot must be added before any is queued or
// withdrawn.
func (b *batch) slot() *batchSlot {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.open++
	return &batchSlot{b: b, done: make(chan struct{})}
}

// enqueue puts the key's origin call in the batch, and sends a request if
// that completes one. It reports false, doing nothing, for a nil slot or
// one withdrawn: the flight then calls the origin alone.
func (s *batchSlot) enqueue(key string, v loader.Validators) bool {
	if s == nil {
		return false
	}
	b := s.b
	b.mu.Lock()
	if s.state != slotOpen {
		b.mu.Unlock()
		return false
	}
	s.state, s.key, s.v = slotQueued, key, v
	b.open--
	b.queue = append(b.queue, s)
	ready := b.readyLocked()
	b.mu.Unlock()
	b.send(ready)
	return true
}

// wait returns the result of the request the slot went in.
func (s *batchSlot) wait() (loader.Result, time.Duration, error) {
	<-s.done
	return s.res, s.took, s.err
}

// withdraw takes an open slot out of the batch, and sends the last request
// if the batch waited only for it. It does nothing for a nil slot or one
// already queued or withdrawn.
func (s *batchSlot) withdraw() {
	if s == nil {
		return
	}
	b := s.b
	b.mu.Lock()
	if s.state != slotOpen {
		b.mu.Unlock()
		return
	}
	s.state = slotWithdrawn
	b.open--
	ready := b.readyLocked()
	b.mu.Unlock()
	b.send(ready)
}

// readyLocked takes the next request's slots off the queue, if one is
// ready: a full one, or the rest once no slot is open. b.mu is held.
func (b *batch) readyLocked() []*batchSlot {
	n := b.ld.Batch()
	var ready []*batchSlot
	switch {
	case len(b.queue) >= n:
		ready = b.queue[:n:n]
		b.queue = append([]*batchSlot(nil), b.queue[n:]...)
	case b.open == 0 && len(b.queue) > 0:
		ready, b.queue = b.queue, nil
	}
	return ready
}

// send makes one batch request for slots, on the goroutine of the flight
// that completed it, and hands each slot its key's result.
func (b *batch) send(slots []*batchSlot) {
	if len(slots) == 0 {
		return
	}
	f, ld := b.f, b.ld
	keys := make([]loader.BatchKey, len(slots))
	for i, s := range slots {
		keys[i] = loader.BatchKey{Key: s.key, Validators: s.v}
	}
	var out []loader.BatchResult
	took := f.originCall(ld, len(keys), func() { out = ld.FetchBatch(context.Background(), keys) })
	for i, s := range slots {
		s.res, s.err, s.took = out[i].Result, out[i].Err, took
		f.opts.Metrics.ObserveLoad(ld.Prefix(), loadResult(s.res, s.err), took)
		close(s.done)
	}
}
