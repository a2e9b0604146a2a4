package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/cmd/berth/stacktest"
	"github.com/berthhq/berth/pkg/testkit"
)

func TestAnalyticsRebuildReplaysTheStoredEvents(t *testing.T) {
	isolate(t)
	env := stacktest.Start(t, "berthctl-analytics", "http://localhost:3000/callback")
	t.Setenv("BERTH_ADMIN_TOKEN", env.AdminToken)
	var out bytes.Buffer
	if err := run([]string{"-analytics", env.Stack.Addr("analytics"), "analytics-rebuild"}, &out); err != nil {
		t.Fatal(err)
	}
	var res struct {
		Applied   float64 `json:"applied"`
		Malformed float64 `json:"malformed"`
	}
	// The seeded demo's tenants and users were published as events: a rebuild applies them.
	if err := json.Unmarshal(out.Bytes(), &res); err != nil || res.Applied == 0 || res.Malformed != 0 {
		t.Fatalf("berthctl analytics-rebuild printed %q (%v)", out.String(), err)
	}
}

func TestAuditCommandsListTheAppsLogWithItsReadKeyAndSetItsRetention(t *testing.T) {
	isolate(t)
	env := stacktest.Start(t, "berthctl-audit", "http://localhost:3000/callback")
	t.Setenv("BERTH_ADMIN_TOKEN", env.AdminToken)
	app := env.App.AppID
	cli := func(args ...string) (string, error) {
		var out bytes.Buffer
		err := run(append([]string{"-analytics", env.Stack.Addr("analytics"), "-o", "json"}, args...), &out)
		return out.String(), err
	}

	out, err := cli("audit-retention-set", "-app", app, "-days", "30")
	if err != nil || !strings.Contains(out, `"retentionDays": 30`) {
		t.Fatalf("audit-retention-set printed %q (%v)", out, err)
	}
	if out, err := cli("audit-retention", "-app", app); err != nil || !strings.Contains(out, `"retentionDays": 30`) {
		t.Fatalf("audit-retention printed %q (%v)", out, err)
	}
	if _, err := cli("audit-retention-set", "-app", app, "-days", "0"); err == nil || !strings.Contains(err.Error(), "retentionDays") {
		t.Fatalf("a retention of 0 days: %v, want it refused naming retentionDays", err)
	}

	days := []string{"-from", time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly), "-to", time.Now().UTC().AddDate(0, 0, 1).Format(time.DateOnly)}
	if _, err := cli(append([]string{"audit-log", "-app", app}, days...)...); err == nil || !strings.Contains(err.Error(), "BERTH_API_KEY") {
		t.Fatalf("audit-log without a key: %v, want BERTH_API_KEY named", err)
	}
	t.Setenv("BERTH_API_KEY", env.App.ReadKey)
	if _, err := cli(append([]string{"audit-log", "-app", app, "-actor-kind", "robot"}, days...)...); err == nil || !strings.Contains(err.Error(), "-actor-kind") {
		t.Fatalf("an unknown actor kind: %v, want -actor-kind refused", err)
	}
	// The seed created the demo's users: their creation is in the log.
	var list struct {
		Head  struct{ Kind string }
		Items []struct {
			Action string
			Actor  struct{ Kind string }
		}
	}
	testkit.Eventually(t, "the seeded users' creation is audited", func() bool {
		out, err := cli(append([]string{"audit-log", "-app", app, "-action", "identity.user.created"}, days...)...)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal([]byte(out), &list); err != nil {
			t.Fatalf("audit-log printed %q: %v", out, err)
		}
		return len(list.Items) > 0
	})
	if list.Head.Kind != "auditEntry" || list.Items[0].Action != "identity.user.created" || list.Items[0].Actor.Kind == "" {
		t.Fatalf("audit-log listed %+v", list)
	}
}
