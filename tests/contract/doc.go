// Package contract holds the contract tests: they start the whole stack (all-in-one), drive the
// real REST edge over HTTP and compare parsed JSON bodies with the field names and JSON types of the
// published interface (summarised in docs/api.md), against memory stores and against Postgres.
package contract
