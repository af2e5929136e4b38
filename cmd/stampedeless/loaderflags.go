package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/stampedeless/stampedeless/loader"
)

// parseLoaderFlags turns the items of --loader into loader configs. The
// flag splits its value at commas (so does STAMPEDELESS_LOADER), so a
// loader is an item prefix=url, where url is http:// or https://, followed
// by option items that belong to it:
//
//	header=Name:value   a request header; the value is expanded from the
//	                    environment ($VAR or ${VAR}; $$ is a '$'), and an
//	                    unset or empty variable is an error
//	batch=n             a batch loader, asking for up to n keys per request
//
// lookup reads the environment (os.LookupEnv). No error quotes a header
// value.
func parseLoaderFlags(items []string, lookup func(string) (string, bool)) ([]loader.Config, error) {
	var out []loader.Config
	for _, item := range items {
		key, val, ok := strings.Cut(item, "=")
		if ok && key == "batch" && !isHTTPURL(val) {
			if len(out) == 0 {
				return nil, fmt.Errorf("--loader: batch=... must follow the prefix=url it belongs to")
			}
			n, err := strconv.Atoi(val)
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("--loader %s: batch=%q: want a number of keys above 0", out[len(out)-1].Prefix, val)
			}
			out[len(out)-1].Batch = n
			continue
		}
		if ok && key == "header" && !isHTTPURL(val) {
			if len(out) == 0 {
				return nil, fmt.Errorf("--loader: header=... must follow the prefix=url it belongs to")
			}
			h, err := parseHeaderFlag(val, lookup)
			if err != nil {
				return nil, fmt.Errorf("--loader %s: %w", out[len(out)-1].Prefix, err)
			}
			out[len(out)-1].Headers = append(out[len(out)-1].Headers, h)
			continue
		}
		if !ok {
			return nil, fmt.Errorf("--loader: want prefix=url, got %q", item)
		}
		out = append(out, loader.Config{Prefix: key, URL: val})
	}
	return out, nil
}

// isHTTPURL reports whether s looks like a loader URL rather than an
// option's value, so that a prefix named like an option still works.
func isHTTPURL(s string) bool {
	s = strings.ToLower(s)
	return strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://")
}

// parseHeaderFlag parses Name:value, expanding the value from the
// environment.
func parseHeaderFlag(s string, lookup func(string) (string, bool)) (loader.Header, error) {
	name, raw, ok := strings.Cut(s, ":")
	if !ok || name == "" {
		return loader.Header{}, fmt.Errorf("header=...: want header=Name:value")
	}
	var missing []string
	value := os.Expand(strings.TrimSpace(raw), func(v string) string {
		if v == "$" {
			return "$"
		}
		x, ok := lookup(v)
		if !ok || x == "" {
			missing = append(missing, v)
		}
		return x
	})
	if len(missing) > 0 {
		return loader.Header{}, fmt.Errorf("header %s: environment variable %s is unset or empty", name, strings.Join(missing, ", "))
	}
	return loader.Header{Name: name, Value: value}, nil
}
