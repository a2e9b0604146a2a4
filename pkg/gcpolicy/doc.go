// Package gcpolicy sets the garbage collector's policy of every Berth process (each service, the
// edge, the all-in-one), so that a process trades some of its ample memory for CPU.
//
// Go's default (GOGC=100) collects whenever the heap has doubled since the last collection. A Berth
// process lives on a small heap (20–30 MiB resident when idle) and allocates a few kilobytes per
// request, so under load that default collects many times a second, and a profile of the read path
// spent about a fifth of its CPU in the collector and allocation. Collecting at five times the
// live heap instead cuts that cost severalfold for a few tens of megabytes. A soft memory limit
// keeps the larger target from letting memory grow unbounded when the live heap itself grows — a
// burst of sign-ins holds hundreds of MiB of password-hashing memory — because near the limit the
// runtime collects as often as it must, whatever the percentage says.
//
// The standard variables win: GOGC or GOMEMLIMIT set in the environment leave the runtime's own
// reading of them untouched (GOGC=100 restores Go's default; GOMEMLIMIT should be set to a little
// under a container's memory limit).
package gcpolicy
