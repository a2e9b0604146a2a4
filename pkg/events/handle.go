package events

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// ErrUndecodable marks an event whose payload does not decode into the message its type declares.
// It wraps ErrMalformed: such an event can never be applied, however often it comes back.
var ErrUndecodable = fmt.Errorf("%w: the payload does not decode", ErrMalformed)

// Handle is how every durable consumer reads its events: it returns the Handler that decodes each
// event's payload into the message its type declares (Payload) and passes it to fn. T is that
// generated message (a pointer, e.g. *identityv1.UserDeleted) for a consumer whose types all
// declare it, or proto.Message itself for a consumer of types with different payloads, which then
// switches on the message it is given.
//
// The rule for an event whose payload does not decode is this one, for every consumer: fn is not
// called and the handler returns an error wrapping ErrUndecodable, which Consume logs at error
// level with the event's id and type, counts under the outcome "undecodable" of
// berth_events_consumed_total, and acknowledges (Replay skips it and counts it Malformed). The same
// bytes fail the same way on every delivery, so redelivering the event cannot help: it would come
// back, fail and occupy the consumer on every retry until MaxDeliver gave it up minutes later, and
// still end unapplied. The inbox records nothing for it, since nothing was applied; the log line
// and the counter are what an operator follows up.
//
// An event whose type declares a payload other than T is no bad event but a consumer wired to a
// type it cannot read: the handler returns a plain error, so the event is redelivered and logged
// as a failure until a corrected consumer applies it.
func Handle[T proto.Message](fn func(ctx context.Context, ev Event, payload T) error) Handler {
	decode := decoder[T]()
	return func(ctx context.Context, ev Event) error {
		payload, err := decode(ev)
		if err != nil {
			return err
		}
		return fn(ctx, ev, payload)
	}
}

// HandleBatch is Handle for a BatchHandler: it decodes every event's payload by the same rule and
// passes the events with their payloads to fn, in order, or returns the first event's error
// (which sends the batch down the one-event path, where that event gets the usual treatment).
func HandleBatch[T proto.Message](fn func(ctx context.Context, evs []Event, payloads []T) error) BatchHandler {
	decode := decoder[T]()
	return func(ctx context.Context, evs []Event) error {
		payloads := make([]T, len(evs))
		for i, ev := range evs {
			p, err := decode(ev)
			if err != nil {
				return err
			}
			payloads[i] = p
		}
		return fn(ctx, evs, payloads)
	}
}

// decoder returns the function that decodes an event's payload into T, as Handle describes.
func decoder[T proto.Message]() func(Event) (T, error) {
	var zero T
	var fixed protoreflect.MessageType // nil when T is proto.Message: each event's declared payload
	if any(zero) != nil {
		fixed = zero.ProtoReflect().Type()
	}
	return func(ev Event) (T, error) {
		declared := Payload(ev.Type)
		if declared == nil {
			return zero, fmt.Errorf("%w: %s declares no payload", ErrUndecodable, ev.Type)
		}
		mt := fixed
		if mt == nil {
			var err error
			if mt, err = protoregistry.GlobalTypes.FindMessageByName(declared.FullName()); err != nil {
				return zero, fmt.Errorf("events: the payload %s of %s is not linked: %w", declared.FullName(), ev.Type, err)
			}
		} else if got := mt.Descriptor().FullName(); got != declared.FullName() {
			return zero, fmt.Errorf("events: a handler of %s cannot read %s, whose payload is %s", got, ev.Type, declared.FullName())
		}
		payload := mt.New().Interface()
		if err := ev.Decode(payload); err != nil {
			return zero, fmt.Errorf("%w: %w", ErrUndecodable, err)
		}
		msg, ok := payload.(T)
		if !ok { // cannot happen: mt is T's type or T is proto.Message
			return zero, errors.New("events: decoded payload is not the handler's message")
		}
		return msg, nil
	}
}
