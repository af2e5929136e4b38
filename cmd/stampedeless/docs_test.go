package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stampedeless/stampedeless/engine"
)

// repoRoot is the repository, seen from this package's directory (where
// go test runs).
const repoRoot = "../.."

// readmeMaxLines bounds README.md: it is the front door, and the reference
// lives in docs/.
const readmeMaxLines = 300

// docFiles are the Markdown files whose relative links must resolve.
func docFiles(t *testing.T) []string {
	t.Helper()
	files := []string{"README.md", "CONTRIBUTING.md", "bench/README.md", "bench/HISTORY.md"}
	docs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		rel, err := filepath.Rel(repoRoot, d)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, rel)
	}
	return files
}

var (
	// mdLink is an inline link or image, [text](target) or
	// [text](target "title"); its text may hold one level of brackets and
	// span lines.
	mdLink     = regexp.MustCompile(`!?\[((?:[^\[\]]|\[[^\]]*\])*)\]\(([^()\s]+)(?:\s+"[^"]*")?\)`)
	inlineCode = regexp.MustCompile("`[^`]*`")
	heading    = regexp.MustCompile(`^#{1,6}\s+(.*?)\s*#*\s*$`)
)

// prose is a Markdown file without its fenced code blocks, whose lines
// are kept blank so that line numbers still count.
func prose(md string) []string {
	lines := strings.Split(md, "\n")
	out := make([]string, len(lines))
	fenced := false
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "```") {
			fenced = !fenced
			continue
		}
		if !fenced {
			out[i] = l
		}
	}
	return out
}

// slug is the anchor GitHub gives a heading: its text as rendered (link
// targets and code marks dropped), lower case, without punctuation other
// than '-' and '_', each space a '-'.
func slug(text string) string {
	text = mdLink.ReplaceAllString(text, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(text) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// anchors are the heading anchors of a Markdown file, a repeated heading's
// numbered as GitHub numbers them (x, x-1, x-2).
func anchors(md string) map[string]bool {
	seen := map[string]int{}
	out := map[string]bool{}
	for _, l := range prose(md) {
		m := heading.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		s := slug(m[1])
		if n := seen[s]; n > 0 {
			seen[s]++
			s += "-" + strconv.Itoa(n)
		} else {
			seen[s] = 1
		}
		out[s] = true
	}
	return out
}

// TestDocLinksResolve: every relative link in README.md, CONTRIBUTING.md,
// bench/README.md, bench/HISTORY.md and docs/*.md names a file or directory of the
// repository, and a link with an #anchor into a Markdown file names one of
// its headings, so moving a section cannot leave a dead link behind.
func TestDocLinksResolve(t *testing.T) {
	cache := map[string]map[string]bool{}
	anchorsOf := func(path string) (map[string]bool, error) {
		if a, ok := cache[path]; ok {
			return a, nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		cache[path] = anchors(string(data))
		return cache[path], nil
	}
	links := 0
	for _, file := range docFiles(t) {
		data, err := os.ReadFile(filepath.Join(repoRoot, file))
		if err != nil {
			t.Fatal(err)
		}
		text := strings.Join(prose(string(data)), "\n")
		// Code spans are blanked, not dropped, so a link whose text is
		// code ([`x`](x)) is still a link.
		text = inlineCode.ReplaceAllStringFunc(text, func(s string) string { return strings.Repeat("x", len(s)) })
		for _, m := range mdLink.FindAllStringSubmatchIndex(text, -1) {
			target := text[m[4]:m[5]]
			line := 1 + strings.Count(text[:m[0]], "\n")
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			links++
			path, anchor, _ := strings.Cut(target, "#")
			resolved := filepath.Join(repoRoot, file)
			if path != "" {
				resolved = filepath.Join(repoRoot, filepath.Dir(file), path)
				if _, err := os.Stat(resolved); err != nil {
					t.Errorf("%s:%d: link to %s: no such file", file, line, target)
					continue
				}
			}
			if anchor == "" || !strings.HasSuffix(resolved, ".md") {
				continue
			}
			a, err := anchorsOf(resolved)
			if err != nil {
				t.Errorf("%s:%d: link to %s: %v", file, line, target, err)
				continue
			}
			if !a[anchor] {
				t.Errorf("%s:%d: link to %s: no heading with the anchor #%s", file, line, target, anchor)
			}
		}
	}
	if links == 0 {
		t.Fatal("found no relative links at all: the parser is broken")
	}
}

// TestSlugLikeGitHub pins the anchors the links rely on to GitHub's.
func TestSlugLikeGitHub(t *testing.T) {
	for heading, want := range map[string]string{
		"Many replicas, one fill: `--redis`":        "many-replicas-one-fill---redis",
		"Fills done by the application: FILL.LEASE": "fills-done-by-the-application-filllease",
		"Pub/sub":                          "pubsub",
		"Snapshots: `--dir`, SAVE, BGSAVE": "snapshots---dir-save-bgsave",
		"Users and permissions (ACL)":      "users-and-permissions-acl",
		"A [linked](x.md) heading":         "a-linked-heading",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
	a := anchors("# Results\n\n## Results\n\n```\n# not a heading\n```\n")
	if !a["results"] || !a["results-1"] || a["not-a-heading"] {
		t.Errorf("anchors = %v, want results and results-1 and no heading from the code block", a)
	}
}

// TestREADMEIsAFrontDoor: README.md stays short enough to read through;
// what does not fit goes to a topic file under docs/.
func TestREADMEIsAFrontDoor(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n > readmeMaxLines {
		t.Errorf("README.md has %d lines, more than %d: move the detail to a file under docs/ and link it", n, readmeMaxLines)
	}
}

// TestSizingIsEntryOverhead: every sizing formula in the docs, keys ×
// (average key + value + N), uses the store's per-entry charge,
// engine.EntryOverhead, so the docs give one number and it is the code's.
func TestSizingIsEntryOverhead(t *testing.T) {
	formula := regexp.MustCompile(`value\s*\+\s*(\d+)\)`)
	found := 0
	for _, f := range docFiles(t) {
		data, err := os.ReadFile(filepath.Join(repoRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range formula.FindAllStringSubmatch(string(data), -1) {
			found++
			if n, _ := strconv.Atoi(m[1]); n != engine.EntryOverhead {
				t.Errorf("%s sizes memory as %q: want + %d, engine.EntryOverhead", f, m[0], engine.EntryOverhead)
			}
		}
	}
	if found < 2 {
		t.Errorf("found %d sizing formulas, want operations.md's and troubleshooting.md's", found)
	}
}
