package heap

import "runtime/debug"

// Defaults applied when the environment does not choose.
const (
	// GCPercent lets the heap grow to five times what the last collection left live.
	GCPercent = 400
	// Limit is the soft memory limit: about twice the password-hashing budget (identity's
	// BERTH_PASSWORD_HASH_CONCURRENCY default holds 256 MiB), so a sign-in burst is collected as
	// often as Go's default would have, and a quiet process never comes near it.
	Limit = 512 << 20
)

// Policy is what a process runs with.
type Policy struct {
	GCPercent int   // negative: collection off
	Limit     int64 // bytes; math.MaxInt64 means none
}

// Configure applies GCPercent unless GOGC is set, and Limit unless GOMEMLIMIT is set, and returns
// the policy in force.
func Configure(getenv func(string) string) Policy {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(Limit)
	}
	return Current()
}

// Current reads the policy in force without changing it.
func Current() Policy {
	pct := debug.SetGCPercent(100)
	debug.SetGCPercent(pct)
	return Policy{GCPercent: pct, Limit: debug.SetMemoryLimit(-1)}
}
