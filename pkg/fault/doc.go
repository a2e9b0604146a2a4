// Package fault is Berth's one vocabulary for failures a caller must be told about. Domain code and
// use cases return faults; they know no transport. One gRPC interceptor (pkg/grpcx) maps a fault's
// Kind to a status code once for every service, and the REST edge maps that status to the route's
// envelope family, so a rule such as "a missing resource answers like bad input" lives in one place.
//
// The message of every fault but an Internal one is shown to callers verbatim (the /v1 family's
// "error" member, gRPC status messages). It must therefore never carry internal detail: no SQL, no
// addresses, no secrets. An Internal fault instead carries a private cause that only reaches the
// logs; callers see the fixed InternalMessage.
//
// The package imports nothing of gRPC, HTTP, SQL or NATS, so domain packages may depend on it.
package fault
