// Package grpcx builds Berth's gRPC servers and clients with the same interceptor chains
// everywhere. Servers run, for unary calls: request id, panic recovery, access log, fault mapping,
// a default deadline, the text rule (pkg/text, on every request message) and the access policy;
// for streams the same without the deadline (a stream may legitimately outlive any fixed bound).
// Putting the policy and the text rule in the server chain (not in the REST edge) is what gives
// direct gRPC callers the same rules, and putting them in the stream chain too is what keeps a
// streaming RPC from bypassing them.
//
// Fault mapping (Faults) is the one place where the transport-free errors of pkg/fault become gRPC
// statuses, so use cases and adapters return errors as they are and never build statuses. It sits
// inside the access log, so the log records the code the caller received, and outside the policy,
// so the policy's faults are mapped like any handler's.
//
// Clients (Dial) resolve names through DNS and balance calls round-robin across every address, so
// replicas of a service behind one DNS name share its load; a comma-separated list of addresses
// names replicas that have no common DNS name (ListScheme).
package grpcx
