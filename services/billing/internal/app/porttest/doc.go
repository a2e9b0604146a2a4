// Package porttest holds the conformance suite of app.Store. The memory store and the Postgres
// store both run it, so development on memory behaves like production on Postgres. A case an
// adapter cannot honour is declared by that adapter's test as an Exempt with its reason.
package porttest
