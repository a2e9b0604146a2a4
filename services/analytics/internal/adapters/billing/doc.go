// Package billing feeds the billing context's money events (payments, subscriptions, failures)
// into the analytics read models of routes 6 and 7.
package billing
