package pspy_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/berthhq/berth/services/billing/internal/adapters/pspy"
	"github.com/berthhq/berth/services/billing/internal/app"
)

// key is the secret key the requests to canned servers carry.
const key = "test_dHar4XY7LxsDOtmnkVtjNVWXLSlXsM"

// recorded is one request a canned server received.
type recorded struct {
	method, uri, auth, idem, contentType, body string
}

// canned answers every request with answer(r) and records it.
type canned struct {
	mu       sync.Mutex
	requests []recorded
	answer   func(r *http.Request) (int, string)
}

func (c *canned) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b, _ := io.ReadAll(r.Body)
	c.mu.Lock()
	c.requests = append(c.requests, recorded{
		method: r.Method, uri: r.URL.RequestURI(), auth: r.Header.Get("Authorization"),
		idem: r.Header.Get("Idempotency-Key"), contentType: r.Header.Get("Content-Type"), body: string(b),
	})
	c.mu.Unlock()
	status, body := c.answer(r)
	if body != "" {
		w.Header().Set("Content-Type", "application/hal+json")
	}
	w.WriteHeader(status)
	_, _ = io.WriteString(w, body)
}

func cannedClient(t *testing.T, answer func(r *http.Request) (int, string)) (*pspy.Client, *canned) {
	t.Helper()
	c := &canned{answer: answer}
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	return pspy.New(pspy.Config{BaseURL: srv.URL, Attempts: 2, Backoff: noWait}), c
}

// anyObject satisfies every decoder: an id, and an empty mandate list.
func anyObject(r *http.Request) (int, string) {
	switch {
	case r.Method == http.MethodDelete && strings.Contains(r.URL.Path, "/mandates/"):
		return http.StatusNoContent, ""
	case strings.HasSuffix(r.URL.Path, "/mandates"):
		return http.StatusOK, `{"count":0,"_embedded":{"mandates":[]},"_links":{"next":null}}`
	}
	return http.StatusOK, `{"id":"x_1"}`
}

func TestRequestsCarryTheKeyTheIdempotencyKeyAndTheProvidersJSON(t *testing.T) {
	ctx := context.Background()
	const idem = "op-42"
	cases := []struct {
		name   string
		call   func(c *pspy.Client) error
		method string
		uri    string
		body   string // "" = no body
	}{
		{"customer", func(c *pspy.Client) error {
			_, err := c.CreateCustomer(ctx, key, idem, app.PspyCustomerInput{Name: "Ada", Email: "ada@example.com", Metadata: map[string]string{"tenantId": "t1"}})
			return err
		}, "POST", "/v2/customers", `{"name":"Ada","email":"ada@example.com","metadata":{"tenantId":"t1"}}`},
		{"customer without details", func(c *pspy.Client) error {
			_, err := c.CreateCustomer(ctx, key, idem, app.PspyCustomerInput{})
			return err
		}, "POST", "/v2/customers", `{}`},
		{"first payment", func(c *pspy.Client) error {
			_, err := c.CreatePayment(ctx, key, idem, app.PspyPaymentInput{
				Amount: eur("10.00"), Description: "Plan Pro", RedirectURL: "https://b.example/r", CancelURL: "https://b.example/c",
				WebhookURL: "https://b.example/h", SequenceType: "first", CustomerID: "cst_1", Method: []string{"creditcard", "directdebit"},
				Metadata: map[string]string{"checkout": "ck_1"},
			})
			return err
		}, "POST", "/v2/payments", `{"amount":{"currency":"EUR","value":"10.00"},"description":"Plan Pro","redirectUrl":"https://b.example/r",
			"cancelUrl":"https://b.example/c","webhookUrl":"https://b.example/h","sequenceType":"first","customerId":"cst_1",
			"method":["creditcard","directdebit"],"metadata":{"checkout":"ck_1"}}`},
		{"recurring payment", func(c *pspy.Client) error {
			_, err := c.CreatePayment(ctx, key, idem, app.PspyPaymentInput{Amount: eur("1.00"), Description: "x", SequenceType: "recurring", CustomerID: "cst_1", MandateID: "mdt_1"})
			return err
		}, "POST", "/v2/payments", `{"amount":{"currency":"EUR","value":"1.00"},"description":"x","sequenceType":"recurring","customerId":"cst_1","mandateId":"mdt_1"}`},
		{"refund", func(c *pspy.Client) error {
			_, err := c.CreateRefund(ctx, key, idem, "tr_1", eur("5.00"), "Goodwill")
			return err
		}, "POST", "/v2/payments/tr_1/refunds", `{"amount":{"currency":"EUR","value":"5.00"},"description":"Goodwill"}`},
		{"subscription", func(c *pspy.Client) error {
			_, err := c.CreateSubscription(ctx, key, idem, "cst_1", app.PspySubscriptionInput{
				Amount: eur("25.00"), Interval: "12 months", StartDate: "2030-01-31", Description: "Yearly", MandateID: "mdt_1",
				WebhookURL: "https://b.example/h", Metadata: map[string]string{"plan": "pro"},
			})
			return err
		}, "POST", "/v2/customers/cst_1/subscriptions", `{"amount":{"currency":"EUR","value":"25.00"},"interval":"12 months",
			"startDate":"2030-01-31","description":"Yearly","mandateId":"mdt_1","webhookUrl":"https://b.example/h","metadata":{"plan":"pro"}}`},
		{"payment", func(c *pspy.Client) error { _, err := c.Payment(ctx, key, "tr_1"); return err },
			"GET", "/v2/payments/tr_1?embed=refunds,chargebacks", ""},
		{"payment with an id that is not one", func(c *pspy.Client) error { _, err := c.Payment(ctx, key, "tr_1/../../x?y"); return err },
			"GET", "/v2/payments/tr_1%2F..%2F..%2Fx%3Fy?embed=refunds,chargebacks", ""},
		{"mandates", func(c *pspy.Client) error { _, err := c.Mandates(ctx, key, "cst_1"); return err },
			"GET", "/v2/customers/cst_1/mandates?limit=250", ""},
		{"revoke", func(c *pspy.Client) error { return c.RevokeMandate(ctx, key, "cst_1", "mdt_1") },
			"DELETE", "/v2/customers/cst_1/mandates/mdt_1", ""},
		{"subscription fetched", func(c *pspy.Client) error { _, err := c.Subscription(ctx, key, "cst_1", "sub_1"); return err },
			"GET", "/v2/customers/cst_1/subscriptions/sub_1", ""},
		{"cancel", func(c *pspy.Client) error { _, err := c.CancelSubscription(ctx, key, "cst_1", "sub_1"); return err },
			"DELETE", "/v2/customers/cst_1/subscriptions/sub_1", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			client, rec := cannedClient(t, anyObject)
			if err := c.call(client); err != nil {
				t.Fatal(err)
			}
			if len(rec.requests) != 1 {
				t.Fatalf("%d requests", len(rec.requests))
			}
			r := rec.requests[0]
			if r.method != c.method || r.uri != c.uri || r.auth != "Bearer "+key {
				t.Fatalf("sent %s %s with %q, want %s %s", r.method, r.uri, r.auth, c.method, c.uri)
			}
			if c.body == "" {
				if r.body != "" || r.idem != "" || r.contentType != "" {
					t.Fatalf("a %s sent body %q, key %q, type %q", r.method, r.body, r.idem, r.contentType)
				}
				return
			}
			if r.idem != idem || r.contentType != "application/json" {
				t.Fatalf("Idempotency-Key %q, Content-Type %q", r.idem, r.contentType)
			}
			var got, want any
			if err := json.Unmarshal([]byte(r.body), &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(c.body), &want); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("body %s\nwant %s", r.body, c.body)
			}
		})
	}
}

func TestARetriedCreationCarriesTheSameKeyAndYieldsTheObjectFirstCreated(t *testing.T) {
	var mu sync.Mutex
	var keys []string
	var lost string // the answer the first attempt produced, which never reached the client
	w := newWorldBehind(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
			mu.Lock()
			keys = append(keys, r.Header.Get("Idempotency-Key"))
			first := len(keys) == 1
			mu.Unlock()
			if first {
				rec := httptest.NewRecorder()
				next.ServeHTTP(rec, r)
				mu.Lock()
				lost = rec.Body.String()
				mu.Unlock()
				rw.WriteHeader(http.StatusBadGateway)
				return
			}
			next.ServeHTTP(rw, r)
		})
	})
	ctx := context.Background()
	in := app.PspyCustomerInput{Name: "Ada", Email: "ada@example.com"}
	cu, err := w.client.CreateCustomer(ctx, w.key, "op-7", in)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	firstAnswer, sent := lost, append([]string(nil), keys...)
	mu.Unlock()
	var created struct{ ID string }
	if err := json.Unmarshal([]byte(firstAnswer), &created); err != nil || created.ID != cu.ID {
		t.Fatalf("the retry answered %s, the lost first attempt created %q", cu.ID, firstAnswer)
	}
	if len(sent) != 2 || sent[0] != "op-7" || sent[1] != "op-7" {
		t.Fatalf("keys sent %q", sent)
	}
	again, err := w.client.CreateCustomer(ctx, w.key, "op-7", in)
	if err != nil || again.ID != cu.ID {
		t.Fatalf("the same operation again: %+v, %v", again, err)
	}
	other, err := w.client.CreateCustomer(ctx, w.key, "op-8", in)
	if err != nil || other.ID == cu.ID {
		t.Fatalf("another operation: %+v, %v", other, err)
	}
	var pe *app.ProviderError
	if _, err := w.client.CreateCustomer(ctx, w.key, "op-7", app.PspyCustomerInput{Name: "Bob"}); !errors.As(err, &pe) || pe.Status != 422 {
		t.Fatalf("the operation's key with other parameters: %v", err)
	}
}

func TestProviderErrorsKeepTheProblemAndTellCallerFaults(t *testing.T) {
	w := newWorld(t)
	ctx := context.Background()
	cases := []struct {
		name        string
		call        func() error
		status      int
		code, param string
		callerFault bool
	}{
		{"an amount without decimals", func() error {
			_, err := w.client.CreatePayment(ctx, w.key, "", app.PspyPaymentInput{Amount: eur("10"), Description: "x", RedirectURL: "https://b.example"})
			return err
		}, 422, "Unprocessable Entity", "amount.value", true},
		{"an unknown payment", func() error { _, err := w.client.Payment(ctx, w.key, "tr_nothing"); return err }, 404, "Not Found", "", true},
		{"a refund of an open payment", func() error {
			p, err := w.client.CreatePayment(ctx, w.key, "", app.PspyPaymentInput{Amount: eur("10.00"), Description: "x", RedirectURL: "https://b.example"})
			if err != nil {
				return err
			}
			_, err = w.client.CreateRefund(ctx, w.key, "", p.ID, eur("1.00"), "")
			return err
		}, 422, "Unprocessable Entity", "", true},
		{"a key without a mode", func() error { _, err := w.client.Payment(ctx, "sk_nothing", "tr_1"); return err }, 401, "Unauthorized Request", "", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var pe *app.ProviderError
			if err := c.call(); !errors.As(err, &pe) {
				t.Fatalf("error %v, want a provider error", err)
			}
			if pe.Status != c.status || pe.Code != c.code || pe.Param != c.param || pe.UserMessage == "" || pe.CallerFault() != c.callerFault {
				t.Fatalf("provider error %+v (caller fault %v)", pe, pe.CallerFault())
			}
		})
	}
}

func TestAnswersThatAreNotTheProvidersArePlainErrors(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		status int
		body   string
		want   int // ProviderError status; 0 = a plain error
	}{
		{"a problem after the retries", 503, `{"status":503,"title":"Service Unavailable","detail":"Try again later."}`, 503},
		{"a proxy's page", 502, `<html>Bad gateway</html>`, 0},
		{"an error without a title", 400, `{"error":"bad"}`, 0},
		{"a success that is not JSON", 200, `<html>ok</html>`, 0},
		{"a success without an id", 200, `{"resource":"payment"}`, 0},
		{"a field of the wrong type", 200, `{"id":"tr_1","amount":10}`, 0},
		{"a redirection", 304, ``, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			client, _ := cannedClient(t, func(*http.Request) (int, string) { return c.status, c.body })
			_, err := client.Payment(ctx, key, "tr_1")
			var pe *app.ProviderError
			switch {
			case err == nil:
				t.Fatal("no error")
			case c.want == 0 && errors.As(err, &pe):
				t.Fatalf("provider error %+v, want a plain error", pe)
			case c.want != 0 && (!errors.As(err, &pe) || pe.Status != c.want || pe.CallerFault()):
				t.Fatalf("error %v, want a %d provider error", err, c.want)
			case strings.Contains(err.Error(), key):
				t.Fatalf("the error shows the secret key: %v", err)
			}
		})
	}
	srv := httptest.NewServer(http.NotFoundHandler())
	srv.Close()
	client := pspy.New(pspy.Config{BaseURL: srv.URL, Attempts: 2, Backoff: noWait})
	var pe *app.ProviderError
	if _, err := client.Payment(ctx, key, "tr_1"); err == nil || errors.As(err, &pe) {
		t.Fatalf("unreachable provider: %v", err)
	}
}

func TestMandatesFollowsTheListsNextLinks(t *testing.T) {
	ctx := context.Background()
	page := func(ids []string, next string) string {
		var ms []string
		for _, id := range ids {
			ms = append(ms, `{"resource":"mandate","id":"`+id+`","status":"valid","method":"creditcard","createdAt":"2026-01-02T03:04:05+00:00"}`)
		}
		n := "null"
		if next != "" {
			n = `{"href":"` + next + `","type":"application/hal+json"}`
		}
		return `{"count":` + strconv.Itoa(len(ids)) + `,"_embedded":{"mandates":[` + strings.Join(ms, ",") + `]},"_links":{"next":` + n + `}}`
	}
	client, rec := cannedClient(t, func(r *http.Request) (int, string) {
		if r.URL.Query().Get("from") == "mdt_1" {
			return 200, page([]string{"mdt_1"}, "")
		}
		return 200, page([]string{"mdt_3", "mdt_2"}, "https://api.pspy.example/v2/customers/cst_1/mandates?from=mdt_1&limit=250")
	})
	got, err := client.Mandates(ctx, key, "cst_1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].ID != "mdt_3" || got[2].ID != "mdt_1" || got[2].CreatedAt.IsZero() || got[1].Method != "creditcard" {
		t.Fatalf("mandates %+v", got)
	}
	if len(rec.requests) != 2 || rec.requests[1].uri != "/v2/customers/cst_1/mandates?from=mdt_1&limit=250" {
		t.Fatalf("requests %+v", rec.requests)
	}

	for _, next := range []string{"https://api.pspy.example/v2/customers/cst_1/mandates?limit=250", "https://api.pspy.example/v2/customers/cst_1/mandates?from=mdt_2"} {
		looping, _ := cannedClient(t, func(*http.Request) (int, string) {
			return 200, page([]string{"mdt_2"}, next)
		})
		if _, err := looping.Mandates(ctx, key, "cst_1"); err == nil {
			t.Fatalf("next link %q was followed without end", next)
		}
	}
}

func TestMetadataOtherThanStringsReadsAsNone(t *testing.T) {
	for _, meta := range []string{`"free text"`, `{"seats":3}`, `null`} {
		client, _ := cannedClient(t, func(*http.Request) (int, string) {
			return 201, `{"resource":"customer","id":"cst_1","mode":"live","metadata":` + meta + `}`
		})
		cu, err := client.CreateCustomer(context.Background(), key, "op", app.PspyCustomerInput{})
		if err != nil || cu.Metadata != nil || cu.Mode != "live" {
			t.Fatalf("metadata %s: %+v, %v", meta, cu, err)
		}
	}
}
