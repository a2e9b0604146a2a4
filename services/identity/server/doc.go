// Package server is the identity service's composition root: it picks the stores (PostgreSQL, or
// memory for the embedded development stack), wires the use cases, the gRPC server with the access
// policy, and the outbox relay. cmd/identity and the all-in-one process both build the service here.
package server
