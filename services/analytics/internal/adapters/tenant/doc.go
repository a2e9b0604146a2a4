// Package tenant is the analytics service's adapter to the tenant context: a durable JetStream
// consumer of tenant events feeding the read models through the inbox.
package tenant
