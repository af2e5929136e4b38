package main

import (
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
