// Package memory is billing's store in process memory: the embedded development default and the
// unit tests' store. It passes the same conformance suite (app/porttest) as the Postgres store.
package memory
