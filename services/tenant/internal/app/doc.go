// Package app holds the tenant context's use cases (read a tenant with its users, patch it,
// create it, retire it when identity reports that its last user was deleted) and the ports they
// need: a Store for tenants and their outbox events, and a UserDirectory for the users of a
// tenant, which identity owns.
//
// Use cases know no transport: they take the caller's app id from the inbound adapter and return
// faults (pkg/fault: domain.ErrNotFound, invalid fields, ErrUsersUnavailable), which the server
// chain maps to gRPC codes.
package app
