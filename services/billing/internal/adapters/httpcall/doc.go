// Package httpcall is the one request loop of billing's provider clients: it sends a request,
// retries it with backoff when the provider answers 429 or 5xx or the connection fails, and sends
// the same body and idempotency key on every attempt, so a retry can never create a second object.
// 4xx answers other than 429 are the caller's problem and are never retried.
package httpcall
