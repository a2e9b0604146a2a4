// Package app holds the analytics context's use cases and the port they need.
//
// Analytics owns no data of its own: it builds read models from other contexts' events. One
// Service, built by New from a Config, applies identity's, tenant's and billing's events to a
// Store (sign-ins, the latest snapshot of each user and tenant, subscriptions and payments),
// rebuilds that store from the event log, and answers routes 6 to 9 from it. Snapshots are other
// contexts' published messages kept as they arrived, so the port speaks those messages rather than
// copies of them.
//
// Use cases know no transport: they return faults (pkg/fault), which the server chain maps to gRPC
// codes.
package app
