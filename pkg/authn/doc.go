// Package authn authenticates callers of every Berth service and enforces the access policy that
// each RPC declares in its edge route option (proto/edge/v1). The policy runs as a gRPC interceptor
// inside the services, not in the REST edge, so internal teams calling gRPC directly meet exactly
// the rules that apps calling the REST edge meet.
//
// Credentials arrive as gRPC metadata: x-api-key, x-api-key-type, x-client-id (API keys),
// authorization (tenant access tokens, operator tokens), x-berth-admin-token (provisioning) and
// x-berth-service-token (service-to-service calls). The REST edge forwards only the first four
// from HTTP, so the internal tokens cannot be supplied through it.
package authn
