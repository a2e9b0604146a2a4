// Package domain holds the analytics context's own rules: which days a list covers (the from/to
// range of routes 6–9), how old a sign-in is in whole days, and what a recorded sign-in is.
//
// The package is pure Go: no gRPC, SQL or NATS. Validation failures are Invalid faults (pkg/fault)
// naming the query parameter as the caller sent it.
package domain
