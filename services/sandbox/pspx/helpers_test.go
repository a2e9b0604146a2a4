package pspx_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/services/sandbox/clock"
	"github.com/berthhq/berth/services/sandbox/pspx"
)

// env is a sandbox behind a real HTTP server, with its clock and one test-mode account.
type env struct {
	t     *testing.T
	clock *clock.Clock
	sb    *pspx.Server
	url   string
	key   string
}

func newEnv(t *testing.T) *env { return newEnvWith(t, pspx.Config{}) }

// newEnvWith is newEnv with the sandbox's delivery settings of cfg.
func newEnvWith(t *testing.T, cfg pspx.Config) *env {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	base := "http://" + srv.Listener.Addr().String()
	clk := clock.New()
	cfg.Clock, cfg.BaseURL = clk, base
	sb := pspx.New(cfg)
	srv.Config.Handler = sb
	srv.Start()
	t.Cleanup(srv.Close)
	return &env{t: t, clock: clk, sb: sb, url: base, key: "sk_test_account1abcdefgh"}
}

// obj is a decoded JSON object with path getters that fail the test on a wrong shape.
type obj map[string]any

func (o obj) get(t *testing.T, path ...string) any {
	t.Helper()
	var v any = map[string]any(o)
	for _, p := range path {
		m, ok := v.(map[string]any)
		if !ok {
			t.Fatalf("%v: %q is not inside an object", path, p)
		}
		v = m[p]
	}
	return v
}

func (o obj) str(t *testing.T, path ...string) string {
	t.Helper()
	v := o.get(t, path...)
	if v == nil {
		return ""
	}
	s, ok := v.(string)
	if !ok {
		t.Fatalf("%v is %T, not a string", path, v)
	}
	return s
}

func (o obj) num(t *testing.T, path ...string) int64 {
	t.Helper()
	f, ok := o.get(t, path...).(float64)
	if !ok {
		t.Fatalf("%v is not a number: %v", path, o.get(t, path...))
	}
	return int64(f)
}

func (o obj) objs(t *testing.T, path ...string) []obj {
	t.Helper()
	l, ok := o.get(t, path...).([]any)
	if !ok {
		t.Fatalf("%v is not an array", path)
	}
	out := make([]obj, len(l))
	for i, x := range l {
		out[i] = obj(x.(map[string]any))
	}
	return out
}

// answer is a raw API answer.
type answer struct {
	status int
	header http.Header
	body   obj
	raw    string
}

// call sends an API request as the env's account; kv are form pairs (or query pairs for GET).
func (e *env) call(method, path string, header http.Header, kv ...string) answer {
	e.t.Helper()
	form := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		form.Add(kv[i], kv[i+1])
	}
	var body io.Reader
	target := e.url + path
	if method == http.MethodGet {
		if len(form) > 0 {
			target += "?" + form.Encode()
		}
	} else {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, target, body)
	if err != nil {
		e.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+e.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range header {
		req.Header[k] = v
	}
	return e.send(req)
}

func (e *env) send(req *http.Request) answer {
	e.t.Helper()
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	a := answer{status: resp.StatusCode, header: resp.Header, raw: string(b)}
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") {
		if err := json.Unmarshal(b, &a.body); err != nil {
			e.t.Fatalf("%s %s: answer is not a JSON object: %v\n%s", req.Method, req.URL.Path, err, b)
		}
	}
	return a
}

// ok sends a request that must succeed and returns the object.
func (e *env) ok(method, path string, kv ...string) obj {
	e.t.Helper()
	a := e.call(method, path, nil, kv...)
	if a.status != http.StatusOK {
		e.t.Fatalf("%s %s: status %d\n%s", method, path, a.status, a.raw)
	}
	return a.body
}

// fails sends a request that must fail with status and returns the error object.
func (e *env) fails(status int, method, path string, kv ...string) obj {
	e.t.Helper()
	a := e.call(method, path, nil, kv...)
	if a.status != status {
		e.t.Fatalf("%s %s: status %d, want %d\n%s", method, path, a.status, status, a.raw)
	}
	return obj(a.body["error"].(map[string]any))
}

// catalog creates a product with a monthly price of 10.00 EUR and a 19 % exclusive tax rate.
func (e *env) catalog() (priceID, taxID string) {
	e.t.Helper()
	prod := e.ok("POST", "/v1/products", "name", "Pro plan")
	price := e.ok("POST", "/v1/prices", "product", prod.str(e.t, "id"), "unit_amount", "1000", "currency", "eur",
		"recurring[interval]", "month")
	tax := e.ok("POST", "/v1/tax_rates", "display_name", "VAT", "percentage", "19", "inclusive", "false", "country", "DE")
	return price.str(e.t, "id"), tax.str(e.t, "id")
}

func (e *env) oneTimePrice(amount string) string {
	e.t.Helper()
	prod := e.ok("POST", "/v1/products", "name", "Credits")
	return e.ok("POST", "/v1/prices", "product", prod.str(e.t, "id"), "unit_amount", amount, "currency", "eur").str(e.t, "id")
}

func (e *env) customer() string {
	e.t.Helper()
	return e.ok("POST", "/v1/customers", "email", "ada@example.com", "name", "Ada", "metadata[tenantId]", "t1").str(e.t, "id")
}

// session creates a checkout session for the customer; extra are more form pairs.
func (e *env) session(customer, mode string, extra ...string) obj {
	e.t.Helper()
	kv := append([]string{"customer", customer, "mode", mode, "success_url", "https://app.example/done?cs={CHECKOUT_SESSION_ID}",
		"cancel_url", "https://app.example/cancel"}, extra...)
	return e.ok("POST", "/v1/checkout/sessions", kv...)
}

// pageClient does not follow redirects, so a test sees the 303 itself.
var pageClient = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

// submit posts the hosted page's form.
func (e *env) submit(pageURL string, kv ...string) (*http.Response, string) {
	e.t.Helper()
	form := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		form.Set(kv[i], kv[i+1])
	}
	resp, err := pageClient.PostForm(pageURL, form)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func card(number string) []string {
	return []string{"card_number", number, "card_expiry", "12 / 39", "card_cvc", "123", "name", "Ada Lovelace"}
}

func iban(number string) []string { return []string{"iban", number, "name", "Ada Lovelace"} }

// pay completes a session's hosted page and checks the redirect to the success URL.
func (e *env) pay(sess obj, fields []string) {
	e.t.Helper()
	resp, body := e.submit(sess.str(e.t, "url"), fields...)
	want := "https://app.example/done?cs=" + sess.str(e.t, "id")
	if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != want {
		e.t.Fatalf("completion answered %d to %q, want 303 to %q\n%s", resp.StatusCode, resp.Header.Get("Location"), want, body)
	}
}

// savedMethod attaches a payment method through a setup checkout and returns its id.
func (e *env) savedMethod(customer string, fields []string) string {
	e.t.Helper()
	sess := e.session(customer, "setup", "currency", "eur", "payment_method_types[0]", map[bool]string{true: "card", false: "sepa_debit"}[fields[0] == "card_number"])
	e.pay(sess, fields)
	done := e.ok("GET", "/v1/checkout/sessions/"+sess.str(e.t, "id"), "expand[]", "setup_intent")
	return done.str(e.t, "setup_intent", "payment_method")
}

func (e *env) advance(d time.Duration) { e.clock.Advance(context.Background(), d) }

// eventTypes lists the types of the account's events, oldest first.
func (e *env) eventTypes() []string {
	var out []string
	for _, ev := range e.sb.Events() {
		if ev.Account == e.key {
			out = append(out, ev.Type)
		}
	}
	return out
}

func count(list []string, s string) int {
	n := 0
	for _, x := range list {
		if x == s {
			n++
		}
	}
	return n
}

// month is an advance that passes any monthly period's end and the hour its renewal waits as a
// draft.
const month = 31*24*time.Hour + time.Hour
