// Package identity is the analytics service's adapter to the identity context: a durable JetStream
// consumer of identity's user events, applied to the read models through the inbox so that each
// event counts once however often it is delivered.
package identity
