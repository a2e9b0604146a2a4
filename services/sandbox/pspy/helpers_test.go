package pspy_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/berthhq/berth/services/sandbox/clock"
	"github.com/berthhq/berth/services/sandbox/delivery"
	"github.com/berthhq/berth/services/sandbox/pspy"
)

const (
	testKey  = "test_dHar4XY7LxsDOtmnkVtjNVWXLSlXsM"
	otherKey = "test_OtherAccount000000000000000"
	liveKey  = "live_dHar4XY7LxsDOtmnkVtjNVWXLSlXsM"
)

// env is a sandbox mounted under a prefix, as the all-in-one process mounts it.
type env struct {
	t     *testing.T
	base  string
	sb    *pspy.Server
	clock *clock.Clock
	web   *http.Client // a payer's browser that shows each redirect instead of following it
}

func start(t *testing.T) *env { return startWith(t, nil) }

// startWith is start with a sandbox that delivers its notifications through q.
func startWith(t *testing.T, q *delivery.Queue) *env {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String() + "/_sandbox/pspy"
	c := clock.New()
	sb := pspy.New(pspy.Config{Clock: c, BaseURL: base, Deliveries: q})
	mux := http.NewServeMux()
	mux.Handle("/_sandbox/pspy/", http.StripPrefix("/_sandbox/pspy", sb))
	srv.Config.Handler = mux
	srv.Start()
	t.Cleanup(srv.Close)
	web := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	return &env{t: t, base: base, sb: sb, clock: c, web: web}
}

// obj is a decoded JSON answer.
type obj map[string]any

// at walks a dotted path through objects and arrays ("_embedded.mandates.0.id").
func (o obj) at(path string) any {
	var v any = map[string]any(o)
	for _, part := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[part]
		case []any:
			i, err := strconv.Atoi(part)
			if err != nil || i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func (o obj) str(path string) string {
	s, _ := o.at(path).(string)
	return s
}

// answer is an API answer.
type answer struct {
	status int
	header http.Header
	raw    []byte
	body   obj
}

// call sends an API request; body is JSON-encoded unless it is a string, sent as is.
func (e *env) call(method, path, key, idem string, body any) answer {
	e.t.Helper()
	var r io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		r = strings.NewReader(b)
	default:
		j, err := json.Marshal(b)
		if err != nil {
			e.t.Fatal(err)
		}
		r = bytes.NewReader(j)
	}
	req, err := http.NewRequest(method, e.base+path, r)
	if err != nil {
		e.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	if idem != "" {
		req.Header.Set("Idempotency-Key", idem)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	a := answer{status: resp.StatusCode, header: resp.Header, raw: raw}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &a.body); err != nil {
			e.t.Fatalf("%s %s answered %d with non-JSON %q", method, path, resp.StatusCode, raw)
		}
	}
	return a
}

// must sends a request that has to succeed with want.
func (e *env) must(want int, method, path, key string, body any) obj {
	e.t.Helper()
	a := e.call(method, path, key, "", body)
	if a.status != want {
		e.t.Fatalf("%s %s: %d %s, want %d", method, path, a.status, a.raw, want)
	}
	return a.body
}

func (e *env) customer(key string) string {
	e.t.Helper()
	return e.must(201, "POST", "/v2/customers", key, obj{"name": "Ada Lovelace", "email": "ada@example.com"}).str("id")
}

// payment creates a payment from the given fields over a valid default.
func (e *env) payment(key string, fields obj) obj {
	e.t.Helper()
	body := obj{
		"amount": obj{"currency": "EUR", "value": "10.00"}, "description": "Plan Pro",
		"redirectUrl": "https://shop.example/return", "webhookUrl": "https://shop.example/hook",
	}
	for k, v := range fields {
		body[k] = v
	}
	return e.must(201, "POST", "/v2/payments", key, body)
}

// submit posts the checkout form of payment id.
func (e *env) submit(id string, form url.Values) *http.Response {
	e.t.Helper()
	resp, err := e.web.PostForm(e.base+"/checkout/"+id, form)
	if err != nil {
		e.t.Fatal(err)
	}
	resp.Body.Close()
	return resp
}

// page fetches the checkout page of payment id.
func (e *env) page(id string) (*http.Response, string) {
	e.t.Helper()
	resp, err := e.web.Get(e.base + "/checkout/" + id)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.t.Fatal(err)
	}
	return resp, string(b)
}

// mandate pays a first payment of the customer with the outcome and method, and returns the
// mandate it established.
func (e *env) mandate(key, customerID, outcome, method string) string {
	e.t.Helper()
	p := e.payment(key, obj{"sequenceType": "first", "customerId": customerID})
	if resp := e.submit(p.str("id"), url.Values{"outcome": {outcome}, "method": {method}}); resp.StatusCode != http.StatusSeeOther {
		e.t.Fatalf("checkout answered %d", resp.StatusCode)
	}
	id := e.must(200, "GET", "/v2/payments/"+p.str("id"), key, nil).str("mandateId")
	if id == "" {
		e.t.Fatal("the paid first payment established no mandate")
	}
	return id
}
