// Package grpcapi is the inbound adapter: it serves tenant/v1's TenantService (routes 5 and 17 and
// GET /v1/tenants/me), TenantInternalService (the sign-up tenant) and TenantAdminService over the
// use cases in package app. Access is enforced before a handler runs by the authn policy
// interceptor; handlers take the caller's app from the authenticated principal and scope every
// lookup to it, and they translate domain errors into gRPC statuses.
package grpcapi
