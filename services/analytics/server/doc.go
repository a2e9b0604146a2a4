// Package server is the analytics service's composition root, used by cmd/analytics and by the
// all-in-one process: it picks the store (Postgres, or memory for the embedded development
// default), builds the gRPC server with the shared access policy, and in Run feeds identity's,
// tenant's and billing's events into the read models.
package server
