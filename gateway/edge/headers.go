package edge

import "net/textproto"

// forwardedHeaders are the client headers that reach the services, by canonical HTTP name, with the
// gRPC metadata key they travel as. The list is closed on purpose: services trust internal metadata
// (x-berth-admin-token, x-berth-service-token) that a client must never be able to inject.
//
// Authorization is not listed because grpc-gateway forwards it as "authorization" on its own;
// listing it too would send it twice.
var forwardedHeaders = map[string]string{
	"X-Api-Key":      "x-api-key",
	"X-Api-Key-Type": "x-api-key-type",
	"X-Client-Id":    "x-client-id",
	// Origin lets the service's access policy decide CORS once it knows the caller's app.
	"Origin": "origin",
}

// incomingHeader is the mux's incoming header matcher.
func incomingHeader(key string) (string, bool) {
	md, ok := forwardedHeaders[textproto.CanonicalMIMEHeaderKey(key)]
	return md, ok
}

// dropHeader is the outgoing header and trailer matcher: no service metadata becomes an HTTP header
// (grpc-gateway would otherwise emit every one as Grpc-Metadata-* / Grpc-Trailer-*).
func dropHeader(string) (string, bool) { return "", false }
