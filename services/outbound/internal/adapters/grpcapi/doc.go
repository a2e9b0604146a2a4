// Package grpcapi serves the outbound use cases over gRPC: the webhook endpoint routes the REST
// edge forwards. The access policy (pkg/authn) has admitted a write API key before a method runs;
// the methods hold the path's app to the key's.
package grpcapi
