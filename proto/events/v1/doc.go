// Package eventsv1 holds the message option with which a payload message declares the event types
// it carries (event.proto), the Type of those events, and Declarations, the one reader of the
// option: proto/internal/cmd/genevents turns its result into the Event* constants beside the
// payloads, and pkg/events builds its catalog from it at run time.
package eventsv1
