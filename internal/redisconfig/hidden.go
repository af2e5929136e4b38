package redisconfig

import (
	"math"
	"strconv"
)

// hiddenParams are Redis 7.0's hidden parameters: CONFIG GET answers them
// only by their exact name, never for a pattern, and CONFIG SET takes what
// Redis takes. They are debugging knobs of Redis's persistence and
// watchdog, with no effect here.
var hiddenParams = []Param{
	{Name: "key-load-delay", Default: "0", Check: intRange(math.MinInt32, math.MaxInt32), Hidden: true},
	{Name: "loading-process-events-interval-bytes", Default: "2097152", Check: intRange(1024, math.MaxInt32), Hidden: true},
	{Name: "rdb-key-save-delay", Default: "0", Check: intRange(math.MinInt32, math.MaxInt32), Hidden: true},
	{Name: "use-exit-on-panic", Default: "no", Check: yesNo, Hidden: true},
	{Name: "watchdog-period", Default: "0", Check: watchdogPeriod, Hidden: true},
}

// watchdogPeriod checks watchdog-period as Redis does, and raises a period
// under two of Redis's cron ticks (hz 10) to 200 ms, as Redis applies it.
func watchdogPeriod(v string) (string, error) {
	v, err := intRange(0, math.MaxInt32)(v)
	if err != nil {
		return "", err
	}
	if n, _ := strconv.Atoi(v); n > 0 && n < 200 {
		return "200", nil
	}
	return v, nil
}
