// Package convert converts between the domain model and the tenant/v1 messages. Both the gRPC
// adapter (responses, request bodies) and the use cases (event payloads) render tenants, and they
// must render them the same way, so the mapping lives here once.
package convert
