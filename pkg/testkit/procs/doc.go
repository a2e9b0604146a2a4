// Package procs builds Berth's binaries and runs them as separate processes on loopback, for the
// tools and tests that must see real processes: the whole-stack benchmark (start-up time, memory,
// CPU per request) and the multi-process cluster test (replicas killed and started again). Each
// process's output goes to a log file whose tail explains a failed start.
package procs
