// Package server is the outbound service's composition root, used by cmd/outbound and by the
// all-in-one process: it picks the store (Postgres, or memory for the embedded development
// default), builds the gRPC server with the shared access policy (API keys verified by identity),
// and runs the consumers of identity's, tenant's and billing's events and the delivery runner.
package server
