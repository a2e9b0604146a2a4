// Package gateway is Berth's REST edge module: package edge builds the HTTP handler, cmd/gateway
// runs it as a process. This file records the edge's behaviour where the contract
// (shared/spec/interface.md, decisions.md) leaves the edge a choice.
//
// # Families
//
// Every HTTP-bound RPC declares its envelope family, success status and data-null flag in the
// berth.edge.v1.route option. Successes in the /v1 family are
// {"success":true,"message":<option message>,"error":null,"data":<response or null>}; /api/v1
// successes are the response message itself (already the collection envelope). Errors take the
// family of the resolved RPC's option; only when no RPC was resolved (unknown path, wrong method,
// a body refused by the middleware, a panic) does the path decide: /api/... is the current family,
// anything else the older one.
//
// # Error mapping
//
//	gRPC code                                     HTTP  /api/v1 code and message
//	InvalidArgument, NotFound, OutOfRange,        400   [E4000] Bad Request (validation = failing field)
//	  AlreadyExists, FailedPrecondition,
//	  ResourceExhausted (+ Retry-After)
//	Unauthenticated                               401   [E4010] Unauthorized Token
//	PermissionDenied                              403   [E4030] App Is Disabled
//	Unavailable (+ Retry-After)                   500   [E0000] Internal Server Error
//	anything else (Internal, Unknown,             500   [E0000] Internal Server Error
//	  DeadlineExceeded, Canceled, ...)
//
// Services return transport-free faults (pkg/fault); one interceptor in every service (pkg/grpcx)
// turns them into these codes, with the failing field as a BadRequest field violation and a
// retry-after as RetryInfo. The edge reads both back.
//
// FailedPrecondition is 400: it means the resource is not in a state that allows the request, which
// the caller causes and can change. NotFound is 400 because the contract answers missing and foreign
// resources like bad input (ids cannot be probed). ResourceExhausted is a limit the caller reached —
// the sign-in attempt limits and route 23's daily invite limit — and the contract has no 429, so it
// is 400 too; when the service knows how long the limit holds, the answer carries Retry-After (whole
// seconds, rounded up). Unavailable (a backend down or not configured) is a server-side failure and
// answers like any other 500, plus Retry-After when the service gave one.
// /v1 errors carry the status message as "error", except 500, which always says "Internal Server
// Error"; the real cause is logged with the request id.
//
// The hosted login page (package login) is HTML, not a contract family: it answers a reached limit
// with 429 and an unavailable backend with 503, both with Retry-After when known.
//
// Unknown paths answer 404 and wrong methods 405 in the path's family; in /api/v1 shape with code
// [E4000] and message "Not Found" / "Method Not Allowed". A path with an empty ("//"), "." or ".."
// segment (dots escaped as %2e too; a trailing slash is allowed) answers 400 in the path's family
// whatever the method, with validation "path" and the message `path: must not contain empty, "."
// or ".." segments`, its body drained and never forwarded or redirected: cleaned, it would name
// another resource than the one sent (edge.Front keeps a host's http.ServeMux from redirecting it).
//
// # Requests
//
// Bodies: at most 1 MiB (larger: 400). Content-Type application/json with any parameters,
// text/plain, or none; the body must then parse as JSON (else 400). Any other media type on a
// request with a body: 400 in the path's family. Unknown JSON fields and unknown query parameters are
// ignored. X-HTTP-Method-Override and grpc-gateway's form-POST-as-GET fallback are disabled.
//
// A body the decoder refuses is answered with the field or rule, never the decoder's text:
// "body: not valid JSON", "body: larger than 1 MiB", "body: must be a JSON object",
// "<field>: must be a string" (the JSON path as sent), "<field>: given more than once". Every text
// input is held to pkg/text's rule before it is marshalled: path ids, query parameters (ignored
// ones too), body strings (with the fields' multi-line option) and the forwarded headers
// (printable ASCII); a violation is 400 in the route's family naming the field. Go's net/http
// refuses a request it cannot parse before any handler runs; the edge's listener (edge.Listener)
// answers those refusals in the family of the path as sent instead of Go's plain text: a
// malformed escape in the path (/v1/users/%zz) with validation "path" and `path: not a valid path
// (malformed escape)`, a header with a control byte "header", a missing or malformed Host "Host",
// any other malformed request line "request"; the connection then closes after reading what the
// client still sends for a moment, so a body in flight does not reset it. Go keeps its own 431
// (headers too large), 501 (unknown transfer encoding) and 505 (unknown HTTP version).
//
// # Headers
//
// Forwarded to services as gRPC metadata: X-API-KEY, X-API-KEY-TYPE, X-CLIENT-ID (any letter case)
// as x-api-key, x-api-key-type, x-client-id; Authorization as authorization; Origin as origin (for
// CORS, below); the request id as x-request-id. grpc-gateway itself also always sends
// x-forwarded-for (client address) and x-forwarded-host. No other client header crosses the edge,
// in particular no x-berth-* header, which services reserve for internal credentials. No gRPC
// metadata becomes a response header, with one exception: berth-cors-allow-origin (see CORS).
// Every response carries X-Request-Id: the caller's when it is 1-128 characters of
// [A-Za-z0-9._:-], a fresh random id otherwise.
//
// # CORS
//
// Preflights (OPTIONS with Origin and Access-Control-Request-Method) never reach a service: the
// edge resolves the requested method and path to its RPC with the same grpc-gateway routing
// (a second mux whose connections never send) and answers from the route option alone. A route
// that accepts a tenant access token or no credentials answers 204 for any origin with
// Access-Control-Allow-Origin: <origin>, Vary: Origin, Access-Control-Allow-Methods: GET, POST,
// PUT, DELETE, Access-Control-Allow-Headers: Content-Type, Authorization and
// Access-Control-Max-Age: 600 — never Access-Control-Allow-Credentials (Berth sets no cookies).
// Refusals carry no Access-Control-* header, so the browser stops: a route taking API keys,
// operator, admin or service credentials, a request for any other header (X-API-KEY,
// X-API-KEY-TYPE and X-CLIENT-ID above all), or an Origin that is no header-safe value answers
// 403 in the route's family (/api/v1: [E4030] with validation Origin or
// Access-Control-Request-Headers); a path or method no route serves answers the routing error's
// 404/405 in the path's family. OPTIONS without the preflight headers is a wrong method (405).
//
// The actual request's Origin travels to the service, whose access-policy interceptor (pkg/authn)
// decides once it knows the app in question — route 1's client_id, the bearer token's app
// elsewhere — and answers response metadata berth-cors-allow-origin. The edge turns it into
// Access-Control-Allow-Origin plus Vary: Origin, on successes and errors alike, and only when it
// equals the request's Origin. Nothing else of the answer depends on Origin, so responses without
// the header need no Vary.
//
// # Health and metrics
//
// Not on the public port: cmd/gateway serves /healthz (the process answers), /readyz (every
// backend's gRPC health says SERVING) and /metrics on its ops address (BERTH_OPS_ADDR); the
// all-in-one process serves the same paths for all its modules on its HTTP address. Requests are
// counted and timed per resolved RPC (never per raw path, which holds ids).
//
// # Credentials towards the services
//
// The forwarding connections carry no service token: a REST call reaches a service with its
// caller's credentials only. The hosted login page alone has a connection that authenticates as a
// Berth service (edge.WithLogin), for identity's service-only LoginService.
//
// # Logging
//
// One access-log line per request: method, path, status, duration, request id. Headers and bodies
// are never logged; they carry API keys, tokens and personal data.
package gateway
