package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// cpuAccount estimates how much CPU processes other than this one and its
// children used during the run: the machine's busy time from /proc/stat
// minus our own and our children's from getrusage.
type cpuAccount struct {
	ok    bool
	start time.Time
	busy  float64 // seconds, from /proc/stat
	ours  float64 // seconds, self + waited-for children
}

// userHZ is the unit of /proc/stat; 100 on every mainstream Linux build.
const userHZ = 100

func startCPUAccount() cpuAccount {
	busy, ok := machineBusy()
	return cpuAccount{ok: ok, start: time.Now(), busy: busy, ours: ownCPU()}
}

// foreignShare is the fraction of the machine's CPU capacity that other
// processes used since start. Call it after the children have been waited
// for, since getrusage counts only those.
func (a cpuAccount) foreignShare() (float64, bool) {
	busy, ok := machineBusy()
	if !a.ok || !ok {
		return 0, false
	}
	wall := time.Since(a.start).Seconds() * float64(runtime.NumCPU())
	if wall <= 0 {
		return 0, false
	}
	foreign := (busy - a.busy) - (ownCPU() - a.ours)
	return max(foreign, 0) / wall, true
}

func machineBusy() (float64, bool) {
	data, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0, false
	}
	line, _, _ := strings.Cut(string(data), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0, false
	}
	var busy float64
	// user nice system idle iowait irq softirq steal ...: all but idle and
	// iowait are busy; guest time is already inside user.
	for i, v := range f[1:min(len(f), 9)] {
		if i == 3 || i == 4 {
			continue
		}
		n, err := strconv.ParseFloat(v, 64)
		if err != nil {
			return 0, false
		}
		busy += n
	}
	return busy / userHZ, true
}

func ownCPU() float64 {
	var total float64
	for _, who := range []int{syscall.RUSAGE_SELF, syscall.RUSAGE_CHILDREN} {
		var ru syscall.Rusage
		if syscall.Getrusage(who, &ru) == nil {
			total += time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
		}
	}
	return total
}

// processCPU is the user and system time process pid has used, all its
// threads together (/proc/<pid>/stat's utime and stime, in clock ticks).
func processCPU(pid int) (time.Duration, bool) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, false
	}
	// The fields after the command name, which is in parentheses and may
	// hold spaces: state is the first, utime the 12th and stime the 13th.
	_, rest, ok := strings.Cut(string(data), ") ")
	f := strings.Fields(rest)
	if !ok || len(f) < 13 {
		return 0, false
	}
	utime, err1 := strconv.ParseInt(f[11], 10, 64)
	stime, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, false
	}
	return time.Duration(utime+stime) * time.Second / userHZ, true
}

// cpuKey is a server's runs of one speed configuration.
type cpuKey struct {
	server string
	cfg    config
}

// cpuTarget is the target for the server's CPU per request against
// redis-server's; the stretch goal is 0.8.
const cpuTarget = 1.0

// printCPU reports the servers' CPU time per request over each
// configuration's runs (every test of the run together), which a busy
// machine skews far less than throughput.
func (h *harness) printCPU(cfgs []config, tests []string, cpu map[cpuKey][]float64) {
	fmt.Fprintf(h.out, "\n### Server CPU per request\n\nThe server process's user + system time over each redis-benchmark run (%s together), divided by its requests; median of the rounds.\n\n", strings.ToUpper(strings.Join(tests, ",")))
	fmt.Fprintln(h.out, "| -P | keys | redis-server µs | stampedeless µs | ratio (target ≤ 1.0, stretch ≤ 0.8) |")
	fmt.Fprintln(h.out, "|---:|---|---:|---:|---:|")
	for _, c := range cfgs {
		r, s := median(cpu[cpuKey{redisName, c}]), median(cpu[cpuKey{stampName, c}])
		ratio := "n/a"
		if r > 0 && s > 0 {
			ratio = fmt.Sprintf("%.2f %s", s/r, mark(s/r <= cpuTarget))
		}
		fmt.Fprintf(h.out, "| %d | %s | %.2f | %.2f | %s |\n", c.pipeline, c.keyspace(), r, s, ratio)
	}
}
