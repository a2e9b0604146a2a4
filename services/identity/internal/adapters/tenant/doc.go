// Package tenant is identity's outbound adapter to the tenant service: sign-up creates the new
// user's tenant through the tenant service's internal gRPC API, since tenants are that context's
// data.
package tenant
