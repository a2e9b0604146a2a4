package edge

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/pkg/testkit"
	billingv1 "github.com/berthhq/berth/proto/billing/v1"
)

// A client that hangs up while its call is under way is not an error of Berth's: the edge logs one
// info line for it, counts it under "canceled" rather than the 500 the failed call would map to,
// and writes no "request failed" error, on an ordinary route, a streamed list, the hosted login and
// payment pages and a webhook route.
func TestAClientThatHangsUpIsLoggedAtInfoAndCountedAsCanceledNotAsAnError(t *testing.T) {
	cases := []struct {
		name, method, path, route string
		headers                   map[string]string
		hold                      func(h *harness) // makes the backend wait for the hang-up
		called                    func(h *harness) bool
	}{
		{"route 5, tenant read", http.MethodGet, "/v1/tenants/t1", mGetTenant, readKey,
			func(h *harness) { h.tenant.program(mGetTenant, answer{untilCanceled: true}) },
			func(h *harness) bool { return len(h.tenant.received()) > 0 }},
		{"route 6, a streamed list", http.MethodGet, "/v1/analytics/subscriptions?from=2026-01-01&to=2026-01-31",
			"/berth.analytics.v1.AnalyticsService/ListSubscriptions", readKey,
			func(h *harness) {
				h.lists.list = func(l lister) error {
					h.lists.holding.Store(true)
					<-l.ctx.Done()
					return status.FromContextError(l.ctx.Err()).Err()
				}
			},
			func(h *harness) bool { return h.lists.holding.Load() }},
		// The hosted pages render their own error cards and log their own causes.
		{"the login page", http.MethodGet, "/login?" + url.Values{"client_id": {"app-1"}, "redirect_uri": {"https://app.example.com/cb"}, "state": {"s"}, "type": {"signIn"}}.Encode(),
			"login", nil,
			func(h *harness) { h.identity.program(describeLogin, answer{untilCanceled: true}) },
			func(h *harness) bool { return len(h.identity.received()) > 0 }},
		{"the payment page", http.MethodGet, "/pay?" + url.Values{"type": {"payment"}, "client_id": {"0b7c3c2e-4a8f-4a57-9a0e-2d6a1f0e9c11"},
			"session_id": {"5f0c1e2d-3b4a-4c5d-8e6f-7a8b9c0d1e2f"}, "hash": {strings.Repeat("ab", 32)}, "state": {strings.Repeat("s", 64)}}.Encode(),
			"unmatched", nil,
			func(h *harness) {
				h.billing.program(billingv1.PaymentPageService_OpenCheckout_FullMethodName, answer{untilCanceled: true})
			},
			func(h *harness) bool { return len(h.billing.received()) > 0 }},
		// The webhook routes are the edge's own handlers, outside the resolved RPCs' labels.
		{"route 3, a provider's webhook", http.MethodPost, PspxWebhookPath, "unmatched", map[string]string{"Content-Type": "application/json"},
			func(h *harness) { h.webhooks.untilCanceled = true },
			func(h *harness) bool { return h.webhooks.delivered() }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			tc.hold(h)
			served := make(chan struct{})
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				defer close(served)
				h.handler.ServeHTTP(w, r)
			}))
			defer srv.Close()
			count := func(code string) float64 { return testutil.ToFloat64(httpRequests.WithLabelValues(tc.route, code)) }
			canceled, failed := count(codeCanceled), count("500")

			ctx, hangUp := context.WithCancel(t.Context())
			var body io.Reader
			if tc.method == http.MethodPost {
				body = strings.NewReader(`{"id":"evt_1"}`)
			}
			req, _ := http.NewRequestWithContext(ctx, tc.method, srv.URL+tc.path, body)
			for k, v := range tc.headers {
				req.Header.Set(k, v)
			}
			go func() {
				testkit.Eventually(t, "the backend holds the call", func() bool { return tc.called(h) })
				hangUp()
			}()
			if res, err := http.DefaultClient.Do(req); err == nil {
				_ = res.Body.Close()
				t.Fatalf("the request was answered %d before the client hung up", res.StatusCode)
			}
			<-served // the log and the counters are written by then

			if got := count(codeCanceled) - canceled; got != 1 {
				t.Errorf("requests counted as canceled = %v, want 1", got)
			}
			if got := count("500") - failed; got != 0 {
				t.Errorf("the hang-up was counted as %v 500s", got)
			}
			lines := logLines(t, h.logs.Bytes())
			if len(lines) != 1 {
				t.Fatalf("want one log line, got %d:\n%s", len(lines), h.logs)
			}
			l := lines[0]
			if l["level"] != "INFO" || l["msg"] != "http request canceled by the client" || l["method"] != tc.method || l["status"] != nil {
				t.Errorf("log line = %v, want an info line saying the client canceled, with no status it never received", l)
			}
			if bytes.Contains(h.logs.Bytes(), []byte("ERROR")) {
				t.Errorf("the hang-up was logged as an error: %s", h.logs)
			}
		})
	}
}
