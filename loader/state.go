package loader

import (
	"errors"
	"fmt"
	"slices"
)

// The registrations a snapshot keeps (State, Restore), so that a restart
// without a Fleet finds them again. Format 1: the byte 1, then for each
// registration its prefix and EncodeRegistration's bytes, each as a
// uvarint length and the bytes. A later format has another first byte.
const stateFormat = 1

// ErrShared is Restore's error with a Fleet: the fleet's registrations
// apply, not a snapshot's.
var ErrShared = errors.New("loader: registrations are the fleet's (--redis); the snapshot's are not restored")

// ErrBadState is matched (errors.Is) by Restore's error for bytes State
// did not write, or of a format this version does not know.
var ErrBadState = errors.New("malformed loader state")

// State returns the registrations in effect that Register made
// (SourceRegister), for a snapshot: not the defaults, not removals, not
// a fleet's registrations this replica refused. Nil if there are none.
// The bytes hold header values in plain text.
func (r *Registry) State() []byte {
	r.mu.Lock()
	var regs []Registration
	for _, rec := range r.records {
		if !rec.reg.Removed && rec.loader != nil {
			regs = append(regs, rec.reg)
		}
	}
	r.mu.Unlock()
	if len(regs) == 0 {
		return nil
	}
	slices.SortFunc(regs, func(a, b Registration) int {
		switch {
		case a.Prefix < b.Prefix:
			return -1
		case a.Prefix > b.Prefix:
			return 1
		}
		return 0
	})
	b := []byte{stateFormat}
	for _, reg := range regs {
		b = appendStrings(b, reg.Prefix, EncodeRegistration(reg))
	}
	return b
}

// Restore applies the registrations of state, which State returned,
// before the registry serves, each through Register's checks (the URL,
// Options.Allow): one refused is skipped, and its prefix keeps its
// default if it has one. It returns the prefixes restored, and an error
// that joins each refusal's (as Register's, naming the prefix and
// never a header value) or is ErrBadState's, when nothing is restored.
// With a Fleet it restores nothing and returns ErrShared. A prefix already
// registered here keeps its registration.
func (r *Registry) Restore(state []byte) ([]string, error) {
	if len(state) == 0 {
		return nil, nil
	}
	r.mu.Lock()
	shared := r.fleet != nil
	r.mu.Unlock()
	if shared {
		return nil, ErrShared
	}
	if state[0] != stateFormat {
		return nil, fmt.Errorf("%w: format %d", ErrBadState, state[0])
	}
	f, ok := parseStrings(state[1:])
	if !ok || len(f)%2 != 0 {
		return nil, ErrBadState
	}
	regs := make([]Registration, 0, len(f)/2)
	for i := 0; i < len(f); i += 2 {
		reg, err := DecodeRegistration(f[i], f[i+1])
		if err != nil || reg.Removed {
			return nil, fmt.Errorf("%w: the registration of %q", ErrBadState, f[i])
		}
		regs = append(regs, reg)
	}
	var restored []string
	var errs []error
	for _, reg := range regs {
		l, err := r.build(reg)
		if err != nil {
			errs = append(errs, fmt.Errorf("prefix %q: %w", reg.Prefix, err))
			continue
		}
		r.mu.Lock()
		if _, ok := r.records[reg.Prefix]; !ok {
			r.setLocked(reg, l)
			restored = append(restored, reg.Prefix)
		}
		r.mu.Unlock()
	}
	return restored, errors.Join(errs...)
}
