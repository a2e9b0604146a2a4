// Package events carries Berth's domain events from the service that changed state to the services
// that react to it, without losing one or applying one twice:
//
//   - Event is the envelope; its payload is the protojson of a message from proto/<context>/v1.
//   - The catalog (Types, Payload, Contexts) is what the messages of every context in
//     proto/registry declare with the option berth.events.v1.event: New accepts only a declared
//     type with its declared payload, and each context of the catalog gets its own stream. The
//     generated Event* constants (e.g. identityv1.EventUserUpdated) spell the types.
//   - InsertOutbox writes events in the same Postgres transaction as the state change (MemoryOutbox
//     does the same for memory stores), so an event exists exactly when its change committed.
//   - Relay publishes pending outbox events to JetStream with Nats-Msg-Id = event id, so a
//     republished event (a relay that crashed before marking it) is dropped by the stream's
//     duplicate window.
//   - Bus.Consume runs a durable consumer that applies each event through an Inbox, which records
//     the event id in the same transaction as the consumer's effect, so a redelivered message is
//     acknowledged without being applied again. Every consumer's handler is built with Handle,
//     which decodes the payload its type declares and applies one rule to an event whose payload
//     does not decode: logged at error level, counted, and acknowledged, never redelivered.
//   - Both tables stay bounded: Relay.Run deletes events published longer ago than its retention
//     (a day by default, Relay.SetRetention) and Bus.Consume deletes its inbox's records after a
//     week, far beyond the minutes in which JetStream may redeliver a message.
//   - Bus.Subscribe is the lossy, every-replica fan-out for cache invalidation.
package events
