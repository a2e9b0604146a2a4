// Package server is the tenant service's composition root, used by cmd/tenant and by the
// all-in-one process: it picks the store (Postgres, or memory for the embedded development
// default), wires the use cases to the identity service, builds the gRPC server with the shared
// access policy, and runs the outbox relay and the consumer of identity's events.
package server
