package loader

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// Header is a request header a loader sends on every origin request,
// typically an origin credential. Its value is a secret: it goes to the
// origin and, for a loader Register made, where registrations are kept:
// into the shared Redis with --redis, into the snapshot with --dir
// (Registry.State); nowhere else. Info, and so LOADER.LIST, INFO and metrics, shows only
// header names, and no error of this package repeats a value.
type Header struct {
	Name, Value string
}

// reservedHeaders are set by the loader itself or by HTTP's framing; a
// configured header may not replace them.
var reservedHeaders = []string{
	KeyHeader, KeyEncodingHeader, "If-None-Match", "If-Modified-Since",
	"Host", "Content-Length", "Transfer-Encoding", "Connection", "Keep-Alive",
	"Proxy-Connection", "Te", "Trailer", "Upgrade",
}

// buildHeaders checks hs and returns them as the header every request of
// the loader starts from, and their canonical names, sorted and distinct.
// A name may repeat: each value is sent.
func buildHeaders(hs []Header) (http.Header, []string, error) {
	if len(hs) == 0 {
		return nil, nil, nil
	}
	h := make(http.Header, len(hs))
	var names []string
	for _, x := range hs {
		if !validHeaderName(x.Name) {
			return nil, nil, fmt.Errorf("%w: header name %q is not an HTTP token", ErrConfig, x.Name)
		}
		name := http.CanonicalHeaderKey(x.Name)
		if slices.Contains(reservedHeaders, name) {
			return nil, nil, fmt.Errorf("%w: header %s is set by stampedeless or by HTTP itself", ErrConfig, name)
		}
		// The value is never quoted back: it is a secret.
		if x.Value == "" {
			return nil, nil, fmt.Errorf("%w: header %s has an empty value", ErrConfig, name)
		}
		if !validHeaderValue(x.Value) {
			return nil, nil, fmt.Errorf("%w: header %s has a control character in its value", ErrConfig, name)
		}
		if _, seen := h[name]; !seen {
			names = append(names, name)
		}
		h[name] = append(h[name], x.Value)
	}
	slices.Sort(names)
	return h, names, nil
}

// validHeaderName reports whether s is an HTTP token (RFC 9110, 5.6.2):
// visible ASCII but delimiters.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		case c > 0x20 && c < 0x7f && !strings.ContainsRune(`"(),/:;<=>?@[\]{}`, rune(c)):
		default:
			return false
		}
	}
	return true
}

// validHeaderValue reports whether s may be a field value: no control
// characters but horizontal tab, so it cannot end the header early.
func validHeaderValue(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 0x20 && c != '\t') || c == 0x7f {
			return false
		}
	}
	return true
}
