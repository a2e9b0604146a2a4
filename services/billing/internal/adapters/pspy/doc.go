// Package pspy is billing's client of the second payment provider's v2 API: JSON requests with
// the connection's secret key as a Bearer token, hal+json answers decoded down to what the
// app.Pspy port needs, and the provider's problems turned into *app.ProviderError. Every request
// goes through httpcall, so creating calls are retried with one idempotency key.
package pspy
