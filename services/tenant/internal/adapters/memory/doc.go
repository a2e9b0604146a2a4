// Package memory is the in-process tenant store: the embedded development default and the fast
// half of the store conformance suite. Its outbox is an events.MemoryOutbox filled under the
// store's lock, so state and events change together as they do in Postgres.
package memory
