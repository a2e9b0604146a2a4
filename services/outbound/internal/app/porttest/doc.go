// Package porttest holds the conformance suite of package app's storage ports. The memory and
// Postgres adapters run the same suite, so the store used in development behaves like production's.
//
// A case an adapter cannot honour is declared by that adapter's test as an Exempt with its reason.
package porttest
