package redisconfig

import (
	"slices"
	"testing"
)

func param(t *testing.T, name string) *Param {
	t.Helper()
	for i := range Params {
		if Params[i].Name == name {
			return &Params[i]
		}
	}
	t.Fatalf("no parameter %q", name)
	return nil
}

// TestChecks: each kind of check gives the form CONFIG GET shows, or
// Redis's error text, as redis-server 7.0.15 does for the same value.
func TestChecks(t *testing.T) {
	for _, tc := range []struct {
		param, value, want, err string
	}{
		{"activerehashing", "YES", "yes", ""},
		{"activerehashing", "maybe", "", "argument must be 'yes' or 'no'"},
		{"active-defrag-cycle-max", "99", "99", ""},
		{"active-defrag-cycle-max", "100", "", "argument must be between 1 and 99 inclusive"},
		{"active-defrag-cycle-max", "x", "", "argument couldn't be parsed into an integer"},
		{"appendfsync", "ALWAYS", "always", ""},
		{"appendfsync", "sometimes", "", "argument(s) must be one of the following: everysec, always, no"},
		{"auto-aof-rewrite-min-size", "1mb", "1048576", ""},
		{"auto-aof-rewrite-min-size", "-1", "", "argument must be a memory value"},
		{"active-defrag-ignore-bytes", "0", "", "argument must be between 1 and 9223372036854775807 inclusive"},
		{"repl-backlog-size", "1", "16384", ""},
		{"repl-backlog-size", "1mb", "1048576", ""},
		{"activedefrag", "no", "no", ""},
		{"tls-cluster", "yes", "", "Unable to update TLS configuration. Check server logs."},
		{"cluster-announce-hostname", "a-b.c", "a-b.c", ""},
		{"cluster-announce-hostname", "a_b", "", "Hostnames may only contain alphanumeric characters, hyphens or dots"},
		{"proc-title-template", "{title} {port}", "{title} {port}", ""},
		{"proc-title-template", "x{{y}}", "x{{y}}", ""},
		{"proc-title-template", "{title}", "", "template format is invalid or contains unknown variables"},
		{"proc-title-template", "{nope}", "", "template format is invalid or contains unknown variables"},
		{"proc-title-template", "{port", "", "template format is invalid or contains unknown variables"},
		{"latency-tracking-info-percentiles", " 50  99.90 ", "50 99.9", ""},
		{"latency-tracking-info-percentiles", "101", "", "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"},
		{"latency-tracking-info-percentiles", "a", "", "Invalid latency-tracking-info-percentiles parameters"},
		{"maxmemory-clients", "10%", "10%", ""},
		{"maxmemory-clients", "101%", "", "percentage argument must be less or equal to 100"},
		{"maxmemory-clients", "2GB", "2147483648", ""},
		{"maxmemory-clients", "x", "", "argument must be a memory or percent value"},
		{"oom-score-adj-values", "0  200 800", "0 200 800", ""},
		{"oom-score-adj-values", "0 200", "", "wrong number of arguments"},
		{"oom-score-adj-values", "-100 0 2001", "", "Invalid oom-score-adj-values, elements must be between -2000 and 2000."},
		{"watchdog-period", "1", "200", ""},
		{"watchdog-period", "0", "0", ""},
		{"watchdog-period", "500", "500", ""},
		{"watchdog-period", "-1", "", "argument must be between 0 and 2147483647 inclusive"},
	} {
		got, err := param(t, tc.param).Check(tc.value)
		if tc.err != "" {
			if err == nil || err.Error() != tc.err {
				t.Errorf("%s %q: error %v, want %q", tc.param, tc.value, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s %q = %q, %v; want %q", tc.param, tc.value, got, err, tc.want)
		}
	}
}

// TestValues: a value set is the one got, under the parameter's name and
// its alias's; a refused value leaves the old one.
func TestValues(t *testing.T) {
	var vs Values
	replica, slave := param(t, "replica-priority"), param(t, "slave-priority")
	if got := vs.Get(slave); got != "100" {
		t.Fatalf("default = %q, want 100", got)
	}
	if err := vs.Set(slave, "7"); err != nil {
		t.Fatal(err)
	}
	if got := vs.Get(replica); got != "7" {
		t.Errorf("replica-priority after setting slave-priority = %q, want 7", got)
	}
	if err := vs.Set(replica, "-1"); err == nil {
		t.Error("replica-priority -1 accepted")
	}
	if got := vs.Get(slave); got != "7" {
		t.Errorf("after a refused value = %q, want 7", got)
	}
}

// TestParams: names are unique; every alias names a parameter; only the
// hidden ones, at the end, are Hidden.
func TestParams(t *testing.T) {
	var names []string
	for _, p := range Params {
		if slices.Contains(names, p.Name) {
			t.Errorf("%s twice", p.Name)
		}
		names = append(names, p.Name)
	}
	for _, p := range Params {
		if p.Alias != "" && !slices.Contains(names, p.Alias) {
			t.Errorf("%s: alias %s is no parameter", p.Name, p.Alias)
		}
	}
	hidden := 0
	for _, p := range Params {
		if p.Hidden {
			hidden++
		}
	}
	if hidden != len(hiddenParams) || !Params[len(Params)-1].Hidden {
		t.Errorf("%d hidden parameters, want the %d of hiddenParams at the end", hidden, len(hiddenParams))
	}
}
