// Package server is the webhook-ingest service's composition root, used by cmd/webhook and by the
// all-in-one process: it picks the store (Postgres, or memory for the embedded development
// default), wires the use cases to billing (which names connections and applies provider calls)
// and builds the gRPC server with the shared access policy.
// Its settings are declared in Module (docs/configuration.md).
package server
