package resp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// FuzzReader: whatever arrives, the reader returns the same commands and
// the same error whether the bytes come in one read or split in two; every
// argument respects the limits; and the commands, encoded again as
// multibulk, read back the same.
func FuzzReader(f *testing.F) {
	for _, seed := range []string{
		"*1\r\n$4\r\nPING\r\n", "PING\r\n", "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*0\r\n\r\n",
		"SET k \"a\\x41\\n\" 'b c'\r\n", "*-1\r\n*1\r\n$-1\r\n", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$20\r\nshort\r\n",
		"*1\r\n$4\r\nPINGxx", "*4000000000000000000\r\n", "$5\r\nhello\r\n", "\"unbalanced\r\n", "*1\r\n$0\r\n\r\n",
	} {
		f.Add([]byte(seed), uint16(3), true)
	}
	lim := Limits{MaxBulk: 1 << 10, MaxArgs: 64, MaxQuery: 4 << 10}
	f.Fuzz(func(t *testing.T, data []byte, split uint16, authenticated bool) {
		whole, wholeErr := readAll(bytes.NewReader(data), lim, authenticated)
		at := int(split) % (len(data) + 1)
		parts, partsErr := readAll(io.MultiReader(bytes.NewReader(data[:at]), bytes.NewReader(data[at:])), lim, authenticated)
		if !equalCommands(whole, parts) || fmt.Sprint(wholeErr) != fmt.Sprint(partsErr) {
			t.Fatalf("split at %d changed the result:\nwhole %q, %v\nsplit %q, %v", at, whole, wholeErr, parts, partsErr)
		}
		var pe ProtocolError
		if wholeErr != nil && !errors.As(wholeErr, &pe) {
			t.Fatalf("ended with %v, want the end of input or a ProtocolError", wholeErr)
		}
		maxArgs, maxBulk := lim.MaxArgs, lim.MaxBulk
		if !authenticated {
			maxArgs, maxBulk = unauthMaxArgs, unauthMaxBulk
		}
		var again bytes.Buffer
		for _, cmd := range whole {
			// A multibulk command keeps to the limits; an inline one, as in
			// Redis, only to the inline line's length.
			over, total := len(cmd) > maxArgs, 0
			for _, a := range cmd {
				over = over || int64(len(a)) > maxBulk
				total += len(a)
			}
			if len(cmd) == 0 || over && total >= maxInline {
				t.Fatalf("command of %d arguments, %d bytes", len(cmd), total)
			}
			again.WriteString(encodeCommand(cmd...))
		}
		back, err := readAll(&again, Limits{}, true)
		if err != nil || !equalCommands(back, whole) {
			t.Fatalf("re-encoded commands read back as %q, %v; want %q", back, err, whole)
		}
	})
}

// encodeCommand is args as a multibulk command.
func encodeCommand(args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.String()
}
