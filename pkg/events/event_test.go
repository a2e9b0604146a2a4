package events_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/sourcecontextpb"

	"github.com/berthhq/berth/pkg/events"
)

func TestNewAndDecodeRoundTripThePayload(t *testing.T) {
	// SourceContext stands for a payload message: a well-known type with one string field.
	payload := &sourcecontextpb.SourceContext{FileName: "u1"}
	ev, err := events.New("identity", "identity.user.updated", "app1", payload)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := uuid.Parse(ev.ID); err != nil {
		t.Fatalf("id %q is not a UUID", ev.ID)
	}
	if ev.Source != "identity" || ev.Type != "identity.user.updated" || ev.AppID != "app1" || ev.Time.IsZero() {
		t.Fatalf("envelope = %+v", ev)
	}
	var got sourcecontextpb.SourceContext
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
	ev, err := events.New("identity", "identity.user.updated", "app1", &sourcecontextpb.SourceContext{})
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestDecodeIgnoresFieldsAddedByNewerProducers(t *testing.T) {
	ev := events.Event{Type: "identity.user.updated", Data: json.RawMessage(`{"fileName":"u1","addedLater":true}`)}
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
	tests := []struct {
		name, source, typ string
		payload           proto.Message
		wantErr           string
	}{
		{"no source", "", "identity.user.updated", &sourcecontextpb.SourceContext{}, "source"},
		{"type without name", "identity", "identity", &sourcecontextpb.SourceContext{}, "<context>.<name>"},
		{"unknown context", "identity", "shipping.parcel.sent", &sourcecontextpb.SourceContext{}, "unknown context"},
		{"wildcard in type", "identity", "identity.user.*", &sourcecontextpb.SourceContext{}, "<context>.<name>"},
		{"empty token", "identity", "identity..updated", &sourcecontextpb.SourceContext{}, "<context>.<name>"},
		{"nil payload", "identity", "identity.user.updated", nil, "payload"},
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
