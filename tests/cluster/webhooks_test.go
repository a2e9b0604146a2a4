package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/pkg/testkit/webhookrx"
)

// appWebhooks is the demo app's webhook endpoint for every event, registered with the write key
// before the load, and the test's receiver it points at.
type appWebhooks struct {
	rx         *webhookrx.Receiver
	registered time.Time
}

// subscribeApp registers the demo app's endpoint for every event type at a receiver of the test.
func (c *cluster) subscribeApp(t testing.TB) appWebhooks {
	t.Helper()
	rx := webhookrx.Start(t)
	registered := time.Now().UTC()
	body, _ := json.Marshal(map[string]any{"url": rx.URL + "/hooks", "events": []string{"*"}, "description": "cluster test"})
	req, err := http.NewRequest(http.MethodPost, c.lb.url()+"/v1/apps/"+c.demo.AppID+"/webhook-endpoints", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("X-API-KEY", c.demo.WriteKey)
	req.Header.Set("X-API-KEY-TYPE", "write")
	req.Header.Set("X-CLIENT-ID", c.demo.AppID)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	var created struct {
		Data struct {
			Secret string `json:"secret"`
		} `json:"data"`
	}
	if res.StatusCode != http.StatusCreated || json.Unmarshal(raw, &created) != nil || created.Data.Secret == "" {
		t.Fatalf("registering the app's webhook endpoint: %d %s", res.StatusCode, raw)
	}
	rx.Trust(created.Data.Secret)
	return appWebhooks{rx: rx, registered: registered}
}

// checkEveryEventReachedTheApp waits until every user and tenant created since the endpoint was
// registered has reached the app's receiver as a signed user.created and tenant.created, through
// the kill of an outbound replica: none is lost. Deliveries are at least once, so a webhook-id
// may arrive more than once (a kill between the receiver's answer and its record); those are
// counted and reported, and must carry the same body each time.
func (c *cluster) checkEveryEventReachedTheApp(t testing.TB, w appWebhooks) {
	t.Helper()
	start := time.Now()
	var last string
	for {
		summary, problems, err := c.compareDeliveries(w)
		if err != nil {
			t.Fatal(err)
		}
		if problems == "" {
			t.Logf("every event reached the app's receiver %s after the checks began: %s", time.Since(start).Round(100*time.Millisecond), summary)
			return
		}
		if time.Since(start) > 90*time.Second {
			t.Fatalf("events did not reach the app's receiver within 90 s:\n%s", problems)
		}
		if problems != last {
			t.Logf("waiting for deliveries: %s", strings.SplitN(problems, "\n", 2)[0])
			last = problems
		}
		time.Sleep(time.Second)
	}
}

// compareDeliveries sets the receiver's deliveries beside the users and tenants the services hold.
func (c *cluster) compareDeliveries(w appWebhooks) (summary, problems string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	users, err := column(ctx, c, "identity", `select id::text from users where app_id = $1 and created_at >= $2`, c.demo.AppID, w.registered)
	if err != nil {
		return "", "", err
	}
	tenants, err := column(ctx, c, "tenant", `select id::text from tenants where app_id = $1 and created_at >= $2`, c.demo.AppID, w.registered)
	if err != nil {
		return "", "", err
	}
	var out []string
	received := map[string]map[string]int{"user.created": {}, "tenant.created": {}}
	bodies := map[string]string{}
	attempts, duplicates := 0, 0
	for _, d := range w.rx.Deliveries() {
		attempts++
		if !d.Verified {
			out = append(out, fmt.Sprintf("delivery %s (%s) does not verify with the endpoint's secret", d.ID, d.Type))
			continue
		}
		if body, seen := bodies[d.ID]; seen {
			duplicates++
			if body != string(d.Body) {
				out = append(out, fmt.Sprintf("delivery %s arrived twice with different bodies", d.ID))
			}
			continue
		}
		bodies[d.ID] = string(d.Body)
		var data struct {
			UserID   string `json:"userId"`
			TenantID string `json:"tenantId"`
		}
		if err := json.Unmarshal(d.Data, &data); err != nil {
			out = append(out, fmt.Sprintf("delivery %s: data %s: %v", d.ID, d.Data, err))
			continue
		}
		switch d.Type {
		case "user.created":
			received[d.Type][data.UserID]++
		case "tenant.created":
			received[d.Type][data.TenantID]++
		}
	}
	out = append(out, sameOnce("users (identity vs user.created deliveries)", users, received["user.created"])...)
	out = append(out, sameOnce("tenants (tenant vs tenant.created deliveries)", tenants, received["tenant.created"])...)
	if len(users) == 0 {
		out = append(out, "no user was created during the load")
	}
	sort.Strings(out)
	summary = fmt.Sprintf("%d user.created and %d tenant.created among %d distinct deliveries; %d requests, %d of them repeats of a delivered webhook-id",
		len(received["user.created"]), len(received["tenant.created"]), len(bodies), attempts, duplicates)
	return summary, strings.Join(out, "\n"), nil
}
