package loader

import (
	"context"
	"errors"
	"testing"
)

// Restore takes only what State wrote, of a format it knows.
func TestLoaderStateFormat(t *testing.T) {
	r := NewRegistry(Options{})
	for _, bad := range []string{"\x02", "\x01\x03api", "\x01\x04api:\x02xx"} {
		if _, err := r.Restore([]byte(bad)); !errors.Is(err, ErrBadState) {
			t.Errorf("Restore(%q): %v, want ErrBadState", bad, err)
		}
	}
	if len(r.List()) != 0 {
		t.Errorf("loaders after bad states: %v", r.List())
	}
}

// noFleet is a Fleet with an empty shared store.
type noFleet struct{}

func (noFleet) ID() string { return "0123456789abcdef" }
func (noFleet) PutLoader(_ context.Context, reg Registration, _ bool) (Registration, error) {
	return reg, nil
}
func (noFleet) Loaders(context.Context) ([]Registration, error)     { return nil, nil }
func (noFleet) WatchLoaders(func(Registration) error, func() error) {}

// With a Fleet the fleet's registrations apply: a snapshot's are not
// restored, even where the fleet has none.
func TestRestoreWithFleet(t *testing.T) {
	r := newRegistry(t, Options{})
	mustRegister(t, r, Config{Prefix: "api:", URL: "http://127.0.0.1:1/{key}"})
	state := r.State()
	if len(state) == 0 || state[0] != stateFormat {
		t.Fatalf("State: %q", state)
	}
	shared := newRegistry(t, Options{})
	if err := shared.Share(noFleet{}); err != nil {
		t.Fatal(err)
	}
	if got, err := shared.Restore(state); !errors.Is(err, ErrShared) || len(got) != 0 || len(shared.List()) != 0 {
		t.Errorf("Restore with a fleet: %v, %v; loaders %v", got, err, shared.List())
	}
	alone := newRegistry(t, Options{})
	if got, err := alone.Restore(state); err != nil || len(got) != 1 || len(alone.List()) != 1 {
		t.Errorf("Restore without a fleet: %v, %v; loaders %v", got, err, alone.List())
	}
}
