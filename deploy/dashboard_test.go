package deploy

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/redis/go-redis/v9"
	"go.yaml.in/yaml/v4"

	"github.com/stampedeless/stampedeless/internal/redistest"
	"github.com/stampedeless/stampedeless/internal/testwait"
	"github.com/stampedeless/stampedeless/origin"
)

// dashboard is the part of the Grafana dashboard JSON the checks read.
type dashboard struct {
	UID        string `json:"uid"`
	Title      string `json:"title"`
	Templating struct {
		List []struct {
			Name       string     `json:"name"`
			Definition string     `json:"definition"`
			Datasource datasource `json:"datasource"`
		} `json:"list"`
	} `json:"templating"`
	Panels []struct {
		ID         int        `json:"id"`
		Type       string     `json:"type"`
		Title      string     `json:"title"`
		Datasource datasource `json:"datasource"`
		GridPos    struct{ X, Y, W, H int }
		Targets    []struct {
			RefID      string     `json:"refId"`
			Expr       string     `json:"expr"`
			Datasource datasource `json:"datasource"`
		} `json:"targets"`
	} `json:"panels"`
}

type datasource struct {
	Type string `json:"type"`
	UID  string `json:"uid"`
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(root, "deploy", "grafana", "dashboards", "stampedeless.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d); err != nil {
		t.Fatalf("stampedeless.json: %v", err)
	}
	return d
}

// TestGrafanaProvisioning: the provisioned datasource is the compose
// Prometheus, the dashboards provider reads the directory compose mounts,
// and every panel of the dashboard queries that datasource.
func TestGrafanaProvisioning(t *testing.T) {
	p := loadCompose(t)
	var ds struct {
		Datasources []struct {
			Name, UID, Type, URL string
		}
	}
	readYAML(t, filepath.Join(root, "deploy", "grafana", "provisioning", "datasources", "prometheus.yml"), &ds)
	promPort := p.Services["prometheus"].Ports[0].Target
	if len(ds.Datasources) != 1 || ds.Datasources[0].Type != "prometheus" ||
		ds.Datasources[0].URL != fmt.Sprintf("http://prometheus:%d", promPort) {
		t.Fatalf("datasources %+v, want the compose prometheus service on port %d", ds.Datasources, promPort)
	}
	uid := ds.Datasources[0].UID

	var providers struct {
		Providers []struct {
			Name, Type string
			Options    struct{ Path string }
		}
	}
	readYAML(t, filepath.Join(root, "deploy", "grafana", "provisioning", "dashboards", "stampedeless.yml"), &providers)
	if len(providers.Providers) != 1 || providers.Providers[0].Type != "file" {
		t.Fatalf("dashboard providers %+v", providers.Providers)
	}
	dashDir := providers.Providers[0].Options.Path
	grafana := p.Services["grafana"]
	if !mounts(grafana, filepath.Join(p.WorkingDir, "deploy", "grafana", "dashboards"), dashDir) ||
		!mounts(grafana, filepath.Join(p.WorkingDir, "deploy", "grafana", "provisioning"), "/etc/grafana/provisioning") {
		t.Errorf("grafana mounts %+v, want deploy/grafana/provisioning and deploy/grafana/dashboards at %s", grafana.Volumes, dashDir)
	}
	if home := grafana.Environment["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]; home == nil || *home != path.Join(dashDir, "stampedeless.json") {
		t.Errorf("grafana home dashboard %v, want %s", home, path.Join(dashDir, "stampedeless.json"))
	}

	d := loadDashboard(t)
	if d.UID == "" || d.Title == "" || len(d.Panels) == 0 {
		t.Fatalf("dashboard uid %q title %q with %d panels", d.UID, d.Title, len(d.Panels))
	}
	ids := map[int]bool{}
	for _, panel := range d.Panels {
		if ids[panel.ID] {
			t.Errorf("panel id %d twice", panel.ID)
		}
		ids[panel.ID] = true
		if panel.Datasource.UID != uid || panel.GridPos.W < 1 || panel.GridPos.X+panel.GridPos.W > 24 || len(panel.Targets) == 0 {
			t.Errorf("panel %q: datasource %+v, grid %+v, %d targets", panel.Title, panel.Datasource, panel.GridPos, len(panel.Targets))
		}
		for _, target := range panel.Targets {
			if target.Datasource.UID != uid || target.Expr == "" || target.RefID == "" {
				t.Errorf("panel %q target %+v", panel.Title, target)
			}
		}
	}
	for _, v := range d.Templating.List {
		if v.Datasource.UID != uid {
			t.Errorf("variable %s: datasource %+v", v.Name, v.Datasource)
		}
	}
}

func readYAML(t *testing.T, file string, v any) {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(data, v); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
}

// TestDashboardQueriesLiveMetrics runs one replica with docker-compose.yml's
// command line (addresses made local) against a real redis-server, makes it
// load, coalesce, serve stale and cool down, scrapes its /metrics, and
// checks every metric, label and label value the dashboard queries against
// the scrape.
func TestDashboardQueriesLiveMetrics(t *testing.T) {
	p := loadCompose(t)
	rdsrv := redistest.Start(t)
	org := newGatedOrigin(t)
	addr, metricsAddr := redistest.FreeAddr(t), redistest.FreeAddr(t)
	args := normalize(p.Services[replicas[0]].Command)
	for i, a := range args {
		args[i] = strings.NewReplacer("@ADDR@", addr, "@METRICS@", metricsAddr,
			"@REDIS@", rdsrv.Addr(), "@ORIGIN@", org.addr).Replace(a)
	}
	startReplica(t, addr, args)

	ctx := context.Background()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	getfill := func(key string) error { return c.Do(ctx, "GETFILL", key, 1, 30).Err() }

	// Loads, and a GET hit and miss.
	for _, key := range []string{"demo:a", "demo:flaky:1"} {
		if err := getfill(key); err != nil {
			t.Fatal(err)
		}
	}
	c.Get(ctx, "demo:a")
	c.Get(ctx, "demo:none")

	// A coalesced waiter: while the origin holds the first caller's load,
	// a second caller joins it with TIMEOUT 0 and leaves at once, counted.
	loaded := make(chan error, 1)
	go func() { loaded <- getfill("demo:gate:1") }()
	testwait.For(t, "the first GETFILL to reach the origin", func() bool { return org.waiting.Load() == 1 })
	if err := c.Do(ctx, "GETFILL", "demo:gate:1", 1, 30, "TIMEOUT", 0).Err(); err == nil || !strings.HasPrefix(err.Error(), "TIMEOUT") {
		t.Fatalf("GETFILL TIMEOUT 0 during the load: %v, want -TIMEOUT", err)
	}
	close(org.gate)
	if err := <-loaded; err != nil {
		t.Fatal(err)
	}

	// A stale answer: the 1 s ttl runs out (FILL.INFO says so), the grace
	// has 30 s more.
	// FILL.INFO is a map: the default client speaks RESP3.
	fillInfo := func(key, field string) string {
		info, _ := c.Do(ctx, "FILL.INFO", key).Result()
		if v, ok := info.(map[any]any)[field]; ok {
			return fmt.Sprint(v)
		}
		return ""
	}
	fillState := func(key string) string { return fillInfo(key, "state") }
	for _, key := range []string{"demo:a", "demo:flaky:1"} {
		testwait.For(t, key+" to go stale", func() bool { return fillState(key) == "stale" })
	}
	if err := getfill("demo:a"); err != nil {
		t.Fatal(err)
	}
	// Stale if error: the origin starts failing demo:flaky:1, so the
	// refresh a stale read starts fails, and during the cooldown that
	// follows the stale value is served.
	org.flaky.Store(true)
	if err := getfill("demo:flaky:1"); err != nil {
		t.Fatal(err)
	}
	// The failed call is counted before its flight ends, and the flight
	// ends after the cooldown is set.
	testwait.For(t, "demo:flaky:1's refresh to fail", func() bool {
		return metricValue(scrape(t, metricsAddr), "stampedeless_fill_loads_total", "result", "error") == 1 &&
			fillInfo("demo:flaky:1", "in_flight") == "0"
	})
	if err := getfill("demo:flaky:1"); err != nil {
		t.Fatal(err)
	}

	// A failure, then the cooldown that answers without calling the origin.
	if err := getfill("demo:fail:1"); err == nil {
		t.Fatal("GETFILL of a failing key succeeded")
	}
	if err := getfill("demo:fail:1"); err == nil {
		t.Fatal("GETFILL during the cooldown succeeded")
	}

	families := scrape(t, metricsAddr)
	d := loadDashboard(t)
	var exprs []string
	for _, panel := range d.Panels {
		for _, target := range panel.Targets {
			exprs = append(exprs, target.Expr)
		}
	}
	for _, v := range d.Templating.List {
		// label_values(metric, label) is Grafana's, not PromQL: check it as
		// the selector metric{label=~".+"}.
		m := regexp.MustCompile(`^label_values\(\s*(\w+)\s*,\s*(\w+)\s*\)$`).FindStringSubmatch(v.Definition)
		if m == nil {
			t.Errorf("variable %s: unsupported query %q", v.Name, v.Definition)
			continue
		}
		exprs = append(exprs, m[1])
	}
	for _, expr := range exprs {
		q, err := parsePromQL(expr)
		if err != nil {
			t.Errorf("%s: %v", expr, err)
			continue
		}
		for _, problem := range checkQuery(q, families) {
			t.Errorf("%s: %s", expr, problem)
		}
	}
}

// targetLabels are added by Prometheus at scrape time, not by the server.
var targetLabels = map[string]bool{"instance": true, "job": true}

// checkQuery lists what q asks for that the scrape lacks.
func checkQuery(q query, families map[string]*dto.MetricFamily) []string {
	var problems []string
	labelsOf := map[string]bool{}
	for _, sel := range q.selectors {
		fam, labels := lookup(families, sel.name)
		if fam == nil {
			problems = append(problems, fmt.Sprintf("metric %s is not exported", sel.name))
			continue
		}
		for l := range labels {
			labelsOf[l] = true
		}
		for _, m := range sel.matchers {
			switch {
			case targetLabels[m.label]:
			case labels[m.label] == nil:
				problems = append(problems, fmt.Sprintf("%s has no label %s", sel.name, m.label))
			case m.op == "=" && !labels[m.label][m.value]:
				problems = append(problems, fmt.Sprintf("%s{%s=%q}: no such series (values seen: %v)", sel.name, m.label, m.value, keys(labels[m.label])))
			}
		}
	}
	for _, l := range q.grouping {
		if !targetLabels[l] && !labelsOf[l] {
			problems = append(problems, fmt.Sprintf("groups by %s, which none of its metrics has", l))
		}
	}
	return problems
}

// lookup finds the family of a series name (a histogram's name_bucket,
// name_sum, name_count included) and the values of each of its labels,
// with le for a bucket.
func lookup(families map[string]*dto.MetricFamily, name string) (*dto.MetricFamily, map[string]map[string]bool) {
	fam := families[name]
	suffix := ""
	if fam == nil {
		for _, s := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(name, s); ok && families[base] != nil &&
				(families[base].GetType() == dto.MetricType_HISTOGRAM || families[base].GetType() == dto.MetricType_SUMMARY && s != "_bucket") {
				fam, suffix = families[base], s
			}
		}
	}
	if fam == nil {
		return nil, nil
	}
	labels := map[string]map[string]bool{}
	for _, m := range fam.Metric {
		for _, lp := range m.Label {
			if labels[lp.GetName()] == nil {
				labels[lp.GetName()] = map[string]bool{}
			}
			labels[lp.GetName()][lp.GetValue()] = true
		}
		if suffix == "_bucket" {
			labels["le"] = map[string]bool{}
		}
	}
	return fam, labels
}

func keys(m map[string]bool) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}

// metricValue sums the counters and gauges of a family, or of its series
// with the given label=value pairs; -1 if there is no such family.
func metricValue(families map[string]*dto.MetricFamily, name string, labelPairs ...string) float64 {
	fam := families[name]
	if fam == nil {
		return -1
	}
	var sum float64
	for _, m := range fam.Metric {
		match := true
		for i := 0; i+1 < len(labelPairs); i += 2 {
			match = match && slices.ContainsFunc(m.Label, func(lp *dto.LabelPair) bool {
				return lp.GetName() == labelPairs[i] && lp.GetValue() == labelPairs[i+1]
			})
		}
		if match {
			sum += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return sum
}

func scrape(t *testing.T, addr string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return families
}

// gatedOrigin is the demo origin behind test hooks: keys under demo:gate:
// wait for gate to close, keys under demo:fail: get 503, and so do keys
// under demo:flaky: while flaky is set.
type gatedOrigin struct {
	addr    string
	gate    chan struct{}
	waiting atomic.Int64
	flaky   atomic.Bool
}

func newGatedOrigin(t *testing.T) *gatedOrigin {
	t.Helper()
	o, err := origin.New(origin.Options{ETag: true, FailureRate: 0})
	if err != nil {
		t.Fatal(err)
	}
	g := &gatedOrigin{gate: make(chan struct{})}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get("X-Stampedeless-Key")
		switch {
		case strings.HasPrefix(key, "demo:fail:"), strings.HasPrefix(key, "demo:flaky:") && g.flaky.Load():
			http.Error(w, "failing on purpose", http.StatusServiceUnavailable)
			return
		case strings.HasPrefix(key, "demo:gate:"):
			g.waiting.Add(1)
			select {
			case <-g.gate:
			case <-r.Context().Done():
				return
			}
		}
		o.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	g.addr = strings.TrimPrefix(srv.URL, "http://")
	return g
}

// startReplica runs the binary with args and waits until addr answers PING.
func startReplica(t *testing.T, addr string, args []string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	logs := &strings.Builder{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		<-exited
	})
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1})
	defer c.Close()
	testwait.For(t, "the replica to answer PING", func() bool {
		select {
		case <-exited:
			t.Fatalf("stampedeless %q exited:\n%s", args, logs)
		default:
		}
		return c.Ping(context.Background()).Err() == nil
	})
}
