// Package memory is billing's store in process memory: the embedded development default and the
// unit tests' store. Like the Postgres store, it implements every storage port, each port's
// methods in the file named for its aggregate, and it passes the same conformance suites
// (app/porttest).
package memory
