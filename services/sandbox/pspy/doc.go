// Package pspy is a stateful sandbox of the second payment provider's v2 API, the subset Berth
// uses: customers, payments with their hosted checkout page, refunds, mandates and subscriptions,
// in the provider's JSON shapes and hal+json problems. Every secret key is its own account (its
// prefix, test_ or live_, gives the mode), state lives in memory, time comes from the sandbox
// clock, and an advance of that clock charges the subscriptions that fell due. The webhook calls
// the provider would make are recorded in order (Notifications) for a deliverer to send.
package pspy
