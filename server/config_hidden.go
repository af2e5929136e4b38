package server

import (
	"math"
	"strconv"
)

// hiddenParams are Redis 7.0's hidden parameters: CONFIG GET answers them
// only by their exact name, never for a pattern, and CONFIG SET takes what
// Redis takes. They are debugging knobs of Redis's persistence and
// watchdog, with no effect here.
var hiddenParams = []inertParam{
	{name: "key-load-delay", value: "0", check: inertInt(math.MinInt32, math.MaxInt32), hidden: true},
	{name: "loading-process-events-interval-bytes", value: "2097152", check: inertInt(1024, math.MaxInt32), hidden: true},
	{name: "rdb-key-save-delay", value: "0", check: inertInt(math.MinInt32, math.MaxInt32), hidden: true},
	{name: "use-exit-on-panic", value: "no", check: inertBool, hidden: true},
	{name: "watchdog-period", value: "0", check: watchdogPeriod, hidden: true},
}

func init() {
	for i := range hiddenParams {
		configParams = append(configParams, hiddenParams[i].configParam())
	}
}

// watchdogPeriod checks watchdog-period as Redis does, and raises a period
// under two of Redis's cron ticks (hz 10) to 200 ms, as Redis applies it.
func watchdogPeriod(v string) (string, error) {
	v, err := inertInt(0, math.MaxInt32)(v)
	if err != nil {
		return "", err
	}
	if n, _ := strconv.Atoi(v); n > 0 && n < 200 {
		return "200", nil
	}
	return v, nil
}
