package deploy

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// query is what a PromQL expression reads: its series selectors and the
// labels it groups by.
type query struct {
	selectors []selector
	grouping  []string
}

type selector struct {
	name     string
	matchers []matcher
}

type matcher struct{ label, op, value string }

// functions are the PromQL functions and aggregations the dashboard may
// call; parsePromQL refuses any other, so that nothing it does not know is
// taken for a metric name.
var functions = map[string]bool{
	"sum": true, "min": true, "max": true, "avg": true, "count": true,
	"rate": true, "irate": true, "increase": true, "histogram_quantile": true,
}

// parsePromQL reads the subset of PromQL the dashboard is written in:
// numbers, + - * / and parentheses, the functions above, "by (labels)", and
// selectors name{label op "value", ...} with an optional [range]. It is a
// checker's tokenizer, not an evaluator, and fails on anything else.
func parsePromQL(expr string) (query, error) {
	var q query
	s := expr
	for {
		s = strings.TrimLeft(s, " \t\n")
		if s == "" {
			return q, nil
		}
		switch c := s[0]; {
		case strings.IndexByte("()+-*/,", c) >= 0:
			s = s[1:]
		case c == '[':
			end := strings.IndexByte(s, ']')
			if end < 0 {
				return q, fmt.Errorf("unclosed range in %q", expr)
			}
			s = s[end+1:]
		case c >= '0' && c <= '9' || c == '.':
			s = strings.TrimLeft(s, "0123456789.e")
		case isNameStart(c):
			n := 1
			for n < len(s) && isNameChar(s[n]) {
				n++
			}
			name, rest := s[:n], strings.TrimLeft(s[n:], " ")
			switch {
			case name == "by" || name == "without":
				labels, after, ok := strings.Cut(strings.TrimPrefix(rest, "("), ")")
				if !strings.HasPrefix(rest, "(") || !ok {
					return q, fmt.Errorf("%s without a label list in %q", name, expr)
				}
				for _, l := range strings.Split(labels, ",") {
					q.grouping = append(q.grouping, strings.TrimSpace(l))
				}
				s = after
			case functions[name]:
				// An aggregation's "by (...)" may stand between its name
				// and its argument; the next token is then "by".
				s = rest
			case strings.HasPrefix(rest, "("):
				return q, fmt.Errorf("unknown function %s in %q", name, expr)
			default:
				sel := selector{name: name}
				if strings.HasPrefix(rest, "{") {
					var err error
					if sel.matchers, rest, err = parseMatchers(rest[1:]); err != nil {
						return q, fmt.Errorf("%w in %q", err, expr)
					}
				}
				q.selectors = append(q.selectors, sel)
				s = rest
			}
		default:
			return q, fmt.Errorf("unexpected %q in %q", c, expr)
		}
	}
}

// parseMatchers reads label op "value" pairs up to the closing brace and
// returns them with the rest of the input.
func parseMatchers(s string) ([]matcher, string, error) {
	var ms []matcher
	for {
		s = strings.TrimLeft(s, " ,")
		if strings.HasPrefix(s, "}") {
			return ms, s[1:], nil
		}
		n := 0
		for n < len(s) && isNameChar(s[n]) {
			n++
		}
		if n == 0 {
			return nil, "", fmt.Errorf("bad matcher at %q", s)
		}
		m := matcher{label: s[:n]}
		s = strings.TrimLeft(s[n:], " ")
		for _, op := range []string{"=~", "!~", "!=", "="} {
			if strings.HasPrefix(s, op) {
				m.op, s = op, strings.TrimLeft(s[len(op):], " ")
				break
			}
		}
		if m.op == "" || !strings.HasPrefix(s, `"`) {
			return nil, "", fmt.Errorf("bad matcher for %s at %q", m.label, s)
		}
		end := strings.IndexByte(s[1:], '"')
		if end < 0 {
			return nil, "", fmt.Errorf("unclosed string at %q", s)
		}
		m.value, s = s[1:1+end], s[2+end:]
		ms = append(ms, m)
	}
}

func isNameStart(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' || c == ':'
}

func isNameChar(c byte) bool { return isNameStart(c) || c >= '0' && c <= '9' }

func TestParsePromQL(t *testing.T) {
	q, err := parsePromQL(`histogram_quantile(0.99, sum by (le, instance) (rate(a_bucket{instance=~"$instance",kind="stale"}[$__rate_interval]))) / sum(b)`)
	if err != nil {
		t.Fatal(err)
	}
	if len(q.selectors) != 2 || q.selectors[0].name != "a_bucket" || q.selectors[1].name != "b" ||
		!slices.Equal(q.grouping, []string{"le", "instance"}) ||
		!slices.Equal(q.selectors[0].matchers, []matcher{{"instance", "=~", "$instance"}, {"kind", "=", "stale"}}) {
		t.Fatalf("parsed %+v", q)
	}
	for _, bad := range []string{`topk(3, a)`, `a{kind}`, `a{kind="x}`, `a[5m`, `a > 1`, `sum by a`} {
		if _, err := parsePromQL(bad); err == nil {
			t.Errorf("%q parsed without error", bad)
		}
	}
}
