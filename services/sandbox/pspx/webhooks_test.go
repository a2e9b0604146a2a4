package pspx_test

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/berthhq/berth/services/sandbox/delivery"
	"github.com/berthhq/berth/services/sandbox/pspx"
)

// fast makes a provider minute last 2 ms of real time.
const fast = 2.0 / 60_000

// hookEnv is a sandbox that delivers its events through a queue of its own.
func hookEnv(t *testing.T, scale float64, draftWait time.Duration) (*env, *delivery.Queue) {
	t.Helper()
	q := delivery.New(delivery.Config{TimeScale: scale})
	e := newEnvWith(t, pspx.Config{Deliveries: q, DraftWait: draftWait})
	t.Cleanup(q.Close) // before the sandbox's server closes: cleanups run last first
	return e, q
}

func idle(t *testing.T, q *delivery.Queue) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if err := q.WaitIdle(ctx); err != nil {
		t.Fatalf("deliveries not done: %v\n%+v", err, q.Deliveries())
	}
}

// hook is one delivery a receiver got.
type hook struct {
	id, typ string
	object  obj // data.object
	raw     []byte
	header  http.Header
	t       int64    // the signature's time
	v1      []string // the signature's v1 values, in order
	valid   []bool   // per v1: whether it verified with one of the receiver's secrets
}

// receiver is a webhook endpoint that checks pspx signatures the way Berth does.
type receiver struct {
	t       *testing.T
	url     string
	mu      sync.Mutex
	secrets []string
	got     []hook
	answer  func(h hook) int // nil: 200
}

func newReceiver(t *testing.T, answer func(h hook) int) *receiver {
	t.Helper()
	rc := &receiver{t: t, answer: answer}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, err := io.ReadAll(r.Body)
		if err != nil {
			// The sender gave up mid-body (its queue closing, or the test server shutting down
			// under it): nothing arrived, so there is nothing to record or judge.
			t.Logf("a delivery broke off: %v", err)
			w.WriteHeader(http.StatusBadRequest)
			return
		}
		var ev struct {
			ID   string `json:"id"`
			Type string `json:"type"`
			Data struct {
				Object map[string]any `json:"object"`
			} `json:"data"`
		}
		if err := json.Unmarshal(raw, &ev); err != nil {
			t.Errorf("delivery is not an event: %v", err)
		}
		h := hook{id: ev.ID, typ: ev.Type, object: ev.Data.Object, raw: raw, header: r.Header.Clone()}
		rc.mu.Lock()
		h.t, h.v1, h.valid = verify(r.Header.Get("pspx-signature"), raw, rc.secrets)
		rc.got = append(rc.got, h)
		rc.mu.Unlock()
		code := http.StatusOK
		if rc.answer != nil {
			code = rc.answer(h)
		}
		w.WriteHeader(code)
	}))
	t.Cleanup(srv.Close)
	rc.url = srv.URL
	return rc
}

// verify reads t=…,v1=…[,v1=…] and checks each v1 against every secret.
func verify(header string, body []byte, secrets []string) (t int64, v1 []string, valid []bool) {
	for part := range strings.SplitSeq(header, ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "t":
			t, _ = strconv.ParseInt(v, 10, 64)
		case "v1":
			v1 = append(v1, v)
		}
	}
	for _, sig := range v1 {
		ok := false
		for _, s := range secrets {
			mac := hmac.New(sha256.New, []byte(s))
			mac.Write([]byte(strconv.FormatInt(t, 10) + "."))
			mac.Write(body)
			ok = ok || hmac.Equal([]byte(hex.EncodeToString(mac.Sum(nil))), []byte(sig))
		}
		valid = append(valid, ok)
	}
	return t, v1, valid
}

func (rc *receiver) trust(secrets ...string) {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	rc.secrets = secrets
}

func (rc *receiver) hooks() []hook {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return slices.Clone(rc.got)
}

func (rc *receiver) types() []string {
	var out []string
	for _, h := range rc.hooks() {
		out = append(out, h.typ)
	}
	return out
}

// endpoint registers rc for the events and answers the endpoint's id; rc trusts its secret.
func (e *env) endpoint(rc *receiver, events ...string) string {
	e.t.Helper()
	kv := []string{"url", rc.url}
	for _, ev := range events {
		kv = append(kv, "enabled_events[]", ev)
	}
	ep := e.ok("POST", "/v1/webhook_endpoints", kv...)
	rc.trust(ep.str(e.t, "secret"))
	return ep.str(e.t, "id")
}

func TestWebhookEndpointsAreCreatedReadListedUpdatedAndDeleted(t *testing.T) {
	e, _ := hookEnv(t, fast, 0)
	idem := http.Header{"Idempotency-Key": {"we-1"}}
	created := e.call("POST", "/v1/webhook_endpoints", idem, "url", "https://berth.example/api/v1/webhooks/pspx",
		"enabled_events[]", "invoice.created", "enabled_events[]", "invoice.paid", "description", "Berth", "metadata[env]", "demo")
	if created.status != 200 {
		t.Fatalf("create: %d %s", created.status, created.raw)
	}
	ep := created.body
	id := ep.str(t, "id")
	if !strings.HasPrefix(id, "we_") || ep.str(t, "object") != "webhook_endpoint" || ep.str(t, "url") != "https://berth.example/api/v1/webhooks/pspx" ||
		ep.str(t, "status") != "enabled" || ep.get(t, "livemode") != false || ep.get(t, "api_version") != nil || ep.num(t, "created") == 0 ||
		ep.str(t, "description") != "Berth" || ep.str(t, "metadata", "env") != "demo" || !strings.HasPrefix(ep.str(t, "secret"), "whsec_") ||
		len(ep.get(t, "enabled_events").([]any)) != 2 {
		t.Fatalf("created %v", ep)
	}
	if again := e.call("POST", "/v1/webhook_endpoints", idem, "url", "https://berth.example/api/v1/webhooks/pspx",
		"enabled_events[]", "invoice.created", "enabled_events[]", "invoice.paid", "description", "Berth", "metadata[env]", "demo"); again.raw != created.raw {
		t.Fatalf("not replayed: %s", again.raw)
	}
	got := e.ok("GET", "/v1/webhook_endpoints/"+id)
	if _, has := got["secret"]; has || got.str(t, "id") != id {
		t.Fatalf("read %v", got)
	}
	second := e.ok("POST", "/v1/webhook_endpoints", "url", "http://localhost:9/hook", "enabled_events[]", "*").str(t, "id")
	list := e.ok("GET", "/v1/webhook_endpoints", "limit", "1")
	if data := list.objs(t, "data"); len(data) != 1 || data[0].str(t, "id") != second || list.get(t, "has_more") != true || list.str(t, "url") != "/v1/webhook_endpoints" {
		t.Fatalf("first page %v", list)
	}
	if data := e.ok("GET", "/v1/webhook_endpoints", "starting_after", second).objs(t, "data"); len(data) != 1 || data[0].str(t, "id") != id {
		t.Fatalf("second page %v", data)
	}
	upd := e.ok("POST", "/v1/webhook_endpoints/"+id, "url", "https://berth.example/other", "enabled_events[]", "*", "disabled", "true")
	if upd.str(t, "url") != "https://berth.example/other" || upd.str(t, "status") != "disabled" || upd.get(t, "enabled_events").([]any)[0] != "*" || upd.str(t, "metadata", "env") != "demo" {
		t.Fatalf("updated %v", upd)
	}
	if upd := e.ok("POST", "/v1/webhook_endpoints/"+id, "disabled", "false"); upd.str(t, "status") != "enabled" {
		t.Fatalf("enabled again %v", upd)
	}
	del := e.ok("DELETE", "/v1/webhook_endpoints/"+id)
	if del.str(t, "id") != id || del.str(t, "object") != "webhook_endpoint" || del.get(t, "deleted") != true {
		t.Fatalf("deleted %v", del)
	}
	if err := e.fails(404, "GET", "/v1/webhook_endpoints/"+id); err.str(t, "code") != "resource_missing" {
		t.Fatalf("read after delete %v", err)
	}
	other := *e
	other.key = "sk_test_otheraccount1"
	if data := other.ok("GET", "/v1/webhook_endpoints").objs(t, "data"); len(data) != 0 {
		t.Fatalf("another account sees %v", data)
	}
}

func TestBadWebhookEndpointRequestsGetTheProvidersErrorObject(t *testing.T) {
	e, _ := hookEnv(t, fast, 0)
	id := e.ok("POST", "/v1/webhook_endpoints", "url", "https://b.example/h", "enabled_events[]", "*").str(t, "id")
	cases := []struct {
		name, method, path string
		kv                 []string
		status             int
		param              string
	}{
		{"no url", "POST", "/v1/webhook_endpoints", []string{"enabled_events[]", "*"}, 400, "url"},
		{"relative url", "POST", "/v1/webhook_endpoints", []string{"url", "/hook", "enabled_events[]", "*"}, 400, "url"},
		{"ftp url", "POST", "/v1/webhook_endpoints", []string{"url", "ftp://b.example/h", "enabled_events[]", "*"}, 400, "url"},
		{"no events", "POST", "/v1/webhook_endpoints", []string{"url", "https://b.example/h"}, 400, "enabled_events"},
		{"empty events", "POST", "/v1/webhook_endpoints", []string{"url", "https://b.example/h", "enabled_events", ""}, 400, "enabled_events"},
		{"malformed event type", "POST", "/v1/webhook_endpoints", []string{"url", "https://b.example/h", "enabled_events[]", "*", "enabled_events[]", "Invoice Paid"}, 400, "enabled_events[1]"},
		{"unknown parameter", "POST", "/v1/webhook_endpoints", []string{"url", "https://b.example/h", "enabled_events[]", "*", "secret", "x"}, 400, "secret"},
		{"update: not a boolean", "POST", "/v1/webhook_endpoints/" + id, []string{"disabled", "maybe"}, 400, "disabled"},
		{"update: bad url", "POST", "/v1/webhook_endpoints/" + id, []string{"url", "nope"}, 400, "url"},
		{"update: unknown endpoint", "POST", "/v1/webhook_endpoints/we_missing", []string{"disabled", "true"}, 404, "id"},
		{"read: unknown endpoint", "GET", "/v1/webhook_endpoints/we_missing", nil, 404, "id"},
		{"delete: unknown endpoint", "DELETE", "/v1/webhook_endpoints/we_missing", nil, 404, "id"},
		{"list: bad limit", "GET", "/v1/webhook_endpoints", []string{"limit", "0"}, 400, "limit"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := e.fails(tc.status, tc.method, tc.path, tc.kv...)
			if err.str(t, "type") != "invalid_request_error" || err.str(t, "param") != tc.param || err.str(t, "message") == "" {
				t.Fatalf("error %v, want param %q", err, tc.param)
			}
		})
	}
	for range 15 {
		e.ok("POST", "/v1/webhook_endpoints", "url", "https://b.example/h", "enabled_events[]", "*")
	}
	e.fails(400, "POST", "/v1/webhook_endpoints", "url", "https://b.example/h", "enabled_events[]", "*")
}

func TestRollingASecretIsRefusedForBadInput(t *testing.T) {
	e, _ := hookEnv(t, fast, 0)
	id := e.ok("POST", "/v1/webhook_endpoints", "url", "https://b.example/h", "enabled_events[]", "*").str(t, "id")
	cases := []struct {
		name, key, id, body string
		status              int
		param               string
	}{
		{"no key", "", id, `{"expiresInSeconds": 0}`, 401, ""},
		{"another account's endpoint", "sk_test_otheraccount1", id, `{"expiresInSeconds": 0}`, 404, "id"},
		{"unknown endpoint", e.key, "we_missing", `{"expiresInSeconds": 0}`, 404, "id"},
		{"not JSON", e.key, id, `expiresInSeconds=5`, 400, ""},
		{"no expiry", e.key, id, `{}`, 400, "expiresInSeconds"},
		{"negative", e.key, id, `{"expiresInSeconds": -1}`, 400, "expiresInSeconds"},
		{"beyond a day", e.key, id, `{"expiresInSeconds": 86401}`, 400, "expiresInSeconds"},
		{"fraction", e.key, id, `{"expiresInSeconds": 1.5}`, 400, "expiresInSeconds"},
		{"unknown field", e.key, id, `{"expiresInSeconds": 1, "secret": "x"}`, 400, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			req, _ := http.NewRequest("POST", e.url+"/webhook_endpoints/"+tc.id+"/roll", strings.NewReader(tc.body))
			if tc.key != "" {
				req.Header.Set("Authorization", "Bearer "+tc.key)
			}
			a := e.send(req)
			errObj, ok := a.body["error"].(map[string]any)
			if a.status != tc.status || !ok || obj(errObj).str(t, "param") != tc.param || obj(errObj).str(t, "message") == "" {
				t.Fatalf("%d %s, want %d naming %q", a.status, a.raw, tc.status, tc.param)
			}
		})
	}
}

func TestEventsAreSignedWithRealTimeAndDeliveredToTheEndpointsThatWantThem(t *testing.T) {
	e, q := hookEnv(t, fast, 0)
	all, some, off, elsewhere := newReceiver(t, nil), newReceiver(t, nil), newReceiver(t, nil), newReceiver(t, nil)
	allID := e.endpoint(all, "*")
	e.endpoint(some, "customer.updated")
	offID := e.endpoint(off, "*")
	e.ok("POST", "/v1/webhook_endpoints/"+offID, "disabled", "true")
	other := *e
	other.key = "sk_test_otheraccount1"
	other.endpoint(elsewhere, "*")

	e.advance(10 * 24 * time.Hour) // signatures use real time, whatever the sandbox clock says
	cus := e.customer()
	e.ok("POST", "/v1/customers/"+cus, "name", "Ada L.")
	idle(t, q)

	if got := all.types(); !slices.Equal(got, []string{"customer.created", "customer.updated"}) {
		t.Fatalf("the '*' endpoint got %v", got)
	}
	if got := some.types(); !slices.Equal(got, []string{"customer.updated"}) {
		t.Fatalf("the customer.updated endpoint got %v", got)
	}
	if len(off.hooks()) != 0 || len(elsewhere.hooks()) != 0 {
		t.Fatalf("a disabled endpoint got %v, another account's %v", off.types(), elsewhere.types())
	}
	for _, h := range all.hooks() {
		served := e.call("GET", "/v1/events/"+h.id, nil)
		if served.raw != string(h.raw) {
			t.Fatalf("delivered body differs from GET /v1/events/%s:\n%s\n%s", h.id, h.raw, served.raw)
		}
		if len(h.v1) != 1 || !h.valid[0] || time.Since(time.Unix(h.t, 0)).Abs() > time.Minute {
			t.Fatalf("signature %q (t %d, valid %v)", h.header.Get("pspx-signature"), h.t, h.valid)
		}
		if served.body.num(t, "created") < time.Now().Add(9*24*time.Hour).Unix() {
			t.Fatalf("event created %d is not sandbox time", served.body.num(t, "created"))
		}
		if h.header.Get("Content-Type") != "application/json; charset=utf-8" || !strings.HasPrefix(h.header.Get("User-Agent"), "Pspx/") {
			t.Fatalf("headers %v", h.header)
		}
	}
	var ds []delivery.Delivery
	for _, d := range q.Deliveries() {
		if d.URL == all.url {
			ds = append(ds, d)
		}
	}
	if len(ds) != 2 || ds[0].Provider != delivery.Pspx || ds[0].Mode != "test" || ds[0].Type != "customer.updated" || ds[0].EventID != all.hooks()[1].id ||
		ds[0].Status != delivery.Delivered || len(ds[0].Attempts) != 1 || ds[0].Attempts[0].Status != 200 {
		t.Fatalf("deliveries log %+v (endpoint %s)", ds, allID)
	}
	log := httptest.NewRecorder()
	q.DeliveriesHandler().ServeHTTP(log, httptest.NewRequest("GET", "/_sandbox/deliveries", nil))
	if strings.Contains(log.Body.String(), "whsec_") || strings.Contains(log.Body.String(), "v1=") {
		t.Fatalf("the deliveries log shows secrets: %s", log.Body)
	}
}

func TestARolledSecretSignsAlongsideTheOldOneUntilItExpires(t *testing.T) {
	e, q := hookEnv(t, fast, 0)
	rc := newReceiver(t, nil)
	id := e.endpoint(rc, "customer.created")
	old := rc.secrets[0]
	roll := func(seconds string) string {
		req, _ := http.NewRequest("POST", e.url+"/webhook_endpoints/"+id+"/roll", strings.NewReader(`{"expiresInSeconds": `+seconds+`}`))
		req.Header.Set("Authorization", "Bearer "+e.key)
		a := e.send(req)
		if a.status != 200 || !strings.HasPrefix(a.body.str(t, "secret"), "whsec_") {
			t.Fatalf("roll: %d %s", a.status, a.raw)
		}
		return a.body.str(t, "secret")
	}
	fresh := roll("3600")
	e.customer()
	idle(t, q)
	h := rc.hooks()[0]
	newOnly, _, newValid := verify(h.header.Get("pspx-signature"), h.raw, []string{fresh})
	_, _, oldValid := verify(h.header.Get("pspx-signature"), h.raw, []string{old})
	if newOnly == 0 || len(h.v1) != 2 || !newValid[0] || newValid[1] || oldValid[0] || !oldValid[1] {
		t.Fatalf("during the roll: v1 %v, new secret verifies %v, old %v", h.v1, newValid, oldValid)
	}

	newest := roll("0") // every older secret stops signing now
	e.customer()
	idle(t, q)
	h = rc.hooks()[1]
	_, _, valid := verify(h.header.Get("pspx-signature"), h.raw, []string{newest})
	if len(h.v1) != 1 || !valid[0] {
		t.Fatalf("after a roll expiring at once: v1 %v, newest verifies %v", h.v1, valid)
	}
}

// renewal subscribes a customer with a card that pays and answers the subscription, the
// advance that reaches its period's end (but not the hour after) and its renewal draft.
func (e *env) renewal() (sub string, toEnd time.Duration) {
	e.t.Helper()
	_, sub = e.subscribe(card("4242424242424242"))
	s := e.ok("GET", "/v1/subscriptions/"+sub)
	return sub, time.Unix(s.num(e.t, "current_period_end"), 0).Sub(e.clock.Now()) + time.Second
}

func (e *env) latestInvoice(sub string) obj {
	e.t.Helper()
	return e.ok("GET", "/v1/invoices/"+e.ok("GET", "/v1/subscriptions/"+sub).str(e.t, "latest_invoice"))
}

func TestWithoutEndpointsARenewalDraftIsEditableForAnHourThenFinalized(t *testing.T) {
	e, _ := hookEnv(t, fast, 0)
	sub, toEnd := e.renewal()
	e.advance(toEnd + 30*time.Minute)
	draft := e.latestInvoice(sub)
	line := draft.objs(t, "lines", "data")[0]
	if draft.str(t, "status") != "draft" || draft.str(t, "billing_reason") != "subscription_cycle" || draft.get(t, "auto_advance") != true {
		t.Fatalf("half an hour after the period end: %v", draft)
	}
	upd := e.ok("POST", "/v1/invoices/"+draft.str(t, "id")+"/lines/"+line.str(t, "id"), "description", "Pro plan, next month", "metadata[tenant]", "t1")
	if upd.str(t, "id") != line.str(t, "id") || upd.str(t, "object") != "line_item" || upd.str(t, "description") != "Pro plan, next month" || upd.str(t, "metadata", "tenant") != "t1" {
		t.Fatalf("updated line %v", upd)
	}
	e.advance(31 * time.Minute)
	inv := e.latestInvoice(sub)
	if inv.str(t, "status") != "paid" || inv.objs(t, "lines", "data")[0].str(t, "description") != "Pro plan, next month" ||
		inv.objs(t, "lines", "data")[0].str(t, "id") != line.str(t, "id") {
		t.Fatalf("after the hour: %v", inv)
	}
	if s := e.ok("GET", "/v1/subscriptions/"+sub); s.num(t, "current_period_start") != draft.num(t, "period_end") {
		t.Fatalf("the period did not move on: %v", s)
	}
	err := e.fails(400, "POST", "/v1/invoices/"+inv.str(t, "id")+"/lines/"+line.str(t, "id"), "description", "too late")
	if err.str(t, "type") != "invalid_request_error" || err.str(t, "code") != "invoice_not_editable" {
		t.Fatalf("editing a paid invoice's line: %v", err)
	}
	e.fails(404, "POST", "/v1/invoices/"+inv.str(t, "id")+"/lines/il_missing", "description", "x")
	e.fails(400, "POST", "/v1/invoices/"+inv.str(t, "id")+"/lines/"+line.str(t, "id"), "amount", "5")
}

func TestARenewalIsFinalizedOnlyOnceItsReceiversHaveEditedAndAnsweredInvoiceCreated(t *testing.T) {
	e, q := hookEnv(t, fast, 0)
	// The receiver handles invoice.created as Berth does: it calls back into the API (while the
	// clock advance that created the draft is still running) to describe the draft's line.
	rc := newReceiver(t, func(h hook) int {
		if h.typ != "invoice.created" || h.object["status"] != "draft" || h.object["billing_reason"] != "subscription_cycle" {
			return 200
		}
		lines := h.object["lines"].(map[string]any)["data"].([]any)
		lineID := lines[0].(map[string]any)["id"].(string)
		if a := e.call("POST", "/v1/invoices/"+h.object["id"].(string)+"/lines/"+lineID, nil, "description", "Berth Pro, renewed"); a.status != 200 {
			return 500
		}
		return 200
	})
	e.endpoint(rc, "*")
	sub, toEnd := e.renewal()
	e.advance(toEnd + time.Hour)
	inv := e.latestInvoice(sub)
	if inv.str(t, "status") != "paid" || inv.objs(t, "lines", "data")[0].str(t, "description") != "Berth Pro, renewed" {
		t.Fatalf("renewal after the advance: %v", inv)
	}
	idle(t, q)
	types := rc.types()
	updated, finalized := slices.Index(types, "invoice.updated"), slices.Index(types, "invoice.finalized")
	// The first invoice.created/finalized are the subscription's first invoice; look at the renewal's.
	created := slices.Index(types[finalized+1:], "invoice.created") + finalized + 1
	finalized = slices.Index(types[created:], "invoice.finalized") + created
	if updated < 0 || updated < created || finalized < updated {
		t.Fatalf("events in order %v", types)
	}
}

func TestAReceiverFailingInvoiceCreatedKeepsTheDraftUntilARetrySucceeds(t *testing.T) {
	e, q := hookEnv(t, fast, 300*time.Millisecond)
	var mu sync.Mutex
	failing := true
	rc := newReceiver(t, func(h hook) int {
		mu.Lock()
		defer mu.Unlock()
		if failing && h.typ == "invoice.created" && h.object["status"] == "draft" {
			return 500
		}
		return 200
	})
	e.endpoint(rc, "*")
	sub, toEnd := e.renewal()
	e.advance(toEnd + 2*time.Hour)
	draft := e.latestInvoice(sub)
	if draft.str(t, "status") != "draft" {
		t.Fatalf("a renewal whose invoice.created failed was finalized: %v", draft)
	}
	mu.Lock()
	failing = false
	mu.Unlock()
	idle(t, q) // the retries go on until the receiver answers 2xx
	e.advance(time.Minute)
	if inv := e.latestInvoice(sub); inv.str(t, "id") != draft.str(t, "id") || inv.str(t, "status") != "paid" {
		t.Fatalf("after invoice.created was answered: %v", inv)
	}
	var attempts []string
	for _, d := range q.Deliveries() {
		if d.Type == "invoice.created" && len(d.Attempts) > 1 {
			for _, a := range d.Attempts {
				attempts = append(attempts, a.Outcome)
			}
		}
	}
	if len(attempts) < 2 || attempts[0] != "failed" || attempts[len(attempts)-1] != "delivered" {
		t.Fatalf("invoice.created attempts %v", attempts)
	}
}

func TestARenewalIsFinalizedAfterThreeDaysWhateverItsReceiversAnswer(t *testing.T) {
	e, _ := hookEnv(t, 1, 0) // retries a real minute apart: the advance does not wait for them
	rc := newReceiver(t, func(h hook) int {
		if h.typ == "invoice.created" {
			return 500
		}
		return 200
	})
	e.endpoint(rc, "invoice.created")
	sub, toEnd := e.renewal()
	e.advance(toEnd + 2*time.Hour)
	if inv := e.latestInvoice(sub); inv.str(t, "status") != "draft" {
		t.Fatalf("after two hours: %v", inv)
	}
	e.advance(69 * time.Hour)
	if inv := e.latestInvoice(sub); inv.str(t, "status") != "draft" {
		t.Fatalf("after 71 hours: %v", inv)
	}
	e.advance(2 * time.Hour)
	if inv := e.latestInvoice(sub); inv.str(t, "status") != "paid" {
		t.Fatalf("after 73 hours: %v", inv)
	}
}

func TestARenewalFinalizedThroughTheAPIDuringItsWindowIsChargedOnceWhenTheWindowCloses(t *testing.T) {
	e, _ := hookEnv(t, fast, 0)
	sub, toEnd := e.renewal()
	e.advance(toEnd + 30*time.Minute)
	draft := e.latestInvoice(sub)
	if inv := e.ok("POST", "/v1/invoices/"+draft.str(t, "id")+"/finalize"); inv.str(t, "status") != "open" || inv.num(t, "attempt_count") != 0 {
		t.Fatalf("finalized by hand: %v", inv)
	}
	e.advance(31 * time.Minute)
	cus := e.ok("GET", "/v1/subscriptions/"+sub).str(t, "customer")
	if inv := e.latestInvoice(sub); inv.str(t, "id") != draft.str(t, "id") || inv.str(t, "status") != "paid" || len(e.invoices(cus)) != 2 {
		t.Fatalf("after the window: %v (%d invoices)", inv, len(e.invoices(cus)))
	}
}
