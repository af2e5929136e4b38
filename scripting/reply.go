package scripting

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"

	"github.com/stampedeless/stampedeless/internal/redisnum"
)

// Kind is a RESP reply's type, named by the byte that starts it on the
// wire.
type Kind byte

// The reply kinds ParseReply knows: RESP2's five and RESP3's.
const (
	KindStatus    Kind = '+'
	KindError     Kind = '-'
	KindInt       Kind = ':'
	KindBulk      Kind = '$'
	KindArray     Kind = '*'
	KindNull      Kind = '_'
	KindMap       Kind = '%'
	KindSet       Kind = '~'
	KindDouble    Kind = ','
	KindBool      Kind = '#'
	KindBigNumber Kind = '('
	KindVerbatim  Kind = '='
	KindPush      Kind = '>'
	KindBlobError Kind = '!'
)

// Reply is one parsed RESP reply. A RESP2 null bulk string or null array
// keeps its kind (KindBulk, KindArray) with Null set; RESP3's null is
// KindNull. Attributes ('|') are read and dropped, as Redis's own reply
// parser drops them.
type Reply struct {
	Kind Kind
	// Null marks $-1 and *-1.
	Null bool
	// Str is the text of a status, error, bulk, big number, double or
	// verbatim reply (for a verbatim reply, without its format prefix).
	// It aliases the parsed bytes.
	Str []byte
	// Format is a verbatim reply's three-letter format ("txt", "mkd").
	Format string
	// Int is an integer reply's value.
	Int int64
	// Double is a double reply's value.
	Double float64
	// Bool is a boolean reply's value.
	Bool bool
	// Elems are an array's, set's or push's elements; a map's keys and
	// values alternate.
	Elems []Reply
}

// ErrMalformed is wrapped by ParseReply's errors; ErrIncomplete, which
// wraps it too, marks a reply that is well-formed so far but cut short,
// so a reader of a stream knows to read more.
var (
	ErrMalformed  = errors.New("malformed RESP reply")
	ErrIncomplete = fmt.Errorf("%w: reply cut short", ErrMalformed)
)

// maxReplyDepth bounds nesting, so a hostile or broken reply cannot
// exhaust the goroutine stack; real command replies nest a few levels.
const maxReplyDepth = 512

// ParseReply parses the one reply at the start of b and returns it with
// the number of bytes it took. An error wraps ErrMalformed, and
// ErrIncomplete when b ends inside the reply.
func ParseReply(b []byte) (Reply, int, error) {
	p := replyParser{b: b}
	r, err := p.parse(0)
	if err != nil {
		return Reply{}, 0, err
	}
	return r, p.pos, nil
}

type replyParser struct {
	b   []byte
	pos int
}

func (p *replyParser) fail(what string) error {
	return fmt.Errorf("%w: %s at byte %d", ErrMalformed, what, p.pos)
}

func (p *replyParser) short() error {
	return fmt.Errorf("%w at byte %d", ErrIncomplete, p.pos)
}

// line returns the text after the type byte up to CRLF and moves past it.
func (p *replyParser) line() ([]byte, error) {
	i := bytes.IndexByte(p.b[p.pos:], '\r')
	switch {
	case i < 0 || p.pos+i+1 == len(p.b):
		return nil, p.short()
	case p.b[p.pos+i+1] != '\n':
		return nil, p.fail("line without CRLF")
	}
	l := p.b[p.pos : p.pos+i]
	p.pos += i + 2
	return l, nil
}

// length reads a length line; -1 is allowed only where null is.
func (p *replyParser) length(nullable bool) (int, bool, error) {
	l, err := p.line()
	if err != nil {
		return 0, false, err
	}
	n, ok := redisnum.ParseInt(l)
	if !ok {
		return 0, false, p.fail("bad length")
	}
	if n == -1 && nullable {
		return 0, true, nil
	}
	if n < 0 || n > 1<<40 {
		return 0, false, p.fail("length out of range")
	}
	return int(n), false, nil
}

// blob reads n bytes and their CRLF.
func (p *replyParser) blob(n int) ([]byte, error) {
	if len(p.b)-p.pos < n+2 {
		return nil, p.short()
	}
	if p.b[p.pos+n] != '\r' || p.b[p.pos+n+1] != '\n' {
		return nil, p.fail("string without CRLF")
	}
	s := p.b[p.pos : p.pos+n]
	p.pos += n + 2
	return s, nil
}

func (p *replyParser) parse(depth int) (Reply, error) {
	if depth > maxReplyDepth {
		return Reply{}, p.fail("nesting too deep")
	}
	if p.pos >= len(p.b) {
		return Reply{}, p.short()
	}
	r := Reply{Kind: Kind(p.b[p.pos])}
	p.pos++
	var err error
	switch r.Kind {
	case KindStatus, KindError, KindBigNumber:
		r.Str, err = p.line()
	case KindInt:
		var l []byte
		if l, err = p.line(); err == nil {
			var ok bool
			if r.Int, ok = redisnum.ParseInt(l); !ok {
				err = p.fail("bad integer")
			}
		}
	case KindDouble:
		if r.Str, err = p.line(); err == nil {
			var ok bool
			if r.Double, ok = parseRESPDouble(r.Str); !ok {
				err = p.fail("bad double")
			}
		}
	case KindNull:
		var l []byte
		if l, err = p.line(); err == nil && len(l) != 0 {
			err = p.fail("bad null")
		}
	case KindBool:
		var l []byte
		if l, err = p.line(); err == nil {
			switch string(l) {
			case "t":
				r.Bool = true
			case "f":
			default:
				err = p.fail("bad boolean")
			}
		}
	case KindBulk, KindBlobError, KindVerbatim:
		var n int
		n, r.Null, err = p.length(r.Kind == KindBulk)
		if err == nil && !r.Null {
			r.Str, err = p.blob(n)
		}
		if err == nil && r.Kind == KindVerbatim {
			if len(r.Str) < 4 || r.Str[3] != ':' {
				err = p.fail("bad verbatim format")
			} else {
				r.Format, r.Str = string(r.Str[:3]), r.Str[4:]
			}
		}
	case KindArray, KindSet, KindPush, KindMap:
		var n int
		n, r.Null, err = p.length(r.Kind == KindArray)
		if err != nil || r.Null {
			break
		}
		if r.Kind == KindMap {
			n *= 2
		}
		r.Elems = make([]Reply, 0, min(n, (len(p.b)-p.pos)/3))
		for range n {
			var e Reply
			if e, err = p.parse(depth + 1); err != nil {
				break
			}
			r.Elems = append(r.Elems, e)
		}
	case '|':
		var n int
		if n, _, err = p.length(false); err != nil {
			break
		}
		for range 2 * n {
			if _, err = p.parse(depth + 1); err != nil {
				return Reply{}, err
			}
		}
		return p.parse(depth + 1)
	default:
		p.pos--
		err = p.fail("unknown reply type " + strconv.QuoteRune(rune(r.Kind)))
	}
	if err != nil {
		return Reply{}, err
	}
	return r, nil
}

// parseRESPDouble parses a RESP3 double's text: what strtod takes, with
// "inf", "-inf" and "nan" spelt as RESP3 spells them.
func parseRESPDouble(s []byte) (float64, bool) {
	f, n, _ := redisnum.Strtod(s)
	return f, n == len(s) && n > 0
}
