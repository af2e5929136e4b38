// Package rusage is what the kernel counts of the process's use of the
// machine: its CPU time (getrusage), for INFO's cpu section.
package rusage
