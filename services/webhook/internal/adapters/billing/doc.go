// Package billing is ingest's adapter to the billing context, which names the connection behind
// a provider call and applies it (billing's ProviderEventService, called with the service token).
package billing
