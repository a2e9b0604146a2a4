package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/berthhq/berth/cmd/berth/stacktest"
)

func TestWebhookEventsListsStoredCallsAndReplayChangesNothingApplied(t *testing.T) {
	isolate(t)
	env := stacktest.Start(t, "berthctl-test", "http://localhost:3000/callback")
	t.Setenv("BERTH_ADMIN_TOKEN", env.AdminToken)
	// A route 4 call naming the pspy app's connection and a payment its provider does not know:
	// stored, then ignored.
	res, err := http.Post(env.Stack.BaseURL+"/api/v1/webhooks/pspy?paymentProviderUuid="+env.App.PspyApp.ProviderUUID,
		"application/x-www-form-urlencoded", strings.NewReader("id=tr_unknown1"))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("route 4: %d", res.StatusCode)
	}
	cli := func(args ...string) map[string]any {
		t.Helper()
		var out bytes.Buffer
		if err := run(append([]string{"-webhook", env.Stack.Addr("webhook")}, args...), &out); err != nil {
			t.Fatalf("berthctl %v: %v", args, err)
		}
		var v map[string]any
		if err := json.Unmarshal(out.Bytes(), &v); err != nil {
			t.Fatalf("berthctl %v printed %q", args, out.String())
		}
		return v
	}
	list := cli("webhook-events", "-provider", "pspy", "-connection", env.App.PspyApp.ProviderUUID)
	events, _ := list["events"].([]any)
	if len(events) != 1 {
		t.Fatalf("listed %v", list)
	}
	ev := events[0].(map[string]any)
	if ev["providerEventId"] != "tr_unknown1" || ev["outcome"] != "ignored" || ev["provider"] != "pspy" {
		t.Fatalf("stored call %v", ev)
	}
	if none, ok := cli("webhook-events", "-outcome", "failed")["events"].([]any); !ok || len(none) != 0 {
		t.Fatalf("failed calls %v", none)
	}
	replay := cli("webhook-replay", "-id", ev["id"].(string))
	if replay["replayed"] != 1.0 || replay["failed"] != 0.0 {
		t.Fatalf("replay %v", replay)
	}
	again := cli("webhook-events", "-provider", "pspy")["events"].([]any)[0].(map[string]any)
	if again["outcome"] != "ignored" || again["attempts"] != 2.0 {
		t.Fatalf("after the replay %v", again)
	}
}
