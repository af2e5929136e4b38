package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"strings"

	"github.com/stampedeless/stampedeless/internal/lograte"
)

// RedisLogger routes the Redis client library's own log lines (redis.SetLogger)
// into log, so --log-format json stays JSON. They go out at debug level,
// rate-limited by their format: while Redis is down the library retries
// about twice a second, and the Client already logs Redis going away and
// coming back, once each.
type RedisLogger struct {
	log   *slog.Logger
	limit lograte.Limiter
}

// NewRedisLogger returns a RedisLogger writing to log.
func NewRedisLogger(log *slog.Logger) *RedisLogger { return &RedisLogger{log: log} }

// Printf logs one of the library's lines.
func (l *RedisLogger) Printf(ctx context.Context, format string, v ...any) {
	if !l.log.Enabled(ctx, slog.LevelDebug) {
		return
	}
	n, ok := l.limit.Allow(format)
	if !ok {
		return
	}
	l.log.DebugContext(ctx, "redis client: "+strings.TrimSpace(fmt.Sprintf(format, v...)), "lines", n)
}
