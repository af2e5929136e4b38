package commandstest

import (
	"bytes"
	"errors"
	"math"
	"strconv"
)

// Err is an error reply: its text, as "ERR syntax error".
type Err string

// Map is a RESP3 map: its keys and values in the order sent.
type Map []any

// Set is a RESP3 set, in the order sent.
type Set []any

// Decode reads one RESP2 or RESP3 reply from b into a value a test
// compares with reflect.DeepEqual, and returns the bytes after it. Simple
// strings, bulk strings, verbatim strings (without their format) and big
// numbers are strings; integers int64; doubles float64; booleans bool;
// nulls nil; errors Err; arrays (and pushes) []any; maps Map; sets Set.
func Decode(b []byte) (v any, rest []byte, err error) {
	line, rest, ok := bytes.Cut(b, []byte("\r\n"))
	if !ok || len(line) == 0 {
		return nil, b, errors.New("commandstest: truncated reply")
	}
	kind, text := line[0], string(line[1:])
	switch kind {
	case '+', '(':
		return text, rest, nil
	case '-':
		return Err(text), rest, nil
	case '_':
		return nil, rest, nil
	case ':':
		n, err := strconv.ParseInt(text, 10, 64)
		return n, rest, err
	case '#':
		return text == "t", rest, nil
	case ',':
		switch text {
		case "inf":
			return math.Inf(1), rest, nil
		case "-inf":
			return math.Inf(-1), rest, nil
		}
		f, err := strconv.ParseFloat(text, 64)
		return f, rest, err
	case '$', '=':
		n, err := strconv.Atoi(text)
		if err != nil || n < 0 {
			return nil, rest, err
		}
		if len(rest) < n+2 {
			return nil, b, errors.New("commandstest: truncated bulk string")
		}
		s := string(rest[:n])
		if kind == '=' {
			s = s[4:] // "txt:"
		}
		return s, rest[n+2:], nil
	case '*', '>', '~', '%':
		n, err := strconv.Atoi(text)
		if err != nil || n < 0 {
			return nil, rest, err
		}
		if kind == '%' {
			n *= 2
		}
		elems := make([]any, n)
		for i := range elems {
			if elems[i], rest, err = Decode(rest); err != nil {
				return nil, rest, err
			}
		}
		switch kind {
		case '%':
			return Map(elems), rest, nil
		case '~':
			return Set(elems), rest, nil
		}
		return elems, rest, nil
	}
	return nil, b, errors.New("commandstest: unknown reply type " + strconv.QuoteRune(rune(kind)))
}

// Normalize returns want as Decode would return it: its ints int64.
func Normalize(want any) any {
	switch w := want.(type) {
	case int:
		return int64(w)
	case []any:
		return normalizeAll(w)
	case Map:
		return Map(normalizeAll(w))
	case Set:
		return Set(normalizeAll(w))
	}
	return want
}

func normalizeAll(ws []any) []any {
	out := make([]any, len(ws))
	for i, w := range ws {
		out[i] = Normalize(w)
	}
	return out
}
