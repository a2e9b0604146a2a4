// Package server is the billing service's composition root, used by cmd/billing and by the
// all-in-one process: it picks the store (Postgres, or memory for the embedded development
// default), wires the use cases to identity (users, credentials) and tenant (the billing state it
// shows), builds the gRPC server with the shared access policy, runs the outbox relay and
// consumes its own first-payment events to grant referral rewards.
// Its settings are declared in Module (docs/configuration.md).
package server
