package readthrough

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/stampedeless/stampedeless/internal/logtest"
)

// TestLoaderCommands: LOADER.REGISTER's options and errors, LOADER.LIST
// (header names only), LOADER.UNREGISTER.
func TestLoaderCommands(t *testing.T) {
	f := newHarness(t)
	f.Run([]Case{
		{"LOADER.LIST", []any{}},
		{`LOADER.REGISTER "" http://127.0.0.1:1/{key}`, Err("ERR prefix must not be empty: a loader for every key is registered only at start, with --loader =url")},
		{"LOADER.REGISTER a: http://127.0.0.1:1/{key} TIMEOUT", Err("ERR syntax error")},
		{"LOADER.REGISTER a: http://127.0.0.1:1/{key} HEADER X-Token", Err("ERR syntax error")},
		{"LOADER.REGISTER a: http://127.0.0.1:1/{key} BOGUS 1", Err("ERR syntax error")},
		{"LOADER.REGISTER a: http://127.0.0.1:1/{key} TIMEOUT x", Err("ERR value is not an integer or out of range")},
		{"LOADER.REGISTER a: http://127.0.0.1:1/{key} CONCURRENCY -1", Err("ERR value is not an integer or out of range")},
		{"LOADER.REGISTER a: http://127.0.0.1:1/{key} BATCH 4294967296", Err("ERR value is not an integer or out of range")},
		{"LOADER.REGISTER a: ftp://127.0.0.1:1/{key}", Err(`ERR invalid loader: url "ftp://127.0.0.1:1/{key}": scheme must be http or https`)},
		{"LOADER.REGISTER a: http://127.0.0.1:1/{key} BATCH 8", Err(`ERR invalid loader: url "http://127.0.0.1:1/{key}": a batch loader's url has no {key}: the keys go in the request body`)},
		{"LOADER.REGISTER a: http://127.0.0.1:1/batch TIMEOUT 250 CONCURRENCY 4 BATCH 8 HEADER X-Token secret", "OK"},
		{"LOADER.LIST", []any{[]any{"prefix", "a:", "url", "http://127.0.0.1:1/batch", "timeout_ms", 250, "batch", 8,
			"headers", []any{"X-Token"}, "source", "register", "version", 1, "in_flight", 0, "fills", "0", "failures", "0", "batches", "0"}}},
		{"LOADER.UNREGISTER a:", 1},
		{"LOADER.UNREGISTER a:", 0},
		{"LOADER.LIST", []any{}},
	})
	f.Proto(3)
	f.Check("LOADER.REGISTER a: http://127.0.0.1:1/{key}", "OK")
	f.Check("LOADER.LIST", []any{Map{"prefix", "a:", "url", "http://127.0.0.1:1/{key}", "timeout_ms", 5000, "batch", 0,
		"headers", []any{}, "source", "register", "version", 3, "in_flight", 0, "fills", "0", "failures", "0", "batches", "0"}})
}

// TestLoaderCommandsAllowed: --enable-loader-commands: local (the
// default) from loopback only, yes from anywhere, no from nowhere.
func TestLoaderCommandsAllowed(t *testing.T) {
	refused := Err("ERR LOADER.REGISTER is not allowed from this connection; see --enable-loader-commands")
	refusedUn := Err("ERR LOADER.UNREGISTER is not allowed from this connection; see --enable-loader-commands")
	for _, tc := range []struct {
		setting string
		remote  bool
		allowed bool
	}{
		{"", false, true},
		{"", true, false},
		{LoaderCommandsLocal, true, false},
		{LoaderCommandsYes, true, true},
		{LoaderCommandsNo, false, false},
	} {
		f := newHarness(t, func(o *Options) { o.LoaderCommands = tc.setting })
		f.Client.Remote = tc.remote
		want, wantUn := any("OK"), any(1)
		if !tc.allowed {
			want, wantUn = refused, refusedUn
		}
		f.Check("LOADER.REGISTER a: http://127.0.0.1:1/{key}", want)
		f.Check("LOADER.UNREGISTER a:", wantUn)
	}
}

// TestLoaderChangesAudited: a change of the loaders is logged with who
// made it, the URL's password masked and header values never written.
func TestLoaderChangesAudited(t *testing.T) {
	var log logtest.Buffer
	f := newHarness(t, func(o *Options) { o.Logger = log.JSON(slog.LevelInfo) })
	f.Check("LOADER.REGISTER a: http://user:secret@127.0.0.1:1/{key}?q=1 HEADER X-Token hidden", "OK")
	f.Check("LOADER.REGISTER b: http://user@127.0.0.1:1/{key}", "OK")
	f.Check("LOADER.UNREGISTER a:", 1)
	f.Check("LOADER.UNREGISTER a:", 0)
	registered, unregistered := log.With(t, "loader registered"), log.With(t, "loader unregistered")
	if len(registered) != 2 || len(unregistered) != 1 {
		t.Fatalf("log: %s; want two registrations and one removal", log.String())
	}
	for i, want := range []string{"http://user:xxxxx@127.0.0.1:1/{key}?q=1", "http://user@127.0.0.1:1/{key}"} {
		if line := registered[i]; line["url"] != want || line["user"] != "default" || line["client"] != "127.0.0.1:1" {
			t.Errorf("registration logged as %v, want url %s by default at 127.0.0.1:1", line, want)
		}
	}
	if line := unregistered[0]; line["prefix"] != "a:" || line["url"] != nil {
		t.Errorf("removal logged as %v", line)
	}
	if strings.Contains(log.String(), "secret") || strings.Contains(log.String(), "hidden") {
		t.Errorf("a secret was logged: %s", log.String())
	}
}
