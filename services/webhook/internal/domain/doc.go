// Package domain holds the webhook-ingest context's model: a provider's call as received, the
// minimal parse that routes it, and pspx's signature check. It imports nothing of transport or
// storage.
package domain
