// Package registry is the one list of Berth's bounded contexts as their protos declare them: for
// each context its name, its generated Go package (linking it registers the package's files in
// protoregistry.GlobalFiles) and its HTTP-bound gRPC services with their generated grpc-gateway
// registrations.
//
// Everything that needs "every context's protos" derives from this list instead of importing the
// packages itself: genevents and genopenapi (make proto), the event catalog in pkg/events (which
// decides the streams) and the REST edge's backends in gateway/edge. Adding a context with protos
// therefore adds one entry here, and its tests fail when a package, a file or an HTTP-bound service
// is left out.
//
// It lives in the proto module because it needs nothing but generated code and the grpc-gateway
// runtime, which that code already depends on; everything that reads it may import it without a
// cycle.
package registry
