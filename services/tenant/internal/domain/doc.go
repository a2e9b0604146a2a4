// Package domain holds the tenant context's model: a tenant (an app's billing account) with its
// shipping and billing addresses, the rules for changing it through route 17, and its retirement
// when its last user is deleted.
//
// The billing state of a tenant (provider ids, mode, paid and free units, failure and freeze flags)
// lives in its own struct so that the route-17 patch, which has no way to reach it, cannot change it
// by accident; only billing events will.
//
// The package is pure Go: no gRPC, SQL or NATS. Validation failures are Invalid faults (pkg/fault)
// naming the field as the caller sent it ("companyTaxExempt" in a flat body,
// "tenant.companyTaxExempt" in a nested one).
package domain
