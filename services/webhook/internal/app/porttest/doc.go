// Package porttest holds the conformance suite of app.Store; the memory and Postgres stores both
// run it.
package porttest
