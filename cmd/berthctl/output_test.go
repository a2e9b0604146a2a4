package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	webhookv1 "github.com/berthhq/berth/proto/webhook/v1"
)

func TestTablesAndJSONShowTheSameFieldsWithZerosAlike(t *testing.T) {
	billing := &billingv1.AppBilling{AppId: "a1", Settings: &billingv1.AppSettings{FailedPaymentsToFreeze: 3},
		Connections: []*billingv1.Connection{{Id: "c1", Provider: billingv1.Provider_PROVIDER_PSPX, HasTestSecretKey: true,
			WebhookSecrets: []*billingv1.WebhookSecret{{Id: "s1", Test: true}}}}}
	for _, c := range []struct {
		name string
		res  proto.Message
		// json are fields of the JSON form; table are lines the table has, with single spaces.
		json  map[string]any
		table []string
	}{
		{"a message with a nested one and a list", billing,
			map[string]any{"appId": "a1", "connections": []any{map[string]any{"id": "c1", "provider": "PROVIDER_PSPX", "hasTestSecretKey": true,
				"hasLiveSecretKey": false, "createdAt": "", "updatedAt": "", "appId": "",
				"webhookSecrets": []any{map[string]any{"id": "s1", "test": true, "createdAt": ""}}}},
				"settings": map[string]any{"connectionId": "", "paymentReturnUrl": "", "failedPaymentsToFreeze": 3.0,
					"oneTimePaymentValidDays": 0.0, "referralPromotionId": "", "renewalLineDescription": ""}},
			[]string{"appId a1", "settings.connectionId -", "settings.failedPaymentsToFreeze 3", "settings.oneTimePaymentValidDays 0", "connections:",
				"id appId provider hasTestSecretKey hasLiveSecretKey webhookSecrets createdAt updatedAt",
				`c1 - PROVIDER_PSPX true false [{"createdAt":"","id":"s1","test":true}] - -`}},
		{"only a list", &webhookv1.EventList{}, map[string]any{"events": []any{}}, []string{"no events"}},
		{"counts", &webhookv1.ReplayResult{Replayed: 1}, map[string]any{"replayed": 1.0, "applied": 0.0, "failed": 0.0},
			[]string{"replayed 1", "applied 0", "failed 0"}},
	} {
		var asJSON, auto, table bytes.Buffer
		if err := render(&asJSON, c.res, "json"); err != nil {
			t.Fatal(err)
		}
		if err := render(&auto, c.res, ""); err != nil || auto.String() != asJSON.String() {
			t.Errorf("%s: not on a terminal, the default is not JSON: %q %v", c.name, auto.String(), err)
		}
		var got map[string]any
		if err := json.Unmarshal(asJSON.Bytes(), &got); err != nil || !jsonEqual(got, c.json) {
			t.Errorf("%s: JSON %s, want %v (%v)", c.name, asJSON.String(), c.json, err)
		}
		if err := render(&table, c.res, "table"); err != nil {
			t.Fatal(err)
		}
		lines := map[string]bool{}
		for _, l := range strings.Split(table.String(), "\n") {
			lines[strings.Join(strings.Fields(l), " ")] = true
		}
		for _, want := range c.table {
			if !lines[want] {
				t.Errorf("%s: table lacks %q:\n%s", c.name, want, table.String())
			}
		}
	}
}

func jsonEqual(a, b map[string]any) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return bytes.Equal(x, y)
}
