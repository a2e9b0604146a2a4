// Package app holds the webhook-ingest use cases (routes 3 and 4, the operators' list and replay)
// and the ports they need: the store of received calls and billing, which applies them.
package app
