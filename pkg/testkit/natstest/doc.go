// Package natstest gives a test an events.Bus with its streams in place: on the server named by
// TEST_NATS_URL under a prefix of its own, or else on an embedded server of its own.
package natstest
