// Package porttest holds the conformance suite of package app's Store port. Every adapter runs the
// same suite, so the memory store used in development and unit tests behaves like Postgres.
//
// A case an adapter cannot honour is declared by that adapter's test as an Exempt with its reason.
package porttest
