package main

import "testing"

func TestConstName(t *testing.T) {
	for typ, want := range map[string]string{
		"identity.user.updated":   "EventUserUpdated",
		"identity.user.signed_in": "EventUserSignedIn",
		"identity.apikey.changed": "EventAPIKeyChanged",
		"tenant.tenant.created":   "EventTenantCreated",
	} {
		if got := constName(typ); got != want {
			t.Errorf("constName(%q) = %s, want %s", typ, got, want)
		}
	}
}
