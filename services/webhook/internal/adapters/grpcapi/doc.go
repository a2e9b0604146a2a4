// Package grpcapi holds the webhook service's inbound handlers: the ingest of routes 3 and 4 and
// the operators' list and replay. They convert (internal/convert), call the use case and convert
// back.
package grpcapi
