// Package app holds the billing context's use cases and the ports they need: the stores of
// provider connections, catalogs, checkout sessions, promotions and tenants' billing state, and
// the two payment providers (Pspx, Pspy) in their own terms.
//
// Use cases know no transport: they return faults (pkg/fault), which the server chain maps to
// gRPC codes.
package app
