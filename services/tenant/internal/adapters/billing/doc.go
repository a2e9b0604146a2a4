// Package billing is the tenant service's adapter to the billing context: the consumer of
// billing's tenant-state events, which repairs a tenant whose synchronous billing command failed.
package billing
