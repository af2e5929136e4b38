// Package redisconfig is Redis 7.0's CONFIG parameter table as values:
// the checks CONFIG SET makes of a value, with Redis's error texts
// (Integer, for every integer parameter), and the parameters that govern
// nothing here (replication, cluster, AOF, defragmentation, threads,
// Redis's own TLS and process settings, and its hidden debugging knobs)
// with their defaults and the values CONFIG SET kept (Params, Values).
// CONFIG GET answers redis-server 7.0.15's default of an inert parameter
// until CONFIG SET changes it. The parameters that act on the server are
// the server's, but for min-replicas-to-write and min-replicas-max-lag:
// kept here, and watched by the server, which has no replica to count.
package redisconfig

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/stampedeless/stampedeless/internal/memsize"
	"github.com/stampedeless/stampedeless/internal/redisnum"
)

// Param is one inert parameter. One that Redis cannot change at run time
// has no Check, and is refused as Redis refuses it.
type Param struct {
	Name string
	// Alias, if set, is the name whose value this one shares
	// (slave-priority is replica-priority).
	Alias   string
	Default string
	// Check checks a value as Redis does, and gives the form CONFIG GET
	// shows of it.
	Check func(v string) (string, error)
	// Hidden: CONFIG GET answers it by name only (hidden.go).
	Hidden bool
}

// key is the name p's value is kept under.
func (p *Param) key() string {
	if p.Alias != "" {
		return p.Alias
	}
	return p.Name
}

// Values are the values CONFIG SET gave the inert parameters. The zero
// value holds every parameter at its default.
type Values struct {
	mu sync.Mutex // guards m
	m  map[string]string
}

// Get is p's value: the one last set for it or its alias, else its default.
func (vs *Values) Get(p *Param) string {
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if v, ok := vs.m[p.key()]; ok {
		return v
	}
	return p.Default
}

// Set checks v with p.Check and keeps the form it gives; p must have a
// Check.
func (vs *Values) Set(p *Param, v string) error {
	v, err := p.Check(v)
	if err != nil {
		return err
	}
	vs.mu.Lock()
	defer vs.mu.Unlock()
	if vs.m == nil {
		vs.m = make(map[string]string)
	}
	vs.m[p.key()] = v
	return nil
}

// Integer parses an integer parameter as Redis's numeric configuration
// does, with its error texts.
func Integer(v string, lo, hi int64) (int64, error) {
	n, ok := redisnum.ParseInt([]byte(v))
	if !ok {
		return 0, errors.New("argument couldn't be parsed into an integer")
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("argument must be between %d and %d inclusive", lo, hi)
	}
	return n, nil
}

// The checks of Redis's kinds of parameter, with its error texts.

func yesNo(v string) (string, error) {
	switch strings.ToLower(v) {
	case "yes":
		return "yes", nil
	case "no":
		return "no", nil
	}
	return "", errors.New("argument must be 'yes' or 'no'")
}

func anyString(v string) (string, error) { return v, nil }

func memory(v string) (string, error) { return memoryFrom(0)(v) }

// memoryFrom checks a memory value of at least lo bytes.
func memoryFrom(lo int64) func(string) (string, error) {
	return func(v string) (string, error) {
		n, err := memsize.Parse(v)
		switch {
		case err != nil || n < 0:
			return "", errors.New("argument must be a memory value")
		case n < lo:
			return "", fmt.Errorf("argument must be between %d and %d inclusive", lo, int64(math.MaxInt64))
		}
		return strconv.FormatInt(n, 10), nil
	}
}

// backlog checks repl-backlog-size, which Redis raises to its
// smallest backlog, 16 KB.
func backlog(v string) (string, error) {
	v, err := memoryFrom(1)(v)
	if n, _ := strconv.ParseInt(v, 10, 64); err == nil && n < 16<<10 {
		v = strconv.Itoa(16 << 10)
	}
	return v, err
}

// no checks a yes-or-no parameter that this server cannot turn on,
// refusing yes with Redis's text for a build without the feature.
func onlyNo(refusal string) func(string) (string, error) {
	return func(v string) (string, error) {
		v, err := yesNo(v)
		if err == nil && v == "yes" {
			err = errors.New(refusal)
		}
		return v, err
	}
}

// hostname checks cluster-announce-hostname as Redis does.
func hostname(v string) (string, error) {
	for _, r := range v {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.') {
			return "", errors.New("Hostnames may only contain alphanumeric characters, hyphens or dots")
		}
	}
	return v, nil
}

// procTitle checks proc-title-template as Redis's
// validateProcTitleTemplate: "{{" and "}}" are braces, "{name}" one of its
// variables, a lone "}" itself, and the title it makes (of an empty process name) must not
// be empty.
func procTitle(v string) (string, error) {
	invalid := errors.New("template format is invalid or contains unknown variables")
	// What each variable expands to, empty or not, with an empty title.
	vars := map[string]bool{"title": false, "listen-addr": true, "server-mode": false, "config-file": true,
		"port": true, "tls-port": true, "unixsocket": false}
	nonEmpty := false
	for i := 0; i < len(v); i++ {
		switch {
		case strings.HasPrefix(v[i:], "{{"), strings.HasPrefix(v[i:], "}}"):
			nonEmpty = true
			i++
		case v[i] == '{':
			end := strings.IndexByte(v[i:], '}')
			if end < 0 {
				return "", invalid
			}
			expands, ok := vars[v[i+1:i+end]]
			if !ok {
				return "", invalid
			}
			nonEmpty = nonEmpty || expands
			i += end
		default:
			nonEmpty = true
		}
	}
	if !nonEmpty {
		return "", invalid
	}
	return v, nil
}

func intRange(lo, hi int64) func(string) (string, error) {
	return func(v string) (string, error) {
		n, err := Integer(v, lo, hi)
		return strconv.FormatInt(n, 10), err
	}
}

func enum(names ...string) func(string) (string, error) {
	return func(v string) (string, error) {
		for _, n := range names {
			if strings.EqualFold(v, n) {
				return n, nil
			}
		}
		return "", errors.New("argument(s) must be one of the following: " + strings.Join(names, ", "))
	}
}

// percentiles checks latency-tracking-info-percentiles: numbers from
// 0 to 100, any count of them.
func percentiles(v string) (string, error) {
	fields := strings.Fields(v)
	for i, f := range fields {
		x, err := strconv.ParseFloat(f, 64)
		switch {
		case err != nil:
			return "", errors.New("Invalid latency-tracking-info-percentiles parameters")
		case x < 0 || x > 100:
			return "", errors.New("latency-tracking-info-percentiles parameters should sit between [0.0,100.0]")
		}
		fields[i] = strconv.FormatFloat(x, 'f', -1, 64)
	}
	return strings.Join(fields, " "), nil
}

// memoryOrPercent checks maxmemory-clients: a memory value, or a
// percentage of maxmemory.
func memoryOrPercent(v string) (string, error) {
	if p, ok := strings.CutSuffix(v, "%"); ok {
		if n, ok := redisnum.ParseInt([]byte(p)); ok && n > 100 {
			return "", errors.New("percentage argument must be less or equal to 100")
		} else if ok && n >= 0 {
			return strconv.FormatInt(n, 10) + "%", nil
		}
	} else if n, err := memsize.Parse(v); err == nil && n >= 0 {
		return strconv.FormatInt(n, 10), nil
	}
	return "", errors.New("argument must be a memory or percent value")
}

// oomScores checks oom-score-adj-values: three scores from -2000 to
// 2000.
func oomScores(v string) (string, error) {
	fields := strings.Fields(v)
	if len(fields) != 3 {
		return "", errors.New("wrong number of arguments")
	}
	for _, f := range fields {
		if n, ok := redisnum.ParseInt([]byte(f)); !ok || n < -2000 || n > 2000 {
			return "", errors.New("Invalid oom-score-adj-values, elements must be between -2000 and 2000.")
		}
	}
	return strings.Join(fields, " "), nil
}
