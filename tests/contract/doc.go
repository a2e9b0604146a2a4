// Package contract holds the contract tests: they start the whole stack (all-in-one), drive the
// real REST edge over HTTP and compare parsed JSON bodies with the field names and JSON types of the
// spec (../shared/spec/interface.md), against memory stores and against Postgres.
package contract
