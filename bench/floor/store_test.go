package main

import (
	"bufio"
	"bytes"
	"strings"
	"testing"
)

// TestParseCommandPartial feeds the event loop's parser every prefix of a
// pipelined request: a prefix that ends inside a command must consume
// nothing, and the whole buffer must parse into the same commands the
// goroutine server's reader sees.
func TestParseCommandPartial(t *testing.T) {
	req := "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$5\r\nva\r\nl\r\n" + // a value holding CRLF
		"PING\r\n" + // inline
		"*2\r\n$3\r\nGET\r\n$0\r\n\r\n"
	var want []string
	r := bufio.NewReader(strings.NewReader(req))
	for {
		args, err := readCommand(r, nil)
		if err != nil {
			break
		}
		want = append(want, string(bytes.Join(args, []byte("|"))))
	}
	if len(want) != 3 {
		t.Fatalf("readCommand parsed %d commands, want 3: %q", len(want), want)
	}
	for cut := 0; cut <= len(req); cut++ {
		buf := []byte(req[:cut])
		var got []string
		off := 0
		for {
			args, used, err := parseCommand(buf[off:], nil)
			if err != nil {
				t.Fatalf("prefix %d: %v", cut, err)
			}
			if used == 0 {
				break
			}
			got = append(got, string(bytes.Join(args, []byte("|"))))
			off += used
		}
		if len(got) > len(want) || strings.Join(got, ",") != strings.Join(want[:len(got)], ",") {
			t.Fatalf("prefix %d parsed %q, want a prefix of %q", cut, got, want)
		}
		if cut == len(req) && len(got) != len(want) {
			t.Fatalf("whole request parsed %q, want %q", got, want)
		}
	}
	if _, _, err := parseCommand([]byte("*2\r\n:3\r\n"), nil); err == nil {
		t.Fatal("a non-bulk argument parsed")
	}
	if _, _, err := parseCommand([]byte("*99999999\r\n"), nil); err == nil {
		t.Fatal("an oversized multibulk count parsed")
	}
}
