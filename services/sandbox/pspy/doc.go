// Package pspy is a stateful sandbox of the second payment provider's v2 API, the subset Berth
// uses: customers, payments with their hosted checkout page, refunds, mandates and subscriptions,
// in the provider's JSON shapes and hal+json problems. Every secret key is its own account (its
// prefix, test_ or live_, gives the mode), state lives in memory, time comes from the sandbox
// clock, and an advance of that clock charges the subscriptions that fell due. Every webhook call
// the provider would make (a payment's status changed, a refund was created, a chargeback came
// in) is recorded in order (Notifications) and, with a delivery queue configured, posted to the
// payment's webhook URL as the form id=<payment id>, retried on the provider's schedule. The
// sandbox control POST /payments/{id}/chargeback charges a paid payment back.
package pspy
