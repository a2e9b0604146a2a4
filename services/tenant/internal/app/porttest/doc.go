// Package porttest holds the conformance suites of package app's ports. Every adapter runs the
// same suite, so the memory store used in development and unit tests behaves like Postgres.
//
// A case an adapter cannot honour is declared by that adapter's test as an Exempt with its reason.
package porttest
