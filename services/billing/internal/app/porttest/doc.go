// Package porttest holds the conformance suites of billing's storage ports, one per aggregate
// (connections.go, settings.go, catalog.go, promotions.go, accounts.go, customers.go,
// checkouts.go, charges.go), run by Run. The memory store and the Postgres store both run them,
// so development on memory behaves like production on Postgres. A port an adapter cannot honour
// is declared by that adapter's test as an Exempt with its reason.
package porttest
