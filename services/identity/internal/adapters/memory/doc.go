// Package memory implements the identity store ports in process memory, for the embedded development
// stack only. One mutex guards all entities and the outbox, so a change and its events are as atomic
// as in PostgreSQL; porttest holds it to the same contract.
package memory
