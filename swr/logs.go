package swr

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/stampedeless/stampedeless/internal/lograte"
	"github.com/stampedeless/stampedeless/loader"
)

// DefaultSlowFill is Options.SlowFill when it is zero.
const DefaultSlowFill = time.Second

// fillLogs writes the log lines of the Filler's origin calls an operator
// acts on: failures (and the cooldowns they start), recoveries and slow
// fills. Each kind is rate-limited per loader, so a failing origin behind
// thousands of keys costs one line per interval, which counts them (the
// events held back are logged when the interval ends); the key
// itself is logged only at debug level, where one key is worth the bytes.
// Only the slow branches (a failure, a recovery, a slow fill) reach it.
type fillLogs struct {
	log      *slog.Logger
	slow     time.Duration // 0: slow fills are not logged
	failures lograte.Limiter
	recovers lograte.Limiter
	slows    lograte.Limiter
}

func newFillLogs(log *slog.Logger, slow time.Duration) *fillLogs {
	if log == nil {
		log = slog.Default()
	}
	switch {
	case slow == 0:
		slow = DefaultSlowFill
	case slow < 0:
		slow = 0
	}
	return &fillLogs{log: log, slow: slow}
}

// withKey adds the key to a line's attributes at debug level only.
func (l *fillLogs) withKey(attrs []any, key string) []any {
	if l.log.Enabled(context.Background(), slog.LevelDebug) {
		attrs = append(attrs, "key", key)
	}
	return attrs
}

// failed logs an origin call of ld's for key that failed with err, and
// the cooldown it started, which ends at until.
func (l *fillLogs) failed(ld *loader.Loader, key string, err error, cooldown time.Duration) {
	reason := err.Error()
	var oe *loader.OriginError
	if errors.As(err, &oe) {
		reason = oe.Reason
	}
	limit(&l.failures, ld.Prefix(), func(n int) {
		l.log.Warn("origin fill failed; the key cools down before its next origin call", l.withKey([]any{
			"loader", ld.Prefix(), "err", reason, "failures", n, "cooldown", cooldown.Round(time.Millisecond)}, key)...)
	})
}

// limit writes line now if lim lets the event of key through, or else,
// for the events held back, when lim's interval ends: the end of a storm
// is logged with its count though no event follows it.
func limit(lim *lograte.Limiter, key string, line func(events int)) {
	if n, ok := lim.AllowLate(key, line); ok {
		line(n)
	}
}

// recovered logs a load of ld's for key that succeeded after failures
// failures, which ends the key's cooldown.
func (l *fillLogs) recovered(ld *loader.Loader, key string, failures int) {
	limit(&l.recovers, ld.Prefix(), func(n int) {
		l.log.Info("origin answers again; the key's cooldown ended", l.withKey([]any{
			"loader", ld.Prefix(), "keys", n, "failures", failures}, key)...)
	})
}

// took logs an origin call of ld's for key that took longer than the
// slow-fill threshold, as Redis's slow log records a slow command.
func (l *fillLogs) took(ld *loader.Loader, key string, d time.Duration) {
	if l.slow == 0 || d < l.slow {
		return
	}
	limit(&l.slows, ld.Prefix(), func(n int) {
		l.log.Warn("slow fill: the origin took longer than --slow-fill", l.withKey([]any{
			"loader", ld.Prefix(), "took", d.Round(time.Millisecond), "threshold", l.slow, "fills", n}, key)...)
	})
}
