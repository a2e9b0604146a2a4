// Package pspx is a stateful sandbox of the pspx REST API, the subset Berth uses: customers,
// products, prices, tax rates, hosted checkout sessions, subscriptions, invoice items, invoices,
// payment intents, payment methods and events, with the provider's form-encoded requests, JSON
// objects, error objects and idempotent-POST replay.
//
// Each secret key is an account of its own (sk_test_… in test mode, sk_live_… in live mode), kept
// in memory. Time is the shared sandbox clock: an advance settles pending bank debits, expires
// checkout sessions, renews subscriptions whose period ended and finalizes renewal drafts whose
// window closed, in time order, before it returns. Every change records the event the provider
// would send (Events); with a delivery queue configured, each event is also signed and posted to
// the account's webhook endpoints (/v1/webhook_endpoints) that asked for its type.
//
// A renewal starts as a draft invoice (invoice.created shows it as such) so receivers can edit
// its lines. It is finalized and charged once an hour of sandbox time has passed and every
// enabled endpoint answered its invoice.created with a 2xx, or after 72 hours regardless. A clock
// advance that reaches a draft's hour waits up to 10 s of real time for those answers, without
// holding the sandbox's lock, since receivers call back into the API while they handle an event.
//
// The hosted checkout page (the session's url, under /checkout/) is plain server-rendered HTML;
// what the payer types decides the outcome: card 4242 4242 4242 4242 succeeds; card
// 4000 0000 0000 0341 is saved but every charge is declined (a payment-mode checkout shows the
// decline and stays open); IBAN DE89370400440532013000 and DE62370400440532013001 complete the
// checkout with the debit processing, and it succeeds or fails at the next clock advance.
//
// The sandbox makes a few of the provider's account settings fixed choices, named where they
// apply: drafts created through the API never finalize by themselves (auto_advance false), a
// renewal that was declined is retried at each following clock advance and the invoice is marked
// uncollectible at the third failed attempt; a renewal marked uncollectible leaves its subscription
// past due, its next period invoiced when the unpaid one ends, while a first invoice marked
// uncollectible cancels the subscription.
package pspx
