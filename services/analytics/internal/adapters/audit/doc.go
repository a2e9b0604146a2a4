// Package audit feeds every context's events into the audit log: one durable consumer per
// context's stream, each applying every event type of its context exactly once through the inbox.
package audit
