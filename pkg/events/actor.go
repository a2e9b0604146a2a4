package events

import (
	"context"
	"encoding/json"
	"fmt"
)

// ActorKind says what kind of caller caused a change.
type ActorKind string

// The actor kinds. A change made inside a request is stamped with the request's caller; a change
// made without one (a consumer reacting to another event, a periodic job) is Berth's own.
const (
	ActorAPIKey        ActorKind = "api_key"        // an app's API key; ID is the key id, KeyType read or write
	ActorUser          ActorKind = "user"           // an end user with a tenant access token; ID is the user id
	ActorOperator      ActorKind = "operator"       // a project member in the console; ID is the member id
	ActorAdmin         ActorKind = "admin"          // the deployment's admin token (berthctl)
	ActorProviderEvent ActorKind = "provider_event" // a payment provider's webhook call; ID is the provider's event id
	ActorSystem        ActorKind = "system"         // Berth itself; ID names the consumer or job, when known
)

// Actor is who caused an event, stamped on the envelope where the event is appended (InsertOutbox,
// MemoryOutbox.Add) from the context of the change, so no use case has to pass it along. It holds
// ids only, never a credential: the audit log shows it to every reader of the app's log.
type Actor struct {
	Kind          ActorKind `json:"kind"`
	ID            string    `json:"id,omitempty"`
	KeyType       string    `json:"keyType,omitempty"`       // api_key only: "read" or "write"
	RequestID     string    `json:"requestId,omitempty"`     // the request id of the change (pkg/reqid)
	ClientAddress string    `json:"clientAddress,omitempty"` // the caller's address as the edge saw it
}

type actorKey struct{}

// WithActor returns ctx carrying a: the events appended with it are stamped with a. The access
// policy (pkg/authn) sets it for every admitted request, Bus.Consume for every consumed event.
func WithActor(ctx context.Context, a Actor) context.Context {
	return context.WithValue(ctx, actorKey{}, a)
}

// ActorFrom returns the actor ctx carries, if any.
func ActorFrom(ctx context.Context) (Actor, bool) {
	a, ok := ctx.Value(actorKey{}).(Actor)
	return a, ok
}

// actorOf is the actor an event appended with ctx is stamped with: the one ctx carries, or Berth
// itself when none does (a job outside any request or consumer).
func actorOf(ctx context.Context) *Actor {
	if a, ok := ActorFrom(ctx); ok {
		return &a
	}
	return &Actor{Kind: ActorSystem}
}

// stamp sets the actor of each event that has none yet. An event built with its actor already set
// (a replayed or copied envelope) keeps it.
func stamp(ctx context.Context, evs []Event) []Event {
	var actor *Actor
	for i := range evs {
		if evs[i].Actor != nil {
			continue
		}
		if actor == nil {
			actor = actorOf(ctx)
		}
		evs[i].Actor = actor
	}
	return evs
}

// consumerActor is the actor of the events a consumer's handler appends: Berth itself, named by
// the durable consumer that reacted.
func consumerActor(durable string) Actor {
	return Actor{Kind: ActorSystem, ID: durable}
}

// marshalActor is the outbox's actor column: JSON, or SQL null for an envelope without one.
func marshalActor(a *Actor) ([]byte, error) {
	if a == nil {
		return nil, nil
	}
	b, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("events: encode actor: %w", err)
	}
	return b, nil
}

// unmarshalActor reads the outbox's actor column; null (an event written before actors were
// stamped) is no actor.
func unmarshalActor(b []byte) (*Actor, error) {
	if len(b) == 0 {
		return nil, nil
	}
	var a Actor
	if err := json.Unmarshal(b, &a); err != nil {
		return nil, fmt.Errorf("events: decode actor: %w", err)
	}
	return &a, nil
}
