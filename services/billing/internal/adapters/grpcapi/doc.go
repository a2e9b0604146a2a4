// Package grpcapi is billing's inbound gRPC adapter: thin handlers that convert, call the use case
// and convert back. Access rules come from each RPC's route option, enforced by the shared
// policy interceptor before a handler runs.
package grpcapi
