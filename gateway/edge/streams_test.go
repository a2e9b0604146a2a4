package edge

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/pkg/fault"

	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// fakeLists is analytics with programmable streamed lists; its unary calls stay unimplemented
// unless the harness's fakeBackend answers them.
type fakeLists struct {
	analyticsv1.UnimplementedAnalyticsServiceServer
	subscriptions func(grpc.ServerStreamingServer[analyticsv1.SubscriptionChunk]) error
	tenants       func(grpc.ServerStreamingServer[analyticsv1.TenantChunk]) error
}

func (f *fakeLists) ListSubscriptions(_ *analyticsv1.ListRangeRequest, s grpc.ServerStreamingServer[analyticsv1.SubscriptionChunk]) error {
	return f.subscriptions(s)
}

func (f *fakeLists) ListTenants(_ *analyticsv1.ListRangeRequest, s grpc.ServerStreamingServer[analyticsv1.TenantChunk]) error {
	return f.tenants(s)
}

func subscription(i int) *analyticsv1.Subscription {
	return &analyticsv1.Subscription{Id: fmt.Sprintf("item-%d", i), Paid: i%2 == 0, Until: 1767225600 + float64(i), PspxSubscriptionId: fmt.Sprintf("sub_%d", i),
		User: &analyticsv1.AnalyticsUser{Id: "u", Name: `Ada "the first" Lovelace`, Tenant: &analyticsv1.AnalyticsTenant{Id: "t", PaymentFailedCount: 2}}}
}

// sendSubscriptions sends n items in chunks of size, the head in the first; announced is the
// itemsLength the head claims.
func sendSubscriptions(n, size, announced int) func(grpc.ServerStreamingServer[analyticsv1.SubscriptionChunk]) error {
	return func(s grpc.ServerStreamingServer[analyticsv1.SubscriptionChunk]) error {
		c := &analyticsv1.SubscriptionChunk{Head: &analyticsv1.ListHead{Kind: "analyticsSubscription", ItemsLength: int32(announced)}}
		for i := range n {
			c.Items = append(c.Items, subscription(i))
			if len(c.Items) == size {
				if err := s.Send(c); err != nil {
					return err
				}
				c = &analyticsv1.SubscriptionChunk{}
			}
		}
		if c.Head != nil || len(c.Items) > 0 {
			return s.Send(c)
		}
		return nil
	}
}

const subscriptionsPath = "/v1/analytics/subscriptions?from=2026-01-01&to=2026-01-31"

var readKey = map[string]string{"X-API-KEY": "k", "X-API-KEY-TYPE": "read", "X-CLIENT-ID": "app"}

func TestAStreamedListIsRenderedInsideTheV1EnvelopeWithItsKeysInOrder(t *testing.T) {
	for _, n := range []int{0, 1, 250} {
		t.Run(fmt.Sprintf("%d items", n), func(t *testing.T) {
			h := newHarness(t)
			h.lists.subscriptions = sendSubscriptions(n, 128, n)
			rec := h.do(t, http.MethodGet, subscriptionsPath, "", readKey)
			if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
				t.Fatalf("%d %s: %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
			}
			if got := topLevelKeys(t, rec.Body.Bytes()); strings.Join(got, ",") != "success,message,error,data" {
				t.Fatalf("envelope keys %v", got)
			}
			var body struct {
				Success bool            `json:"success"`
				Message string          `json:"message"`
				Error   any             `json:"error"`
				Data    json.RawMessage `json:"data"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
				t.Fatalf("not one JSON object: %v\n%s", err, rec.Body)
			}
			if !body.Success || body.Message != "Subscriptions retrieved" || body.Error != nil {
				t.Fatalf("envelope %+v", body)
			}
			if got := topLevelKeys(t, body.Data); strings.Join(got, ",") != "kind,itemsLength,items" {
				t.Fatalf("data keys %v", got)
			}
			var data struct {
				Kind        string           `json:"kind"`
				ItemsLength any              `json:"itemsLength"`
				Items       []map[string]any `json:"items"`
			}
			if err := json.Unmarshal(body.Data, &data); err != nil {
				t.Fatal(err)
			}
			if data.Kind != "analyticsSubscription" || data.ItemsLength != float64(n) || len(data.Items) != n {
				t.Fatalf("kind %q itemsLength %v with %d items", data.Kind, data.ItemsLength, len(data.Items))
			}
			for i, it := range data.Items {
				u := it["user"].(map[string]any)
				if it["id"] != fmt.Sprintf("item-%d", i) || it["until"] != 1767225600+float64(i) || it["paid"] != (i%2 == 0) || it["cancelled"] != false ||
					it["pspxCouponId"] != "" || u["name"] != `Ada "the first" Lovelace` || u["tenant"].(map[string]any)["paymentFailedCount"] != 2.0 {
					t.Fatalf("item %d: %v", i, it)
				}
			}
		})
	}
}

func TestAListThatFailsBeforeItsFirstChunkAnswersInTheV1ErrorEnvelope(t *testing.T) {
	tests := []struct {
		name   string
		err    error
		status int
		text   string
	}{
		{"a bad range", fault.InvalidField("from", "must not be after to"), 400, "from must not be after to"},
		{"no credentials", status.Error(codes.Unauthenticated, "missing API key"), 401, "missing API key"},
		{"the wrong key type", status.Error(codes.PermissionDenied, "read key required"), 403, "read key required"},
		{"a server failure", status.Error(codes.Internal, "database on fire"), 500, internalMessage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.lists.subscriptions = func(grpc.ServerStreamingServer[analyticsv1.SubscriptionChunk]) error { return wire(tc.err) }
			rec := h.do(t, http.MethodGet, subscriptionsPath, "", readKey)
			wantV1Failure(t, rec, tc.status, tc.text)
			if strings.Contains(rec.Body.String(), "fire") {
				t.Fatalf("a 500 leaked its cause: %s", rec.Body)
			}
		})
	}
}

// open sends a read-key GET to the edge over a real connection and returns the response unread.
func open(t *testing.T, srv *httptest.Server, path string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+path, nil)
	for k, v := range readKey {
		req.Header.Set(k, v)
	}
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// get is open, reading the body to its end.
func get(t *testing.T, srv *httptest.Server, path string) (*http.Response, []byte, error) {
	t.Helper()
	res := open(t, srv, path)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	return res, body, err
}

func TestAListThatBreaksAfterItsFirstBytesAbortsTheResponse(t *testing.T) {
	tests := []struct {
		name string
		send func(grpc.ServerStreamingServer[analyticsv1.SubscriptionChunk]) error
	}{
		{"a failure after the head", func(s grpc.ServerStreamingServer[analyticsv1.SubscriptionChunk]) error {
			if err := sendSubscriptions(3, 3, 10)(s); err != nil {
				return err
			}
			return status.Error(codes.Internal, "connection to the database lost")
		}},
		// The last announced item is out, but the stream's end is what makes the list complete.
		{"a failure after the last item", func(s grpc.ServerStreamingServer[analyticsv1.SubscriptionChunk]) error {
			if err := sendSubscriptions(3, 2, 3)(s); err != nil {
				return err
			}
			return status.Error(codes.Internal, "connection to the database lost")
		}},
		{"fewer items than announced", sendSubscriptions(3, 2, 5)},
		{"more items than announced", sendSubscriptions(6, 2, 5)},
		{"more items after the announced ones", sendSubscriptions(6, 5, 5)},
		{"a second head", func(s grpc.ServerStreamingServer[analyticsv1.SubscriptionChunk]) error {
			if err := sendSubscriptions(1, 1, 2)(s); err != nil {
				return err
			}
			return sendSubscriptions(1, 1, 2)(s)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.lists.subscriptions = tc.send
			srv := httptest.NewServer(h.handler)
			defer srv.Close()
			res, body, err := get(t, srv, subscriptionsPath)
			if err == nil {
				t.Fatalf("read a complete %d response: %s", res.StatusCode, body)
			}
			if json.Valid(body) {
				t.Fatalf("the broken response parses: %s", body)
			}
			srv.Close() // waits for the handler, which logs after the client saw the abort
			if !strings.Contains(h.logs.String(), "streamed list failed") {
				t.Fatalf("no log line says the list failed:\n%s", h.logs)
			}
		})
	}
}

// The edge writes a list as its chunks arrive: the client holds the head before the service
// sends the rest (which waits for exactly that), so the answer is never collected first.
func TestAListReachesTheClientWhileItIsStillStreaming(t *testing.T) {
	h := newHarness(t)
	clientHasHead := make(chan struct{})
	h.lists.tenants = func(s grpc.ServerStreamingServer[analyticsv1.TenantChunk]) error {
		if err := s.Send(&analyticsv1.TenantChunk{Head: &analyticsv1.ListHead{Kind: "analyticsTenant", ItemsLength: 2},
			Items: []*analyticsv1.TenantItem{{Id: "t1", TenantAddresses: []*tenantv1.Address{{Id: "a1", Type: "billing"}}}}}); err != nil {
			return err
		}
		select {
		case <-clientHasHead:
		case <-s.Context().Done():
			return s.Context().Err()
		}
		return s.Send(&analyticsv1.TenantChunk{Items: []*analyticsv1.TenantItem{{Id: "t2", Users: []*analyticsv1.AnalyticsTenantUser{{Id: "u"}}}}})
	}
	srv := httptest.NewServer(h.handler)
	defer srv.Close()
	res := open(t, srv, "/v1/analytics/tenants?from=2026-01-01&to=2026-01-01")
	defer res.Body.Close()
	first := make([]byte, 64)
	if _, err := io.ReadFull(res.Body, first); err != nil || !strings.HasPrefix(string(first), `{"success":true`) {
		t.Fatalf("first bytes %q, %v", first, err)
	}
	close(clientHasHead)
	rest, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	var body struct {
		Data struct {
			Items []struct {
				ID              string           `json:"id"`
				TenantAddresses []map[string]any `json:"tenantAddresses"`
				Users           []map[string]any `json:"users"`
			} `json:"items"`
		} `json:"data"`
	}
	if err := json.Unmarshal(append(first, rest...), &body); err != nil || len(body.Data.Items) != 2 || body.Data.Items[1].Users[0]["password"] != "" ||
		body.Data.Items[0].TenantAddresses[0]["type"] != "billing" {
		t.Fatalf("body %s: %v", append(first, rest...), err)
	}
}

func TestAListsQueryWithBadBytesIsRefusedBeforeTheStreamOpens(t *testing.T) {
	h := newHarness(t)
	h.lists.subscriptions = func(grpc.ServerStreamingServer[analyticsv1.SubscriptionChunk]) error {
		t.Error("the stream was opened")
		return nil
	}
	rec := h.do(t, http.MethodGet, "/v1/analytics/subscriptions?from=%ff&to=2026-01-01", "", readKey)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "from") {
		t.Fatalf("%d %s, want a 400 naming from", rec.Code, rec.Body)
	}
}
