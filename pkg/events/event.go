package events

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/pkg/tracing"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"
)

// Event is the envelope every Berth event travels in, on the wire (as JSON) and in the outbox.
type Event struct {
	ID     string          `json:"id"`     // UUID; also the Nats-Msg-Id, so JetStream drops republished duplicates
	Type   eventsv1.Type   `json:"type"`   // e.g. identityv1.EventUserUpdated; the NATS subject is "<prefix>.<Type>"
	Source string          `json:"source"` // producing service, e.g. "identity"
	AppID  string          `json:"appId"`
	Time   time.Time       `json:"time"`
	Data   json.RawMessage `json:"data"` // protojson of the payload message
	// Actor is who caused the event, stamped where it is appended (see Actor). Envelopes written
	// before actors were stamped have none.
	Actor *Actor `json:"actor,omitempty"`
	// Trace is the trace context the event was written in. It travels beside the envelope (the
	// outbox's trace column, NATS message headers), never in it.
	Trace tracing.Carrier `json:"-"`
}

// New builds an event with a fresh id. The id is a version 7 UUID, time-ordered, which keeps the
// outbox and inbox primary-key indexes append-mostly. Time is cut to microseconds, the precision
// Postgres keeps, so an event reads back from the outbox equal to what was written.
//
// eventType must be declared in the catalog and payload must be the message that declares it
// (Payload), so that a consumer decoding the declared message never meets another one.
func New(source string, eventType eventsv1.Type, appID string, payload proto.Message) (Event, error) {
	if strings.TrimSpace(source) == "" {
		return Event{}, errors.New("events: source must not be empty")
	}
	if err := checkDeclared(eventType); err != nil {
		return Event{}, err
	}
	if payload == nil {
		return Event{}, errors.New("events: payload must not be nil")
	}
	if got, want := payload.ProtoReflect().Descriptor().FullName(), Payload(eventType).FullName(); got != want {
		return Event{}, fmt.Errorf("events: %s events carry %s, not %s", eventType, want, got)
	}
	data, err := protojson.Marshal(payload)
	if err != nil {
		return Event{}, fmt.Errorf("events: encode %s payload: %w", eventType, err)
	}
	id, err := uuid.NewV7()
	if err != nil {
		return Event{}, fmt.Errorf("events: new id: %w", err)
	}
	return Event{
		ID:     id.String(),
		Type:   eventType,
		Source: source,
		AppID:  appID,
		Time:   time.Now().UTC().Truncate(time.Microsecond),
		Data:   data,
	}, nil
}

// Decode unmarshals the payload into into. Unknown fields are discarded so that a producer can add
// fields before its consumers are upgraded.
func (e Event) Decode(into proto.Message) error {
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(e.Data, into); err != nil {
		return fmt.Errorf("events: decode %s payload: %w", e.Type, err)
	}
	return nil
}

// validate checks what the outbox, the relay and the consumers rely on: a UUID id (the inbox and
// outbox key) and a type that names a known context (it picks the stream).
func (e Event) validate() error {
	if _, err := uuid.Parse(e.ID); err != nil {
		return fmt.Errorf("events: event id %q is not a UUID", e.ID)
	}
	if _, err := contextOf(e.Type); err != nil {
		return err
	}
	return nil
}
