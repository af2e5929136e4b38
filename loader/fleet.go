package loader

import (
	"context"
	"errors"
)

// Registration is one LOADER.REGISTER or LOADER.UNREGISTER of a prefix,
// ranked so that every replica of a fleet settles on the same one for each
// prefix: the one that Outranks the others.
type Registration struct {
	// Config is the loader; for a removal only its Prefix counts.
	Config
	// Removed marks an UNREGISTER: the prefix has no registration, and its
	// default, if any, applies.
	Removed bool
	// Version orders the registrations of one prefix: each is stored with a
	// version above the one it replaces.
	Version uint64
	// Replica is the id of the replica that made the registration (empty
	// without a Fleet); it breaks ties between equal versions.
	Replica string
}

// Outranks reports whether r wins over o, a registration of the same
// prefix: the higher version wins; of equal versions, the greater replica
// id (compared as bytes). Equal ranks do not outrank each other.
func (r Registration) Outranks(o Registration) bool {
	if r.Version != o.Version {
		return r.Version > o.Version
	}
	return r.Replica > o.Replica
}

// Fleet shares registrations among the replicas of a fleet (--redis).
// Registry is its only user; cluster.Client implements it. Every method is
// bounded by the fleet's own timeout, and an error means the shared store
// did not take part.
type Fleet interface {
	// ID is this replica's id, which new registrations carry.
	ID() string
	// PutLoader stores reg in the shared store and announces it to the
	// other replicas, and returns the registration stored for reg.Prefix
	// afterwards. With force, reg is stored whatever is there, with its
	// version raised above the stored one's if needed, so the last
	// registration the shared store receives wins. Without force, reg is
	// stored only if it outranks the stored registration, which is returned
	// otherwise.
	PutLoader(ctx context.Context, reg Registration, force bool) (Registration, error)
	// Loaders returns every stored registration, removals included.
	Loaders(ctx context.Context) ([]Registration, error)
	// WatchLoaders sets the functions the fleet calls: heard with each
	// registration another replica announces, and resync whenever the
	// shared store answers again after it did not (announcements may have
	// been missed meanwhile). Errors are the fleet's to log.
	WatchLoaders(heard func(Registration) error, resync func() error)
}

// Share makes the registry's registrations the fleet's: it watches f's
// announcements and runs Resync, whose error it returns (the registry
// then has its defaults, and catches up when f calls resync). Call it once,
// before the registry serves, so that the fleet's loaders are there from
// the first command.
func (r *Registry) Share(f Fleet) error {
	r.mu.Lock()
	r.fleet = f
	r.mu.Unlock()
	f.WatchLoaders(r.accept, r.Resync)
	return r.Resync()
}

// Resync reconciles the registry with the fleet's shared store: each
// prefix ends with the registration that outranks the other, here and
// there. A stored registration that wins is applied here; one of this
// replica's that wins (made while the store was unavailable, or lost with
// an emptied store) is stored again. Without a Fleet it does nothing.
//
// The error joins the shared store's, if it failed, and those of stored
// registrations this replica refuses (they leave their prefix without a
// loader here).
func (r *Registry) Resync() error {
	r.mu.Lock()
	f := r.fleet
	r.mu.Unlock()
	if f == nil {
		return nil
	}
	ctx := context.Background()
	stored, err := f.Loaders(ctx)
	if err != nil {
		return err
	}
	var errs []error
	there := make(map[string]Registration, len(stored))
	for _, s := range stored {
		there[s.Prefix] = s
		errs = append(errs, r.accept(s))
	}
	r.mu.Lock()
	var mine []Registration
	for p, rec := range r.records {
		if s, ok := there[p]; !ok || rec.reg.Outranks(s) {
			mine = append(mine, rec.reg)
		}
	}
	r.mu.Unlock()
	for _, reg := range mine {
		got, err := f.PutLoader(ctx, reg, false)
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		errs = append(errs, r.accept(got))
	}
	return errors.Join(errs...)
}

// propose makes reg, a new registration or removal, the one in effect for
// its prefix: through the fleet if there is one and it answers, else here
// alone (with a fleet, Resync stores it later).
func (r *Registry) propose(reg Registration) error {
	r.mu.Lock()
	f := r.fleet
	reg.Version = r.records[reg.Prefix].reg.Version + 1
	r.mu.Unlock()
	if f != nil {
		reg.Replica = f.ID()
		if stored, err := f.PutLoader(context.Background(), reg, true); err == nil {
			return r.accept(stored)
		}
	}
	// Alone: this registration wins here over any made meanwhile.
	l, err := r.build(reg)
	r.mu.Lock()
	defer r.mu.Unlock()
	reg.Version = max(reg.Version, r.records[reg.Prefix].reg.Version+1)
	if l != nil {
		l.version = reg.Version
	}
	r.setLocked(reg, l)
	return err
}

// accept applies reg if it outranks the registration of its prefix here.
// Its error is a refused registration's, which is still recorded (with no
// loader), so the fleet's later registrations are ranked against it.
func (r *Registry) accept(reg Registration) error {
	l, err := r.build(reg)
	r.mu.Lock()
	defer r.mu.Unlock()
	if cur, ok := r.records[reg.Prefix]; ok && !reg.Outranks(cur.reg) {
		return nil // already applied, or older than what is
	}
	r.setLocked(reg, l)
	return err
}

// build returns reg's loader: nil for a removal, or with the error if reg
// is refused.
func (r *Registry) build(reg Registration) (*Loader, error) {
	if reg.Removed {
		return nil, nil
	}
	return r.newLoader(reg.Config, SourceRegister, reg.Version)
}

func (r *Registry) setLocked(reg Registration, l *Loader) {
	if r.records == nil {
		r.records = make(map[string]record)
	}
	r.records[reg.Prefix] = record{reg: reg, loader: l}
	r.publishLocked()
}
