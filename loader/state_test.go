package loader

import (
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
