// Package grpcapi is the identity service's inbound adapter: it implements the gRPC services of
// proto/identity/v1 (identity, operator, token, login, internal and admin), converts between proto
// and domain values, takes the caller's app (on the operator API: the project member) from the
// Principal the access policy admitted (authn.CallerApp), and returns the use cases' errors as they
// are: they are faults (pkg/fault), which the server chain maps to gRPC statuses (pkg/grpcx).
// Authorization is the policy interceptor's job; scoping every lookup to the caller's app is the use
// cases' job — this package only passes the caller along.
package grpcapi
