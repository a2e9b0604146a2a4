package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/berthhq/berth/cmd/berth/stacktest"
)

func TestPromotionAndTenantBillingCommandsShowARedemptionAndEditLimits(t *testing.T) {
	isolate(t)
	env := stacktest.Start(t, "berthctl-billing", "http://localhost:3000/callback")
	t.Setenv("BERTH_ADMIN_TOKEN", env.AdminToken)
	cli := func(args ...string) (map[string]any, error) {
		t.Helper()
		var out bytes.Buffer
		if err := run(append([]string{"-o", "json", "-billing", env.Stack.Addr("billing")}, args...), &out); err != nil {
			return nil, err
		}
		var res map[string]any
		if err := json.Unmarshal(out.Bytes(), &res); err != nil {
			t.Fatalf("berthctl %s printed %q", strings.Join(args, " "), out.String())
		}
		return res, nil
	}
	app, tenant, user := env.App.AppID, env.App.TenantID, env.App.UserIDs[0]
	created, err := cli("promotion-create", "-app", app, "-code", "CLI-GIFT", "-name", "Gift", "-free-units", "3", "-max-redemptions", "5")
	if err != nil {
		t.Fatal(err)
	}
	id := created["id"].(string)

	req, _ := http.NewRequest(http.MethodPut, env.Stack.BaseURL+"/v1/users/"+user+"/promotion-codes/cli-gift", nil)
	req.Header.Set("X-API-KEY", env.App.WriteKey)
	req.Header.Set("X-API-KEY-TYPE", "write")
	req.Header.Set("X-CLIENT-ID", app)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("route 24 answered %d", resp.StatusCode)
	}

	page, err := cli("promotion-redemptions", "-app", app, "-promotion", id, "-limit", "1")
	if err != nil {
		t.Fatal(err)
	}
	items := page["items"].([]any)
	if len(items) != 1 || page["nextCursor"] != "" {
		t.Fatalf("redemptions %v", page)
	}
	if r := items[0].(map[string]any); r["kind"] != "redemption" || r["tenantId"] != tenant || r["userId"] != user || r["freeUnits"] != float64(3) {
		t.Fatalf("redemption %v", r)
	}
	if _, err := cli("promotion-redemptions", "-app", app, "-promotion", id, "-cursor", "nonsense"); err == nil || !strings.Contains(err.Error(), "cursor") {
		t.Fatalf("a made-up cursor: %v", err)
	}

	limited, err := cli("promotion-limits", "-app", app, "-promotion", id, "-max-redemptions", "1", "-valid-until", "2030-01-01")
	if err != nil || limited["maxRedemptions"] != float64(1) || limited["validUntil"] != "2030-01-01T00:00:00Z" || limited["freeUnits"] != float64(3) {
		t.Fatalf("limits %v, %v", limited, err)
	}
	if _, err := cli("promotion-limits", "-app", app, "-promotion", id, "-valid-from", "2031-01-01"); err == nil || !strings.Contains(err.Error(), "validUntil") {
		t.Fatalf("a start after the end: %v", err)
	}
	if _, err := cli("promotion-limits", "-app", app, "-promotion", id); err == nil || !strings.Contains(err.Error(), "-max-redemptions") {
		t.Fatalf("no limit named: %v", err)
	}
	list, err := cli("promotions", "-app", app)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, it := range list["items"].([]any) {
		p := it.(map[string]any)
		found = found || (p["id"] == id && p["redemptions"] == float64(1) && p["maxRedemptions"] == float64(1))
	}
	if !found {
		t.Fatalf("promotions %v", list)
	}

	billing, err := cli("tenant-billing", "-app", app, "-tenant", tenant, "-test")
	if err != nil {
		t.Fatal(err)
	}
	state := billing["state"].(map[string]any)
	grants := billing["redemptions"].([]any)
	if state["freeUnits"] != "3" || billing["frozenReason"] != "" || len(grants) != 1 || grants[0].(map[string]any)["code"] != "CLI-GIFT" {
		t.Fatalf("tenant billing %v", billing)
	}
}
