// Package identity is the outbound adapter to the identity service: the app.UserDirectory that
// lists a tenant's users with IdentityInternalService.ListTenantUsers. The connection it is given
// must send the internal service token (grpcx.Dial or grpcx.ServiceTokenInterceptor), since that
// method is service-only.
package identity
