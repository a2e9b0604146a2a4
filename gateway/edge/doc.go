// Package edge is Berth's REST edge: a grpc-gateway ServeMux that maps the documented HTTP routes
// onto the services' gRPC APIs, wrapped in the HTTP middleware every request passes through.
//
// The edge is a translation, not a brain. Which envelope a route answers in, its success status and
// whether its `data` is null are read from the per-RPC route option (proto/edge/v1) of the method
// grpc-gateway resolved, never guessed from the path; authentication and business rules stay in the
// services, which receive the caller's credentials as gRPC metadata.
//
// Files: edge.go builds the handler (the routing table derived from proto/registry with its two
// exceptions, mux options, pages);
// dispatch.go hands each request to the mux of the one service its path can reach, or to the mux
// of all routes;
// envelope.go renders successes; failure.go renders errors in both families; headers.go decides
// which headers cross the edge; input.go holds the text rule at the edge (query and header checks,
// the checked backend connections) and decode.go the body decoder whose errors name the field;
// middleware.go holds request id, body limit, media type, panic
// recovery and access log; paths.go the canonical-path rule (and Front, for a host whose own
// http.ServeMux stands in front of the edge); refusals.go the listener that answers, in the
// path's family, the requests Go's HTTP server refuses before any handler. What the edge answers, route by route, is documented in docs/api.md.
package edge
