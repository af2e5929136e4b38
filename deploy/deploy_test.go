package deploy

import (
	"bufio"
	"context"
	"debug/elf"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"go.yaml.in/yaml/v4"
)

// root is the repository root, where the deployment files live.
const root = ".."

// binary is stampedeless, built once as the Dockerfile builds it.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "stampedeless-deploy")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "stampedeless")
	build := exec.Command("go", "build", "-o", binary, "./cmd/stampedeless")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		panic("go build: " + err.Error() + "\n" + string(out))
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// replicas are docker-compose.yml's stampedeless replicas.
var replicas = []string{"stampedeless-1", "stampedeless-2", "stampedeless-3"}

// placeholders name the addresses that differ between docker-compose.yml
// and scripts/stack.sh, as stack.sh writes them; everything else in a
// command line must be the same.
var placeholders = strings.NewReplacer(
	"0.0.0.0:6380", "@ADDR@",
	"0.0.0.0:9121", "@METRICS@",
	"redis:6379", "@REDIS@",
	"origin:8080", "@ORIGIN@",
	"0.0.0.0:8080", "@ORIGIN@",
)

func normalize(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		out[i] = placeholders.Replace(a)
	}
	return out
}

func loadCompose(t *testing.T) *types.Project {
	t.Helper()
	opts, err := cli.NewProjectOptions([]string{filepath.Join(root, "docker-compose.yml")},
		cli.WithWorkingDirectory(root), cli.WithName("stampedeless"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		t.Fatalf("docker-compose.yml: %v", err)
	}
	return p
}

// flagValue is the value after --name in a command line, or "".
func flagValue(args []string, name string) string {
	i := slices.Index(args, "--"+name)
	if i < 0 || i+1 >= len(args) {
		return ""
	}
	return args[i+1]
}

func port(t *testing.T, addr string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatalf("address %q: %v", addr, err)
	}
	return p
}

func TestComposeServices(t *testing.T) {
	p := loadCompose(t)
	want := append([]string{"grafana", "origin", "prometheus", "redis"}, replicas...)
	slices.Sort(want)
	if got := p.ServiceNames(); !slices.Equal(got, want) {
		t.Fatalf("services %v, want %v", got, want)
	}

	published := map[string]string{}
	for name, s := range p.Services {
		hc := s.HealthCheck
		if hc == nil || hc.Disable || len(hc.Test) < 2 || hc.Test[0] != "CMD" {
			t.Errorf("%s: healthcheck %+v, want an exec-form test", name, hc)
		}
		for _, pc := range s.Ports {
			if pc.HostIP != "127.0.0.1" {
				t.Errorf("%s: port %s published on %q; publish on 127.0.0.1 only", name, pc.Published, pc.HostIP)
			}
			if other, dup := published[pc.Published]; dup {
				t.Errorf("%s and %s both publish host port %s", name, other, pc.Published)
			}
			published[pc.Published] = name
		}
		for _, v := range s.Volumes {
			if v.Type != types.VolumeTypeBind {
				continue
			}
			if _, err := os.Stat(v.Source); err != nil {
				t.Errorf("%s: mounts %s, which is missing: %v", name, v.Source, err)
			}
		}
	}

	first := []string(p.Services[replicas[0]].Command)
	for i, name := range replicas {
		s := p.Services[name]
		cmd := []string(s.Command)
		if !slices.Equal(cmd, first) {
			t.Errorf("%s: command %q differs from %s's %q", name, cmd, replicas[0], first)
		}
		if cmd[0] != "serve" || flagValue(cmd, "redis") != "redis://redis:6379" {
			t.Errorf("%s: command %q, want serve in --redis mode on the redis service", name, cmd)
		}
		if s.Image != "stampedeless:local" || s.Build == nil || s.Build.Context != p.WorkingDir {
			t.Errorf("%s: image %q built from %+v, want stampedeless:local from the repository root", name, s.Image, s.Build)
		}
		addrPort := port(t, flagValue(cmd, "addr"))
		if want := []string{"CMD", "/stampedeless", "ping", "--addr", "127.0.0.1:" + addrPort}; !slices.Equal(s.HealthCheck.Test, want) {
			t.Errorf("%s: healthcheck %q, want %q", name, s.HealthCheck.Test, want)
		}
		if len(s.Ports) != 1 || fmt.Sprint(s.Ports[0].Target) != addrPort || s.Ports[0].Published != fmt.Sprintf("638%d", i+1) {
			t.Errorf("%s: ports %+v, want 127.0.0.1:638%d -> %s", name, s.Ports, i+1, addrPort)
		}
		for _, dep := range []string{"redis", "origin"} {
			if d, ok := s.DependsOn[dep]; !ok || d.Condition != types.ServiceConditionHealthy {
				t.Errorf("%s: depends_on %s = %+v, want condition service_healthy", name, dep, d)
			}
		}
	}

	origin := p.Services["origin"]
	cmd := []string(origin.Command)
	originPort := port(t, flagValue(cmd, "addr"))
	if cmd[0] != "origin" || origin.Image != "stampedeless:local" {
		t.Errorf("origin: %s running %q, want the stampedeless image running origin", origin.Image, cmd)
	}
	if want := "demo:=http://origin:" + originPort + "/{key}"; flagValue(first, "loader") != want {
		t.Errorf("replicas' --loader %q, want %q", flagValue(first, "loader"), want)
	}
	if want := []string{"CMD", "/stampedeless", "ping", "http://127.0.0.1:" + originPort + "/healthz"}; !slices.Equal(origin.HealthCheck.Test, want) {
		t.Errorf("origin: healthcheck %q, want %q", origin.HealthCheck.Test, want)
	}
	if redis := []string(p.Services["redis"].HealthCheck.Test); !slices.Equal(redis, []string{"CMD", "redis-cli", "ping"}) {
		t.Errorf("redis: healthcheck %q", redis)
	}
}

// stackArrays reads the bash arrays name=(...) of scripts/stack.sh, one
// line each, words split on spaces and stripped of single quotes.
func stackArrays(t *testing.T) map[string][]string {
	t.Helper()
	f, err := os.Open(filepath.Join(root, "scripts", "stack.sh"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	arrays := map[string][]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), "=(")
		if !ok || strings.ContainsAny(name, " \t$") || !strings.HasSuffix(rest, ")") {
			continue
		}
		var words []string
		for _, w := range strings.Fields(strings.TrimSuffix(rest, ")")) {
			words = append(words, strings.Trim(w, "'"))
		}
		arrays[name] = words
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return arrays
}

// TestStackScriptMatchesCompose: scripts/stack.sh starts the replicas, the
// origin and redis-server with docker-compose.yml's command lines.
func TestStackScriptMatchesCompose(t *testing.T) {
	p := loadCompose(t)
	stack := stackArrays(t)
	for _, c := range []struct{ service, array string }{
		{replicas[0], "replica_args"},
		{"origin", "origin_args"},
	} {
		compose := normalize(p.Services[c.service].Command)
		if !slices.Equal(stack[c.array], compose) {
			t.Errorf("scripts/stack.sh %s = %q,\ndocker-compose.yml %s = %q (addresses as placeholders)",
				c.array, stack[c.array], c.service, compose)
		}
	}
	redis := []string(p.Services["redis"].Command)
	if len(redis) == 0 || redis[0] != "redis-server" || !slices.Equal(stack["redis_args"], redis[1:]) {
		t.Errorf("scripts/stack.sh redis_args = %q, docker-compose.yml redis command = %q", stack["redis_args"], redis)
	}
}

func TestDockerfile(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(root, "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	// Join continuation lines, drop comments: one instruction a line.
	text := strings.ReplaceAll(string(data), "\\\n", " ")
	var froms int
	var user, health, entry, build string
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		instr, args, _ := strings.Cut(line, " ")
		switch strings.ToUpper(instr) {
		case "FROM":
			froms++
		case "USER":
			user = args
		case "HEALTHCHECK":
			health = args
		case "ENTRYPOINT":
			entry = args
		case "RUN":
			if strings.Contains(args, "go build") {
				build = args
			}
		}
	}
	if froms < 2 {
		t.Errorf("%d FROM lines, want a multi-stage build", froms)
	}
	if uid, _, _ := strings.Cut(user, ":"); uid == "" || uid == "root" || uid == "0" {
		t.Errorf("USER %q, want a non-root user", user)
	}
	if !strings.Contains(health, `CMD ["/stampedeless", "ping"]`) {
		t.Errorf("HEALTHCHECK %q, want the binary's own ping", health)
	}
	if entry != `["/stampedeless"]` {
		t.Errorf("ENTRYPOINT %s", entry)
	}
	if !strings.Contains(build, "CGO_ENABLED=0") || !strings.Contains(build, "./cmd/stampedeless") {
		t.Errorf("build step %q, want CGO_ENABLED=0 go build ./cmd/stampedeless", build)
	}

	// Built as the Dockerfile builds it, the binary must be static: no
	// dynamic loader to find in a distroless image.
	f, err := elf.Open(binary)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, prog := range f.Progs {
		if prog.Type == elf.PT_INTERP {
			t.Fatal("the CGO_ENABLED=0 binary asks for a dynamic loader (PT_INTERP)")
		}
	}
}

// prometheusConfig is the part of prometheus.yml the stack relies on.
type prometheusConfig struct {
	ScrapeConfigs []struct {
		JobName       string `yaml:"job_name"`
		MetricsPath   string `yaml:"metrics_path"`
		StaticConfigs []struct {
			Targets []string `yaml:"targets"`
		} `yaml:"static_configs"`
	} `yaml:"scrape_configs"`
}

// TestPrometheusScrapesEveryReplica: the one scrape job's targets are the
// compose replicas on their --metrics-addr port, and the file is where the
// prometheus service reads it.
func TestPrometheusScrapesEveryReplica(t *testing.T) {
	p := loadCompose(t)
	data, err := os.ReadFile(filepath.Join(root, "deploy", "prometheus", "prometheus.yml"))
	if err != nil {
		t.Fatal(err)
	}
	var cfg prometheusConfig
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatalf("prometheus.yml: %v", err)
	}
	if len(cfg.ScrapeConfigs) != 1 || cfg.ScrapeConfigs[0].MetricsPath != "" && cfg.ScrapeConfigs[0].MetricsPath != "/metrics" {
		t.Fatalf("scrape configs %+v, want one job on /metrics", cfg.ScrapeConfigs)
	}
	var targets, want []string
	for _, sc := range cfg.ScrapeConfigs[0].StaticConfigs {
		targets = append(targets, sc.Targets...)
	}
	for _, name := range replicas {
		want = append(want, name+":"+port(t, flagValue(p.Services[name].Command, "metrics-addr")))
	}
	slices.Sort(targets)
	if !slices.Equal(targets, want) {
		t.Errorf("targets %v, want %v", targets, want)
	}

	prom := p.Services["prometheus"]
	if !mounts(prom, filepath.Join(p.WorkingDir, "deploy", "prometheus", "prometheus.yml"), commandFlag(prom.Command, "--config.file")) {
		t.Errorf("prometheus: does not mount deploy/prometheus/prometheus.yml at its --config.file %q", commandFlag(prom.Command, "--config.file"))
	}
}

// commandFlag is the value of a --name=value argument, or "".
func commandFlag(cmd []string, name string) string {
	for _, a := range cmd {
		if v, ok := strings.CutPrefix(a, name+"="); ok {
			return v
		}
	}
	return ""
}

// mounts reports whether s bind-mounts the file or directory source at
// target.
func mounts(s types.ServiceConfig, source, target string) bool {
	for _, v := range s.Volumes {
		if v.Type == types.VolumeTypeBind && v.Source == source && v.Target == target {
			return true
		}
	}
	return false
}
