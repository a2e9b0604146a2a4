package contract

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/berthhq/berth/cmd/berth/stacktest"
	"github.com/berthhq/berth/pkg/testkit"
)

// webhookEndpointFields are the fields of a webhookEndpoint as reads answer it, with their JSON
// types; the create and rotate answers add the secret (createdEndpointFields).
var webhookEndpointFields = map[string]string{
	"kind": str, "id": str, "url": str, "events": "array", "description": str, "disabled": boo,
	"createdAt": str, "updatedAt": str,
}

var createdEndpointFields = func() map[string]string {
	m := map[string]string{"secret": str}
	for k, v := range webhookEndpointFields {
		m[k] = v
	}
	return m
}()

func TestWebhookEndpointRoutes(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			t.Run("only the app's write key manages its endpoints", e.webhookPrincipals)
			t.Run("a route-18 change reaches a registered endpoint signed with its secret", e.webhookDelivery)
		})
	}
}

func (e *env) webhookPrincipals(t *testing.T) {
	e.t = t
	base := "/v1/apps/" + e.demo.AppID + "/webhook-endpoints"
	body := `{"url":"https://example.com/hooks","events":["user.updated"],"description":"prod"}`
	e.do("POST", base, e.read(), body).fails(t, 403)
	e.do("POST", base, nil, body).fails(t, 401)
	tk := e.newUser(t, "hooks-"+stacktest.RandomHex(4)+"@example.com")
	e.do("POST", base, bearer(tk.access), body).fails(t, 401) // an end user's token manages no endpoints
	e.do("GET", base, bearer(tk.access), "").fails(t, 401)
	e.do("POST", "/v1/apps/"+e.other.AppID+"/webhook-endpoints", e.write(), body).fails(t, 400) // another app's path
	e.do("POST", "/v1/apps/not-a-uuid/webhook-endpoints", e.write(), body).fails(t, 400)
	e.do("POST", base, e.write(), `{"url":"ftp://example.com","events":["*"]}`).fails(t, 400)
	e.do("POST", base, e.write(), `{"url":"https://example.com","events":["user.exploded"]}`).fails(t, 400)
	e.do("POST", base, e.write(), `{"url":"https://example.com","events":[]}`).fails(t, 400)

	created := e.do("POST", base, e.write(), body).ok(t, 201).(map[string]any)
	assertShape(t, "webhookEndpoint", created, createdEndpointFields)
	if created["kind"] != "webhookEndpoint" || !strings.HasPrefix(created["secret"].(string), "whsec_") || created["disabled"] != false {
		t.Fatalf("created = %v", created)
	}
	one := base + "/" + created["id"].(string)
	got := e.do("GET", one, e.write(), "").ok(t, 200).(map[string]any)
	assertShape(t, "webhookEndpoint", got, webhookEndpointFields) // no secret field at all
	if got["url"] != "https://example.com/hooks" {
		t.Fatalf("read = %v", got)
	}
	e.do("GET", one, e.read(), "").fails(t, 403)
	e.do("GET", "/v1/apps/"+e.other.AppID+"/webhook-endpoints/"+created["id"].(string), creds(e.other.WriteKey, "write", e.other.AppID), "").fails(t, 400)
	list := e.do("GET", base, e.write(), "").ok(t, 200).(map[string]any)
	if list["kind"] != "webhookEndpoint" || list["itemsLength"] != float64(1) {
		t.Fatalf("list = %v", list)
	}
	updated := e.do("PUT", one, e.write(), `{"disabled":true,"events":["*"]}`).ok(t, 200).(map[string]any)
	if updated["disabled"] != true || updated["events"].([]any)[0] != "*" || updated["url"] != "https://example.com/hooks" {
		t.Fatalf("updated = %v", updated)
	}
	rotated := e.do("POST", one+"/secret-rotations", e.write(), "").ok(t, 201).(map[string]any)
	if s := rotated["secret"].(string); !strings.HasPrefix(s, "whsec_") || s == created["secret"] {
		t.Fatalf("rotated secret %q", s)
	}
	e.do("GET", one+"/deliveries", e.write(), "").ok(t, 200)
	e.do("POST", one+"/deliveries/00000000-0000-4000-8000-000000000000/retries", e.write(), "").fails(t, 400)
	recovered := e.do("POST", one+"/recoveries", e.write(), `{"since":"2026-01-01T00:00:00Z"}`).ok(t, 201).(map[string]any)
	if recovered["kind"] != "webhookRecovery" || recovered["deliveries"] != float64(0) {
		t.Fatalf("recovered = %v", recovered)
	}
	e.do("POST", one+"/recoveries", e.write(), `{"since":"yesterday"}`).fails(t, 400)
	e.do("POST", one+"/recoveries", e.read(), `{"since":"2026-01-01T00:00:00Z"}`).fails(t, 403)
	if data := e.do("DELETE", one, e.write(), "").ok(t, 200); data != nil {
		t.Fatalf("delete data = %v, want null", data)
	}
	e.do("GET", one, e.write(), "").fails(t, 400)
}

func (e *env) webhookDelivery(t *testing.T) {
	e.t = t
	var (
		mu   sync.Mutex
		reqs []*http.Request
		body [][]byte
	)
	receiver := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		reqs, body = append(reqs, r), append(body, b)
		mu.Unlock()
	}))
	t.Cleanup(receiver.Close)
	base := "/v1/apps/" + e.demo.AppID + "/webhook-endpoints"
	created := e.do("POST", base, e.write(), `{"url":"`+receiver.URL+`/hooks","events":["user.updated"]}`).ok(t, 201).(map[string]any)
	secret := created["secret"].(string)

	e.do("PUT", "/v1/users/"+e.demo.UserIDs[0], e.write(), `{"user":{"nickname":"hooked"}}`).ok(t, 200)
	testkit.Eventually(t, "the receiver gets user.updated", func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, b := range body {
			if strings.Contains(string(b), `"hooked"`) {
				return true
			}
		}
		return false
	})
	mu.Lock()
	var r *http.Request
	var b []byte
	for i := range body {
		if strings.Contains(string(body[i]), `"hooked"`) {
			r, b = reqs[i], body[i]
		}
	}
	mu.Unlock()
	if !strings.HasPrefix(string(b), `{"type":"user.updated",`) {
		t.Fatalf("body %s", b)
	}
	if !testkit.VerifyStandardWebhook(secret, r.Header.Get("webhook-id"), r.Header.Get("webhook-timestamp"), b, r.Header.Get("webhook-signature")) {
		t.Fatalf("the signature %q does not verify with the endpoint's secret", r.Header.Get("webhook-signature"))
	}
	deliveries := e.do("GET", base+"/"+created["id"].(string)+"/deliveries", e.write(), "").ok(t, 200).(map[string]any)
	items := deliveries["items"].([]any)
	if len(items) == 0 {
		t.Fatal("no delivery listed")
	}
	d := items[0].(map[string]any)
	testkit.Eventually(t, "the delivery is recorded as succeeded", func() bool {
		items := e.do("GET", base+"/"+created["id"].(string)+"/deliveries", e.write(), "").ok(t, 200).(map[string]any)["items"].([]any)
		d = items[0].(map[string]any)
		return d["status"] == "succeeded"
	})
	if d["kind"] != "webhookDelivery" || len(d["attempts"].([]any)) != 1 {
		t.Fatalf("delivery = %v", d)
	}
	retried := e.do("POST", base+"/"+created["id"].(string)+"/deliveries/"+d["id"].(string)+"/retries", e.write(), "").ok(t, 201).(map[string]any)
	if retried["status"] != "pending" {
		t.Fatalf("retried = %v", retried)
	}
}
