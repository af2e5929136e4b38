package resp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// readAll parses every command in input, feeding the reader through r.
func readAll(r io.Reader, lim Limits, authenticated bool) ([][]string, error) {
	rd := NewReader(r)
	var out [][]string
	for {
		args, err := rd.ReadCommand(lim, authenticated)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return out, nil
			}
			return out, err
		}
		cmd := make([]string, len(args))
		for i, a := range args {
			cmd[i] = string(a)
		}
		out = append(out, cmd)
	}
}

func TestReaderParsesMultibulkAndInline(t *testing.T) {
	input := "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$5\r\nhello\r\n" +
		"*0\r\n" + // empty multibulk: skipped, as Redis does
		"PING\r\n" +
		"\r\n" + // empty inline line: skipped
		"set \"a b\" 'c\\'d' \"\\x41\\n\"\n" +
		"*2\r\n$3\r\nGET\r\n$0\r\n\r\n"
	want := [][]string{
		{"SET", "k", "hello"},
		{"PING"},
		{"set", "a b", "c'd", "A\n"},
		{"GET", ""},
	}
	got, err := readAll(strings.NewReader(input), Limits{}, true)
	if err != nil {
		t.Fatal(err)
	}
	if !equalCommands(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func equalCommands(a, b [][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if strings.Join(a[i], "\x00") != strings.Join(b[i], "\x00") || len(a[i]) != len(b[i]) {
			return false
		}
	}
	return true
}

// TestReaderEverySplit feeds a pipeline split at every byte boundary, one
// byte per read and in halves, since TCP may fragment anywhere.
func TestReaderEverySplit(t *testing.T) {
	input := "*2\r\n$4\r\nECHO\r\n$11\r\nhello\r\nworld\r\n" + "PING x\r\n" + "*1\r\n$4\r\nPING\r\n"
	want, err := readAll(strings.NewReader(input), Limits{}, true)
	if err != nil || len(want) != 3 {
		t.Fatalf("whole input: %q, %v", want, err)
	}
	got, err := readAll(iotest.OneByteReader(strings.NewReader(input)), Limits{}, true)
	if err != nil || !equalCommands(got, want) {
		t.Fatalf("one byte at a time: %q, %v; want %q", got, err, want)
	}
	for i := 1; i < len(input); i++ {
		r := io.MultiReader(strings.NewReader(input[:i]), strings.NewReader(input[i:]))
		got, err := readAll(r, Limits{}, true)
		if err != nil || !equalCommands(got, want) {
			t.Fatalf("split at %d: %q, %v; want %q", i, got, err, want)
		}
	}
}

func TestReaderLimits(t *testing.T) {
	tests := []struct {
		name          string
		input         string
		lim           Limits
		unauth        bool
		wantErr       string
		wantAfterArgs int // commands parsed before the error
	}{
		{name: "huge multibulk count", input: "*4000000000000000000\r\n", wantErr: "Protocol error: invalid multibulk length"},
		{name: "multibulk over int32", input: "*2147483648\r\n", wantErr: "Protocol error: invalid multibulk length"},
		{name: "multibulk over max args", input: "*11\r\n", lim: Limits{MaxArgs: 10}, wantErr: "Protocol error: invalid multibulk length"},
		{name: "bulk of 2^40", input: "*1\r\n$1099511627776\r\n", wantErr: "Protocol error: invalid bulk length"},
		{name: "declared 2GB bulk", input: "*2\r\n$3\r\nSET\r\n$2147483648\r\n", wantErr: "Protocol error: invalid bulk length"},
		{name: "negative bulk (panics redcon)", input: "*1\r\n$-2\r\n", wantErr: "Protocol error: invalid bulk length"},
		{name: "bulk over max", input: "*1\r\n$101\r\n", lim: Limits{MaxBulk: 100}, wantErr: "Protocol error: invalid bulk length"},
		{name: "not a bulk", input: "*1\r\n:1\r\n", wantErr: "Protocol error: expected '$', got ':'"},
		{name: "garbage count", input: "*x\r\n", wantErr: "Protocol error: invalid multibulk length"},
		{name: "unbalanced quotes", input: "SET \"a b\n", wantErr: "Protocol error: unbalanced quotes in request"},
		{name: "quote then text", input: "SET \"a\"b c\n", wantErr: "Protocol error: unbalanced quotes in request"},
		{name: "unauthenticated args", input: "*11\r\n", unauth: true, wantErr: "Protocol error: unauthenticated multibulk length"},
		{name: "unauthenticated bulk", input: "*1\r\n$16385\r\n", unauth: true, wantErr: "Protocol error: unauthenticated bulk length"},
		{name: "query limit", input: "*2\r\n$60\r\n" + strings.Repeat("x", 60) + "\r\n$60\r\n", lim: Limits{MaxQuery: 100},
			wantErr: "Protocol error: query buffer limit exceeded"},
		{name: "error after good command", input: "PING\r\n*1\r\n$-5\r\n", wantErr: "Protocol error: invalid bulk length", wantAfterArgs: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAll(strings.NewReader(tt.input), tt.lim, !tt.unauth)
			if err == nil || err.Error() != tt.wantErr || !errors.As(err, new(ProtocolError)) {
				t.Fatalf("err = %v, want %q", err, tt.wantErr)
			}
			if len(got) != tt.wantAfterArgs {
				t.Fatalf("parsed %d commands before the error, want %d", len(got), tt.wantAfterArgs)
			}
		})
	}
}

// TestReaderBulkLimitIsInclusive: a bulk string of exactly the limit is
// read whole, and one byte more is refused by its header, as Redis compares
// the length with proto-max-bulk-len (and the unauthenticated 16 KiB).
func TestReaderBulkLimitIsInclusive(t *testing.T) {
	for _, tt := range []struct {
		name   string
		lim    Limits
		unauth bool
		max    int
		refuse string
	}{
		{"configured limit", Limits{MaxBulk: 100}, false, 100, "Protocol error: invalid bulk length"},
		{"unauthenticated", Limits{}, true, unauthMaxBulk, "Protocol error: unauthenticated bulk length"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			value := strings.Repeat("v", tt.max)
			got, err := readAll(strings.NewReader(fmt.Sprintf("*1\r\n$%d\r\n%s\r\n", len(value), value)), tt.lim, !tt.unauth)
			if err != nil || len(got) != 1 || len(got[0]) != 1 || got[0][0] != value {
				t.Fatalf("a bulk of exactly %d bytes: %d commands, err %v; want it read whole", tt.max, len(got), err)
			}
			over := value + "v"
			_, err = readAll(strings.NewReader(fmt.Sprintf("*1\r\n$%d\r\n%s\r\n", len(over), over)), tt.lim, !tt.unauth)
			if err == nil || err.Error() != tt.refuse || !errors.As(err, new(ProtocolError)) {
				t.Fatalf("a bulk of %d bytes: err %v, want %q", len(over), err, tt.refuse)
			}
		})
	}
	// The default limit, by its headers alone (a 512 MiB value is too much
	// to build in a test): at the limit the reader waits for the value and
	// meets a clean end of input; one over is refused at the header.
	if _, err := readAll(strings.NewReader(fmt.Sprintf("*1\r\n$%d\r\n", DefaultMaxBulk)), Limits{}, true); err != nil {
		t.Errorf("header of a %d-byte bulk: %v, want it accepted", DefaultMaxBulk, err)
	}
	_, err := readAll(strings.NewReader(fmt.Sprintf("*1\r\n$%d\r\n", DefaultMaxBulk+1)), Limits{}, true)
	if err == nil || err.Error() != "Protocol error: invalid bulk length" {
		t.Errorf("header of a %d-byte bulk: %v, want invalid bulk length", DefaultMaxBulk+1, err)
	}
}

// endless is a reader that never runs dry, counting what it hands out.
type endless struct {
	b    byte
	read int
}

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = e.b
	}
	e.read += len(p)
	return len(p), nil
}

// TestReaderLongLinesStopEarly checks that a line without an end is refused
// once it passes the inline limit, without buffering the rest of it.
func TestReaderLongLinesStopEarly(t *testing.T) {
	tests := []struct {
		prefix, wantErr string
	}{
		{"", "Protocol error: too big inline request"},
		{"*", "Protocol error: too big mbulk count string"},
		{"*1\r\n$", "Protocol error: too big bulk count string"},
	}
	for _, tt := range tests {
		src := &endless{b: '1'}
		if tt.prefix == "" {
			src.b = 'a'
		}
		_, err := readAll(io.MultiReader(strings.NewReader(tt.prefix), src), Limits{}, true)
		if err == nil || err.Error() != tt.wantErr {
			t.Errorf("%q...: err = %v, want %q", tt.prefix, err, tt.wantErr)
		}
		if src.read > 4*maxInline {
			t.Errorf("%q...: read %d bytes before refusing, want at most %d", tt.prefix, src.read, 4*maxInline)
		}
	}
}

// TestReaderBufferGrowsWithData checks a large declared bulk does not
// allocate its declared size before the bytes arrive.
func TestReaderBufferGrowsWithData(t *testing.T) {
	const declared = 400 << 20
	input := "*1\r\n$" + "419430400" + "\r\n" + strings.Repeat("x", 1<<20)
	rd := NewReader(strings.NewReader(input))
	_, err := rd.ReadCommand(Limits{}, true)
	if !errors.Is(err, io.EOF) {
		t.Fatalf("err = %v, want EOF while waiting for the rest of the bulk", err)
	}
	if cap(rd.buf) > 4<<20 {
		t.Fatalf("buffer grew to %d bytes for 1 MiB of a %d-byte bulk", cap(rd.buf), declared)
	}
}

// TestReaderTrimsToRecentPeak: a buffer grown for a large command stays
// while such commands may come, and shrinks at the second Trim after the
// last one, as Redis's cron resizes a query buffer against its peak.
func TestReaderTrimsToRecentPeak(t *testing.T) {
	var src bytes.Buffer
	rd := NewReader(&src)
	read := func(args ...string) {
		t.Helper()
		src.WriteString(encodeCommand(args...))
		if _, err := rd.ReadCommand(Limits{}, true); err != nil {
			t.Fatal(err)
		}
	}
	read("SET", "k", strings.Repeat("v", 1<<20))
	grown := rd.Size()
	if grown < 1<<20 {
		t.Fatalf("buffer of %d bytes for a 1 MiB value", grown)
	}
	read("PING")
	if rd.Trim(); rd.Size() != grown {
		t.Fatalf("trimmed to %d bytes within the large command's period", rd.Size())
	}
	read("SET", "k", "small")
	if rd.Trim(); rd.Size() != readSize {
		t.Fatalf("Size() = %d after a period of small commands, want %d", rd.Size(), readSize)
	}
	read("SET", "k", strings.Repeat("v", 100<<10)) // grows again, as needed
	if rd.Trim(); rd.Size() < 100<<10 {
		t.Fatalf("trimmed below the command in its period: %d bytes", rd.Size())
	}
	if !rd.Release() || rd.Size() != 0 {
		t.Fatal("a drained buffer was not released")
	}
}

func TestReaderBeforeBlock(t *testing.T) {
	input := encodeCommand("PING") + encodeCommand("PING")
	rd := NewReader(strings.NewReader(input))
	blocks := 0
	rd.BeforeBlock = func() error { blocks++; return nil }
	for range 2 {
		if _, err := rd.ReadCommand(Limits{}, true); err != nil {
			t.Fatal(err)
		}
	}
	// One read brought both commands: the second needed no wait.
	if blocks != 1 {
		t.Fatalf("BeforeBlock ran %d times, want 1", blocks)
	}
}

// shortHeader agrees with line and parseInt wherever it reads a header,
// and leaves to them every header it does not.
func TestShortHeader(t *testing.T) {
	var cases []string
	for _, digits := range []string{"", "0", "7", "42", "04", "00", "-1", "-0", "+3", "1a", "123456789012345678",
		"1234567890123456789", "9223372036854775807", "99999999999999999999999", "1\x002"} {
		for _, tail := range []string{"", "\r", "\r\n", "\rx", "\n", " \r\n", "\x00\r\n"} {
			cases = append(cases, "$"+digits+tail)
		}
	}
	for _, c := range cases {
		r := &Reader{buf: []byte(c), w: len(c)}
		n, line, ok := shortHeader(r.buf)
		if !ok {
			continue
		}
		wantLine, lineOK := r.line(0)
		want, intOK := parseInt(r.buf[1:wantLine])
		if !lineOK || !intOK || n != want || line != wantLine {
			t.Errorf("shortHeader(%q) = %d, %d; line and parseInt: %d %v, %d %v", c, n, line, wantLine, lineOK, want, intOK)
		}
	}
	for c, want := range map[string]bool{"$5\r\n": true, "*2\r\n": true, "$0\r\n": true, "$5\r": false,
		"$5": false, "$05\r\n": false, "$-1\r\n": false, "$\r\n": false, "$1234567890123456789\r\n": false} {
		if _, _, ok := shortHeader([]byte(c)); ok != want {
			t.Errorf("shortHeader(%q) ok = %v, want %v", c, ok, want)
		}
	}
}
