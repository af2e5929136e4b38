// Package logtest collects a server's log in a test and parses the lines
// of its JSON handler (--log-format json).
package logtest

import (
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
)

// Buffer is a log's output. It is safe for concurrent use.
type Buffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// String returns what was written so far.
func (l *Buffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// JSON returns a logger writing JSON lines to l at level.
func (l *Buffer) JSON(level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(l, &slog.HandlerOptions{Level: level}))
}

// Lines parses the lines written so far, one JSON object each; a line that
// is not JSON (another logger's plain text) fails the test.
func (l *Buffer) Lines(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(l.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("a log line is not JSON: %q", line)
		}
		out = append(out, m)
	}
	return out
}

// With returns the parsed lines whose message starts with msg.
func (l *Buffer) With(t testing.TB, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, m := range l.Lines(t) {
		if strings.HasPrefix(fmt.Sprint(m["msg"]), msg) {
			out = append(out, m)
		}
	}
	return out
}
