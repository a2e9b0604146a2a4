// Package pspx is a stateful sandbox of the pspx REST API, the subset Berth uses: customers,
// products, prices, tax rates, hosted checkout sessions, subscriptions, invoice items, invoices,
// payment intents, payment methods and events, with the provider's form-encoded requests, JSON
// objects, error objects and idempotent-POST replay.
//
// Each secret key is an account of its own (sk_test_… in test mode, sk_live_… in live mode), kept
// in memory. Time is the shared sandbox clock: an advance settles pending bank debits, expires
// checkout sessions and renews subscriptions whose period ended, in time order, before it
// returns. Every change records the event the provider would send; Events hands them out so they
// can be delivered as webhooks. The hosted checkout page is plain server-rendered HTML with test
// card numbers and IBANs that decide each outcome (see the page itself for the list).
//
// The sandbox makes a few of the provider's account settings fixed choices, named where they
// apply: drafts never finalize by themselves (auto_advance false), a renewal that was declined
// is retried at each following clock advance and the invoice is marked uncollectible at the
// third failed attempt, and an invoice marked uncollectible cancels its subscription.
package pspx
