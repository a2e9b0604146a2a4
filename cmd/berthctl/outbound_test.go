package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/berthhq/berth/cmd/berth/stacktest"
)

func TestWebhookEndpointCommandsManageTheAppsEndpointsWithItsWriteKey(t *testing.T) {
	isolate(t)
	env := stacktest.Start(t, "berthctl-outbound", "http://localhost:3000/callback")
	t.Setenv("BERTH_ADMIN_TOKEN", env.AdminToken)
	addr := env.Stack.Addr("outbound")
	cli := func(args ...string) (map[string]any, error) {
		t.Helper()
		var out bytes.Buffer
		if err := run(append([]string{"-o", "json", "-outbound", addr}, args...), &out); err != nil {
			return nil, err
		}
		var res map[string]any
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatalf("berthctl %s printed %q", strings.Join(args, " "), out.String())
		}
		return res, nil
	}
	app := env.App.AppID

	if _, err := cli("webhook-endpoints", "-app", app); err == nil || !strings.Contains(err.Error(), "BERTH_API_KEY") {
		t.Fatalf("without a key: %v", err)
	}
	t.Setenv("BERTH_API_KEY", env.App.ReadKey)
	if _, err := cli("webhook-endpoints", "-app", app); err == nil || !strings.Contains(err.Error(), "permission denied") {
		t.Fatalf("with the read key: %v", err)
	}
	t.Setenv("BERTH_API_KEY", env.App.WriteKey)
	created, err := cli("webhook-endpoint-create", "-app", app, "-url", "https://example.com/hooks", "-event", "user.updated", "-event", "payment.failed")
	if err != nil {
		t.Fatal(err)
	}
	id, _ := created["id"].(string)
	if !strings.HasPrefix(created["secret"].(string), "whsec_") || len(created["events"].([]any)) != 2 {
		t.Fatalf("created %v", created)
	}
	if _, err := cli("webhook-endpoint-create", "-app", app, "-url", "https://example.com", "-event", "user.exploded"); err == nil {
		t.Fatal("an unknown event type was accepted")
	}
	updated, err := cli("webhook-endpoint-update", "-app", app, "-endpoint", id, "-disabled", "true")
	if err != nil || updated["disabled"] != true || updated["url"] != "https://example.com/hooks" {
		t.Fatalf("updated %v, %v", updated, err)
	}
	rotated, err := cli("webhook-endpoint-rotate", "-app", app, "-endpoint", id)
	if err != nil || rotated["secret"] == created["secret"] {
		t.Fatalf("rotated %v, %v", rotated, err)
	}
	list, err := cli("webhook-endpoints", "-app", app)
	if err != nil || list["itemsLength"] != float64(1) {
		t.Fatalf("list %v, %v", list, err)
	}
	if _, err := cli("webhook-deliveries", "-app", app, "-endpoint", id); err != nil {
		t.Fatal(err)
	}
	if r, err := cli("webhook-recover", "-app", app, "-endpoint", id, "-since", "2026-01-01T00:00:00Z"); err != nil || r["deliveries"] != float64(0) {
		t.Fatalf("recover %v, %v", r, err)
	}
	if _, err := cli("webhook-endpoint-delete", "-app", app, "-endpoint", id); err != nil {
		t.Fatal(err)
	}
	if _, err := cli("webhook-endpoint-delete", "-app", app, "-endpoint", id); err == nil {
		t.Fatal("a deleted endpoint was deleted again")
	}
}
