// Package grpc is the identity service's inbound adapter: it implements the three gRPC services of
// proto/identity/v1, converts between proto and domain values, takes the caller's app from the
// Principal the access policy admitted, and maps domain errors to gRPC statuses (pkg/apierr).
// Authorization is the policy interceptor's job; scoping every lookup to the caller's app is the use
// cases' job — this package only passes the caller along.
package grpc
