// Package memory implements the outbound stores in process memory, for the all-in-one process's
// development default and unit tests. It honours the same conformance suite as Postgres
// (package porttest).
package memory
