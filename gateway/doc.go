// Package gateway is Berth's REST edge module. What the edge answers — every route, both envelope
// families, statuses, error shapes, headers and CORS — is documented in docs/api.md; this overview
// says how the module is built.
//
// # Packages
//
//   - edge builds the http.Handler: grpc-gateway muxes whose routes come from the protos'
//     google.api.http bindings, registered through generated clients over real connections (one
//     row per context of proto/registry with HTTP-bound services), wrapped in the HTTP middleware
//     every request passes.
//   - cmd/gateway runs it as a process: it dials every module of edge.Modules() by its
//     BERTH_<NAME>_ADDR, serves the handler on BERTH_HTTP_ADDR and the ops endpoints on
//     BERTH_OPS_ADDR (docs/configuration.md).
//   - login is the hosted login page, pay the hosted payment and return pages, webpage the security
//     headers those pages share; apidocs the API reference at /docs/api, rendered once from the
//     OpenAPI document the edge serves at /openapi.json; pbjson renders proto messages as protojson
//     would, faster.
//
// # How a request is served
//
// The edge is a translation: it holds no business rule and authenticates nobody. Which family a
// route answers in, its success status, its message and whether its data is null come from the
// berth.edge.v1.route option of the RPC grpc-gateway resolved (pkg/route), never from the path;
// the services' access-policy interceptor (pkg/authn) reads the same option to admit callers.
// The forwarding connections carry each caller's credentials as metadata and no service token;
// only the login and payment pages' connections (edge.WithLogin, edge.WithPayment) carry it, for
// identity's LoginService and billing's PaymentPageService.
//
// A request goes to the mux of the one service whose routes alone could match its path, and
// otherwise to the mux of all routes (edge/dispatch.go). Preflights never reach a service: they are
// answered from the option of the RPC that a second mux, whose connections never send, resolves.
// Requests are counted and timed per resolved RPC, never per raw path, which holds ids.
package gateway
