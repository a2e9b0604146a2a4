// Package memory is the webhook store in process memory: the embedded development default only.
// It passes the same conformance suite as the Postgres store.
package memory
