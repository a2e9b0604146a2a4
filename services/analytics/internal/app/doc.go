// Package app holds the analytics context's use cases and the port they need.
//
// Analytics owns no data of its own: it builds read models from other contexts' events. The
// Projector applies identity's and tenant's events to a Store (sign-ins, and the latest snapshot
// of each user and tenant); the Service answers route 8 from that store. Snapshots are other
// contexts' published messages kept as they arrived, so the port speaks those messages rather than
// copies of them.
//
// Use cases know no transport: they return faults (pkg/fault), which the server chain maps to gRPC
// codes.
package app
