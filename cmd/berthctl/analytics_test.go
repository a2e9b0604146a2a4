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

	// Pages of one walk the two seeded users' creations: the first page's next cursor leads to the
	// second, which is the last.
	type page struct {
		Items []struct{ ID string }
		Next  string
	}
	onePage := func(extra ...string) page {
		t.Helper()
		out, err := cli(append(append([]string{"audit-log", "-app", app, "-action", "identity.user.created", "-limit", "1"}, days...), extra...)...)
		var p page
		if err != nil || json.Unmarshal([]byte(out), &p) != nil {
			t.Fatalf("audit-log %v printed %q: %v", extra, out, err)
		}
		return p
	}
	first := onePage()
	if len(first.Items) != 1 || first.Next == "" {
		t.Fatalf("the first page of one = %+v, want one entry and a next cursor", first)
	}
	second := onePage("-before", first.Next)
	if len(second.Items) != 1 || second.Items[0].ID == first.Items[0].ID || second.Next != "" {
		t.Fatalf("the page after %+v = %+v, want the other creation and no cursor", first, second)
	}
	if _, err := cli(append([]string{"audit-log", "-app", app, "-limit", "1001"}, days...)...); err == nil || !strings.Contains(err.Error(), "-limit") {
		t.Fatalf("a limit of 1001: %v, want -limit refused", err)
	}
}
