// Package domain holds the analytics context's own rules: which days a list covers (the from/to
// range of routes 6–9), how old a sign-in is in whole days, what a recorded sign-in, one-time
// payment and tenant change day are, and how a subscription's state follows billing's events in
// whatever order they arrive.
//
// The package is pure Go: no gRPC, SQL or NATS. Validation failures are Invalid faults (pkg/fault)
// naming the query parameter as the caller sent it.
package domain
