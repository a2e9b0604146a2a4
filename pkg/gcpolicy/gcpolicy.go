package gcpolicy

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

// Configure applies GCPercent unless GOGC is set, and Limit unless GOMEMLIMIT is set; a variable
// that is set was already applied by the runtime at start-up.
func Configure(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(Limit)
	}
}
