// Package identity adapts the tenant service to the identity service, both ways:
//
//   - Directory is the outbound app.UserDirectory that lists a tenant's users with
//     IdentityInternalService.ListTenantUsers. The connection it is given must send the internal
//     service token (grpcx.Dial or grpcx.ServiceTokenInterceptor), since that method is
//     service-only.
//   - ConsumeUserEvents is the inbound consumer of identity's user events on JetStream, which
//     retires a tenant whose last user was deleted.
package identity
