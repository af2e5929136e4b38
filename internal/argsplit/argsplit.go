// Package argsplit splits a line into arguments as Redis's sdssplitargs
// does: for an inline command (resp's reader), a script's shebang and a
// library's first line (scripting).
package argsplit

// Split splits line into arguments as Redis's sdssplitargs does, for
// an inline command, a script's shebang or a config line: spaces separate
// them, "double" quotes take C escapes and \xHH, 'single' quotes take only
// \', and a closing quote must end its argument. It appends the arguments
// to args, their bytes to buf; arguments point into buf, which never grows
// past len(line) since unquoting never lengthens the text, so a buf with
// that room is never reallocated. ok is false for unbalanced quotes.
func Split(args [][]byte, buf, line []byte) ([][]byte, bool) {
	out := buf
	i := 0
	for {
		for i < len(line) && (isSpace(line[i]) || line[i] == '\v' || line[i] == '\f') {
			i++
		}
		if i == len(line) {
			return args, true
		}
		start := len(out)
		var quote byte
		for done := false; !done; {
			if i == len(line) {
				if quote != 0 {
					return args, false
				}
				break
			}
			c := line[i]
			switch {
			case quote == '"' && c == '\\' && i+3 < len(line) && line[i+1] == 'x' && isHex(line[i+2]) && isHex(line[i+3]):
				out = append(out, unhex(line[i+2])<<4|unhex(line[i+3]))
				i += 3
			case quote == '"' && c == '\\' && i+1 < len(line):
				i++
				out = append(out, unescape(line[i]))
			case quote == '\'' && c == '\\' && i+1 < len(line) && line[i+1] == '\'':
				i++
				out = append(out, '\'')
			case quote != 0 && c == quote:
				// A closing quote must end the argument.
				if next := i + 1; next < len(line) && !isSpace(line[next]) && line[next] != '\v' && line[next] != '\f' {
					return args, false
				}
				quote = 0
				done = true
			case quote == 0 && isSpace(c):
				done = true
			case quote == 0 && (c == '"' || c == '\''):
				quote = c
			default:
				out = append(out, c)
			}
			i++
		}
		args = append(args, out[start:len(out):len(out)])
	}
}

// isSpace reports the bytes that end an unquoted inline argument. Between
// arguments Redis also skips \v and \f (any C isspace byte). An inline
// line never holds a NUL (resp's reader cuts it there).
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r'
}

func isHex(c byte) bool {
	return ('0' <= c && c <= '9') || ('a' <= c && c <= 'f') || ('A' <= c && c <= 'F')
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 't':
		return '\t'
	case 'b':
		return '\b'
	case 'a':
		return '\a'
	}
	return c
}
