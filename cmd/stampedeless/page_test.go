package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/redis/go-redis/v9"

	"github.com/stampedeless/stampedeless/internal/redistest"
	"github.com/stampedeless/stampedeless/internal/testwait"
)

// chromium returns Debian's chromium, which .ci/run installs. As with
// redis-server (redistest.Binary), a missing browser fails the test where
// CI is set and skips it elsewhere.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if bin, err := exec.LookPath(name); err == nil {
			return bin
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("chromium not found on PATH and CI is set: apt-get install chromium, or unset CI to skip the browser tests")
	}
	t.Skip("skipped: chromium not found on PATH; apt-get install chromium to run the status page's browser test")
	return ""
}

// stampede starts a server whose "k:" loader's origin holds every call
// until release is called, and 500 clients reading cold key at once. It
// returns the server's address and its metrics port's, once the 499
// waiters joined the one load.
func stampede(t *testing.T, key string) (addr, metricsAddr string, release func()) {
	t.Helper()
	gate := make(chan struct{})
	origin := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-gate
		fmt.Fprint(w, "value")
	}))
	addr, metricsAddr = redistest.FreeAddr(t), redistest.FreeAddr(t)
	startBinary(t, nil, "--addr", addr, "--metrics-addr", metricsAddr, "--loader", "k:="+origin.URL+"/{key}")
	c := redis.NewClient(&redis.Options{Addr: addr, PoolSize: 500})
	var wg sync.WaitGroup
	for range 500 {
		wg.Add(1)
		go func() { defer wg.Done(); c.Do(context.Background(), "GETFILL", key, 60, 30) }()
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			close(gate)
			wg.Wait()
			c.Close()
			origin.Close()
		})
	}
	t.Cleanup(release)
	obs := redis.NewClient(&redis.Options{Addr: addr})
	t.Cleanup(func() { obs.Close() })
	testwait.For(t, "499 waiters", func() bool {
		v, _ := obs.Do(context.Background(), "INFO", "stampede").Text()
		return strings.Contains(v, "coalesced_waiters=499")
	})
	return addr, metricsAddr, release
}

// TestStatusPageInChromium induces a stampede and reads the status page in
// headless Chromium: the hot key heads the waiters' table with 499, and
// the loader has its row.
func TestStatusPageInChromium(t *testing.T) {
	bin := chromium(t)
	_, metricsAddr, release := stampede(t, "k:hot")
	defer release()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()))
	// The whole browser lives within the deadline (a chromedp context's
	// first Run must carry none of its own).
	deadline, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	actx, cancel := chromedp.NewExecAllocator(deadline, opts...)
	defer cancel()
	ctx, cancel := chromedp.NewContext(actx)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate("http://"+metricsAddr+"/")); err != nil {
		t.Fatal(err)
	}
	text := func(css string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(css)))
		if err != nil {
			t.Fatalf("%s: %v", css, err)
		}
		return v
	}
	title := text("#title")
	hotKey := text("#by-waiters tr:nth-child(2) td.key")
	hotCount := text("#by-waiters tr:nth-child(2) td.count")
	loaderRow := text(`#loaders tr[data-loader="k:"]`)
	scripts, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("script, link, img, iframe").length`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(title, "stampedeless radar") || hotKey != "k:hot" || strings.TrimSpace(hotCount) != "499" {
		t.Fatalf("the page shows title %q, top waiters key %q with %q", title, hotKey, hotCount)
	}
	if f := strings.Fields(loaderRow); len(f) < 2 || f[0] != "k:" || f[1] != "1" {
		t.Fatalf("the loader's row reads %q, want k: with 1 call in flight", loaderRow)
	}
	if scripts != 0 {
		t.Fatalf("the page loads %d scripts, links, images or frames; it must need nothing from elsewhere", scripts)
	}
}

// TestTopOnce: `stampedeless top --once` against a server in a stampede
// shows the hot key with its 499 waiters and the loader's row.
func TestTopOnce(t *testing.T) {
	addr, _, release := stampede(t, "k:hot")
	defer release()
	out, err := exec.Command(binary, "top", "--addr", addr, "--once").CombinedOutput()
	if err != nil {
		t.Fatalf("top --once: %v\n%s", err, out)
	}
	screen := string(out)
	waiters := screen[strings.Index(screen, "BY WAITERS"):]
	if !strings.Contains(screen, "stampedeless radar: "+addr) || !strings.Contains(waiters, "499    k:hot  k:") {
		t.Fatalf("top --once printed:\n%s", screen)
	}
	if !strings.Contains(screen, "   k:          1      0") {
		t.Fatalf("top --once shows no loader row with 1 call in flight:\n%s", screen)
	}
}
