package events_test

import (
	"encoding/json"
	"strings"
	"testing"

	eventsv1 "github.com/berthhq/berth/proto/events/v1"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/sourcecontextpb"

	"github.com/berthhq/berth/pkg/events"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

func TestNewAndDecodeRoundTripThePayload(t *testing.T) {
	payload := &identityv1.UserChanged{AppId: "app1", UserId: "u1"}
	ev, err := events.New("identity", identityv1.EventUserUpdated, "app1", payload)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := uuid.Parse(ev.ID); err != nil {
		t.Fatalf("id %q is not a UUID", ev.ID)
	}
	if ev.Source != "identity" || ev.Type != identityv1.EventUserUpdated || ev.AppID != "app1" || ev.Time.IsZero() {
		t.Fatalf("envelope = %+v", ev)
	}
	var got identityv1.UserChanged
	if err := ev.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if !proto.Equal(&got, payload) {
		t.Fatalf("decoded %v, want %v", &got, payload)
	}
	if other := mustNew(t); other.ID == ev.ID {
		t.Fatal("two events share an id")
	}
}

func mustNew(t *testing.T) events.Event {
	ev, err := events.New("identity", identityv1.EventUserUpdated, "app1", &identityv1.UserChanged{})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestDecodeIgnoresFieldsAddedByNewerProducers(t *testing.T) {
	ev := events.Event{Type: identityv1.EventUserUpdated, Data: json.RawMessage(`{"fileName":"u1","addedLater":true}`)}
	var got sourcecontextpb.SourceContext
	if err := ev.Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got.FileName != "u1" {
		t.Fatalf("fileName = %q", got.FileName)
	}
	ev.Data = json.RawMessage(`{"fileName":`)
	if err := ev.Decode(&got); err == nil {
		t.Fatal("truncated payload decoded without error")
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	// Each bad type differs from a declared one in one respect.
	const valid = identityv1.EventUserUpdated
	payload := &identityv1.UserChanged{}
	tests := []struct {
		name, source string
		typ          eventsv1.Type
		payload      proto.Message
		wantErr      string
	}{
		{"no source", "", valid, payload, "source"},
		{"type without name", "identity", "identity", payload, "<context>.<name>"},
		{"unknown context", "identity", "shipping.parcel.sent", payload, "unknown context"},
		{"wildcard in type", "identity", eventsv1.Type(strings.TrimSuffix(string(valid), "updated") + "*"), payload, "<context>.<name>"},
		{"empty token", "identity", eventsv1.Type(strings.Replace(string(valid), ".user.", "..", 1)), payload, "<context>.<name>"},
		{"undeclared type", "identity", valid + "_twice", payload, "no payload message declares"},
		{"nil payload", "identity", valid, nil, "payload"},
		{"payload of another type", "identity", identityv1.EventUserDeleted, payload, "carry berth.identity.v1.UserDeleted, not berth.identity.v1.UserChanged"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := events.New(tt.source, tt.typ, "app1", tt.payload)
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("err = %v, want it to mention %q", err, tt.wantErr)
			}
		})
	}
}
