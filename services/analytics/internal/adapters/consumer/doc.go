// Package consumer feeds identity's and tenant's events to the projector through durable
// JetStream consumers and an inbox, so each event is applied once however often it is delivered.
package consumer
