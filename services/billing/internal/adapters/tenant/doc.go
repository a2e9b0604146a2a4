// Package tenant is billing's adapter to the tenant context: it hands tenants the billing state
// billing decided, synchronously, so route 5 shows a change to the caller who made it.
package tenant
