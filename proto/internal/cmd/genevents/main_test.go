package main

import (
	"testing"

	eventsv1 "github.com/berthhq/berth/proto/events/v1"
)

func TestConstName(t *testing.T) {
	for typ, want := range map[string]string{
		"identity.user.updated":   "EventUserUpdated",
		"identity.user.signed_in": "EventUserSignedIn",
		"identity.apikey.changed": "EventAPIKeyChanged",
		"tenant.tenant.created":   "EventTenantCreated",
	} {
		if got := constName(eventsv1.Type(typ)); got != want {
			t.Errorf("constName(%q) = %s, want %s", typ, got, want)
		}
	}
}
