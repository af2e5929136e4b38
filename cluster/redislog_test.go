package cluster

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/internal/logtest"
	"github.com/stampedeless/stampedeless/metrics"
)

// replyError is an error reply from Redis, as go-redis returns one.
type replyError string

func (e replyError) Error() string { return string(e) }
func (replyError) RedisError()     {}

// TestRefusalsLoggedRateLimited: 1,000 error replies from the shared Redis
// (a full Redis refuses every write) are one log line that counts them.
func TestRefusalsLoggedRateLimited(t *testing.T) {
	var logs logtest.Buffer
	c := &Client{m: metrics.New().Cluster, log: logs.JSON(slog.LevelInfo)}
	var _ redis.Error = replyError("")
	for range 1000 {
		if err := c.check(replyError("OOM command not allowed when used memory > 'maxmemory'.")); err == nil {
			t.Fatal("an error reply was not returned")
		}
	}
	lines := logs.With(t, "the shared Redis refused an operation")
	if len(lines) != 1 || !strings.HasPrefix(lines[0]["err"].(string), "OOM") {
		t.Fatalf("1,000 refusals logged %v, want one line with the reply", lines)
	}
}

// TestRedisLogger: the client library's lines go out through our logger at
// debug level only, one per format per interval.
func TestRedisLogger(t *testing.T) {
	var logs logtest.Buffer
	l := NewRedisLogger(logs.JSON(slog.LevelDebug))
	for range 100 {
		l.Printf(context.Background(), "redis: discarding bad PubSub connection: %s", "EOF")
	}
	lines := logs.With(t, "redis client: ")
	if len(lines) != 1 || lines[0]["msg"] != "redis client: redis: discarding bad PubSub connection: EOF" || lines[0]["level"] != "DEBUG" {
		t.Fatalf("100 library lines logged %v, want one debug line", lines)
	}
	var quiet logtest.Buffer
	NewRedisLogger(quiet.JSON(slog.LevelInfo)).Printf(context.Background(), "redis: %s", "x")
	if quiet.String() != "" {
		t.Fatalf("at info level the library's line was logged: %s", quiet.String())
	}
}
