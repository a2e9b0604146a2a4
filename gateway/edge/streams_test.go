package edge

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/pkg/fault"

	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// fakeLists is analytics with programmable streamed lists: list answers all three of them through
// a lister that sends the route's own chunk type, filled with numbered fixture items. Its unary
// calls stay unimplemented unless the harness's fakeBackend answers them.
type fakeLists struct {
	analyticsv1.UnimplementedAnalyticsServiceServer
	list func(lister) error
	// audit are the chunks the audit log's stream sends, in order.
	audit []*analyticsv1.AuditEntryChunk
	// holding is set by a list that waits for its caller to give up.
	holding atomic.Bool
}

// lister sends the chunks of one list stream.
type lister struct {
	kind string
	ctx  context.Context
	send func(head *analyticsv1.ListHead, from, to int) error
}

// head sends the first chunk: a head announcing itemsLength, with fixture items from..to-1.
func (l lister) head(itemsLength, from, to int) error {
	return l.send(&analyticsv1.ListHead{Kind: l.kind, ItemsLength: int32(itemsLength)}, from, to)
}

// items sends a chunk without head holding fixture items from..to-1.
func (l lister) items(from, to int) error { return l.send(nil, from, to) }

func (f *fakeLists) run(ctx context.Context, kind string, send func(*analyticsv1.ListHead, int, int) error) error {
	if f.list == nil {
		return status.Error(codes.Unimplemented, "no list programmed")
	}
	return f.list(lister{kind: kind, ctx: ctx, send: send})
}

func (f *fakeLists) ListSubscriptions(_ *analyticsv1.ListRangeRequest, s grpc.ServerStreamingServer[analyticsv1.SubscriptionChunk]) error {
	return f.run(s.Context(), "analyticsSubscription", func(head *analyticsv1.ListHead, from, to int) error {
		return s.Send(&analyticsv1.SubscriptionChunk{Head: head, Items: fixtures(from, to, subscription)})
	})
}

func (f *fakeLists) ListOneTimePayments(_ *analyticsv1.ListRangeRequest, s grpc.ServerStreamingServer[analyticsv1.OneTimePaymentChunk]) error {
	return f.run(s.Context(), "analyticsOneTimePayment", func(head *analyticsv1.ListHead, from, to int) error {
		return s.Send(&analyticsv1.OneTimePaymentChunk{Head: head, Items: fixtures(from, to, oneTimePayment)})
	})
}

func (f *fakeLists) ListTenants(_ *analyticsv1.ListRangeRequest, s grpc.ServerStreamingServer[analyticsv1.TenantChunk]) error {
	return f.run(s.Context(), "analyticsTenant", func(head *analyticsv1.ListHead, from, to int) error {
		return s.Send(&analyticsv1.TenantChunk{Head: head, Items: fixtures(from, to, tenantItem)})
	})
}

func (f *fakeLists) ListAuditEntries(_ *analyticsv1.ListAuditEntriesRequest, s grpc.ServerStreamingServer[analyticsv1.AuditEntryChunk]) error {
	if f.audit == nil {
		return status.Error(codes.Unimplemented, "no audit list programmed")
	}
	for _, c := range f.audit {
		if err := s.Send(c); err != nil {
			return err
		}
	}
	return nil
}

func fixtures[T any](from, to int, item func(int) T) []T {
	items := make([]T, 0, max(to-from, 0))
	for i := from; i < to; i++ {
		items = append(items, item(i))
	}
	return items
}

func itemID(i int) string { return fmt.Sprintf("item-%d", i) }

// analyticsUser is item i's user: every third item has none and every third other one a user
// without tenant, so both nulls of the documented shape are rendered.
func analyticsUser(i int) *analyticsv1.AnalyticsUser {
	switch i % 3 {
	case 2:
		return nil
	case 1:
		return &analyticsv1.AnalyticsUser{Id: fmt.Sprintf("user-%d", i), Name: `Ada "the first" Lovelace`}
	}
	return &analyticsv1.AnalyticsUser{Id: fmt.Sprintf("user-%d", i), Name: `Ada "the first" Lovelace`, TenantId: true,
		Tenant: &analyticsv1.AnalyticsTenant{Id: "t", PaidUnits: "10", PaymentFailedCount: 2, Freezed: true}}
}

func subscription(i int) *analyticsv1.Subscription {
	return &analyticsv1.Subscription{Id: itemID(i), Paid: i%2 == 0, Until: 1767225600 + float64(i), PspxSubscriptionId: fmt.Sprintf("sub_%d", i),
		User: analyticsUser(i)}
}

func oneTimePayment(i int) *analyticsv1.OneTimePayment {
	return &analyticsv1.OneTimePayment{Id: itemID(i), Paid: true, Units: float64(i + 1), UnitsBefore: float64(10 * i), User: analyticsUser(i)}
}

func tenantItem(i int) *analyticsv1.TenantItem {
	t := &analyticsv1.TenantItem{Id: itemID(i), Name: "Acme", PaymentFailedCount: int32(i),
		Users: []*analyticsv1.AnalyticsTenantUser{{Id: "u", LastSignInAt: true, TenantId: true}}}
	if i%2 == 0 {
		t.TenantAddresses = []*tenantv1.Address{{Id: "a", Type: "billing"}}
	}
	return t
}

// sendItems sends n fixture items in chunks of size, the first with a head announcing itemsLength.
func sendItems(n, size, itemsLength int) func(lister) error {
	return func(l lister) error {
		if err := l.head(itemsLength, 0, min(size, n)); err != nil {
			return err
		}
		for from := size; from < n; from += size {
			if err := l.items(from, min(from+size, n)); err != nil {
				return err
			}
		}
		return nil
	}
}

// thenFail is send followed by a stream that ends with err.
func thenFail(send func(lister) error, err error) func(lister) error {
	return func(l lister) error {
		if e := send(l); e != nil {
			return e
		}
		return err
	}
}

// failing is a stream that ends with err before any chunk.
func failing(err error) func(lister) error { return func(lister) error { return err } }

// listRoute is one of the streamed routes, with what its fixture item i must render as.
type listRoute struct {
	path, message, kind string
	// number is a numeric field of the item and its value for fixture item i.
	number      string
	numberValue func(i int) float64
	hasUser     bool
}

var listRoutes = []listRoute{
	{"/v1/analytics/subscriptions?from=2026-01-01&to=2026-01-31", "Subscriptions retrieved", "analyticsSubscription",
		"until", func(i int) float64 { return 1767225600 + float64(i) }, true},
	{"/v1/analytics/one-time-payments?from=2026-01-01&to=2026-01-31", "One-time payments retrieved", "analyticsOneTimePayment",
		"unitsBefore", func(i int) float64 { return float64(10 * i) }, true},
	{"/v1/analytics/tenants?from=2026-01-01&to=2026-01-31", "Tenants retrieved", "analyticsTenant",
		"paymentFailedCount", func(i int) float64 { return float64(i) }, false},
}

var readKey = map[string]string{"X-API-KEY": "k", "X-API-KEY-TYPE": "read", "X-CLIENT-ID": "app"}

// Field lists transcribed from the published interface ("Tenant", "Address", "User", "Analytics items") in
// its order, each with its documented JSON type ("documented types that look odd" included). A
// type naming another shape is that object; "?" allows null, "[]" is an array of it.
const (
	userFields = "id:string appId:string language:string salutation:string salutationOther:string acceptedNewsletter:boolean " +
		"acceptedNewsletterDate:string lastAskedNewsletterSignUp:string newsletterMemberId:string name:string given_name:string " +
		"family_name:string middle_name:string nickname:string preferred_username:string profile:string picture:string " +
		"website:string email:string email_verified:boolean gender:string other_gender:string birthdate:string zoneinfo:string " +
		"locale:string phone_number:string phone_number_verified:boolean freezed:boolean deleted:boolean"
	tenantFields = "id:string name:string pspxCustomerId:string pspxPriceId:string pspxProductId:string pspxSubscriptionId:string " +
		"pspxTrialingPriceId:string pspxTrialingProductId:string pspxTrialingSubscriptionId:string pspxCheckoutSessionId:string " +
		"pspxDefaultPaymentMethodId:string pspxSubscriptionCancelAtPeriodEnd:boolean pspxSubscriptionCancelAt:string " +
		"pspxPaymentMethod:string mode:string description:string pspxOneTimePaymentValidThru:string freezedDueFailedPayment:boolean " +
		"paidUntil:string freeUntil:string paidUnits:string freeUnits:string companyName:string companyVATId:string " +
		"companyTaxType:string companyTaxExempt:string isBusinessCustomer:boolean isInvoicePending:boolean freezed:boolean " +
		"paymentFailed:boolean paymentFailedCount:number paymentFailedDate:string deleted:boolean"
)

var shapes = map[string]string{
	"analyticsSubscription": "id:string paid:boolean test:boolean cancelled:boolean until:number pspxSubscriptionId:string " +
		"pspxPriceId:string pspxCustomerId:string pspxCouponId:string userId:string newsletterMemberId:string appId:string " +
		"tenantId:string user:user?",
	"analyticsOneTimePayment": "id:string paid:boolean test:boolean pspxPriceId:string units:number unitsBefore:number " +
		"pspxCustomerId:string pspxCouponId:string newsletterMemberId:string user:user?",
	"analyticsTenant": tenantFields + " tenantAddresses:address[] users:tenantUser[]",
	"user":            userFields + " tenantId:boolean tenant:tenant?",
	"tenant":          tenantFields,
	"tenantUser": userFields + " verified_by_admin:boolean idpA_email_verified:boolean idpB_email_verified:boolean " +
		"idpC_email_verified:boolean idpD_email_verified:boolean lastSignInAt:boolean lastSignInIp:boolean tenantId:boolean password:string",
	"address": "id:string name:string city:string country:string line1:string line2:string postal_code:string state:string type:string deleted:boolean",
}

func jsonTypeOf(v any) string {
	switch v.(type) {
	case string:
		return "string"
	case float64:
		return "number"
	case bool:
		return "boolean"
	case nil:
		return "null"
	case []any:
		return "array"
	}
	return "object"
}

// assertShape fails unless raw, found at `at`, is of the given shape: every field present, in the
// documented order, of its documented type, and nothing else.
func assertShape(t *testing.T, at string, raw json.RawMessage, shape string) {
	t.Helper()
	shape, nullable := strings.CutSuffix(shape, "?")
	if nullable && string(raw) == "null" {
		return
	}
	if elem, ok := strings.CutSuffix(shape, "[]"); ok {
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil || items == nil {
			t.Fatalf("%s = %s, want an array", at, raw)
		}
		for i, it := range items {
			assertShape(t, fmt.Sprintf("%s[%d]", at, i), it, elem)
		}
		return
	}
	fields, isObject := shapes[shape]
	if !isObject {
		var v any
		if err := json.Unmarshal(raw, &v); err != nil || jsonTypeOf(v) != shape {
			t.Fatalf("%s = %s, want a %s", at, raw, shape)
		}
		return
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		t.Fatalf("%s = %s, want a %s object", at, raw, shape)
	}
	var names []string
	for _, f := range strings.Fields(fields) {
		name, typ, _ := strings.Cut(f, ":")
		v, ok := obj[name]
		if !ok {
			t.Fatalf("%s has no %s: %s", at, name, raw)
		}
		assertShape(t, at+"."+name, v, typ)
		names = append(names, name)
	}
	if got := topLevelKeys(t, raw); !slices.Equal(got, names) {
		t.Fatalf("%s keys %v\nwant %v", at, got, names)
	}
}

// assertList checks a complete list answer of route r holding fixture items 0..n-1.
func assertList(t *testing.T, r listRoute, n int, body []byte) {
	t.Helper()
	if got := topLevelKeys(t, body); strings.Join(got, ",") != "success,message,error,data" {
		t.Fatalf("envelope keys %v", got)
	}
	var envelope struct {
		Success bool            `json:"success"`
		Message string          `json:"message"`
		Error   any             `json:"error"`
		Data    json.RawMessage `json:"data"`
	}
	if err := json.Unmarshal(body, &envelope); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, body)
	}
	if !envelope.Success || envelope.Message != r.message || envelope.Error != nil {
		t.Fatalf("envelope %+v", envelope)
	}
	if got := topLevelKeys(t, envelope.Data); strings.Join(got, ",") != "kind,itemsLength,items" {
		t.Fatalf("data keys %v", got)
	}
	var data struct {
		Kind        string            `json:"kind"`
		ItemsLength any               `json:"itemsLength"`
		Items       []json.RawMessage `json:"items"`
	}
	if err := json.Unmarshal(envelope.Data, &data); err != nil {
		t.Fatal(err)
	}
	if data.Kind != r.kind || data.ItemsLength != float64(n) || len(data.Items) != n {
		t.Fatalf("kind %q itemsLength %#v with %d items, want %q, %d", data.Kind, data.ItemsLength, len(data.Items), r.kind, n)
	}
	for i, raw := range data.Items {
		assertShape(t, fmt.Sprintf("items[%d]", i), raw, r.kind)
		var item map[string]any
		_ = json.Unmarshal(raw, &item)
		// Fixture values at their index: no item lost, repeated or reordered across chunks.
		if item["id"] != itemID(i) || item[r.number] != r.numberValue(i) {
			t.Fatalf("items[%d] = id %v, %s %v; want %s, %v", i, item["id"], r.number, item[r.number], itemID(i), r.numberValue(i))
		}
		if r.hasUser && (item["user"] == nil) != (i%3 == 2) {
			t.Fatalf("items[%d].user = %v", i, item["user"])
		}
	}
}

func TestAStreamedListIsRenderedInsideTheV1EnvelopeWithEveryDocumentedFieldInOrder(t *testing.T) {
	for _, r := range listRoutes {
		// 0 (a head alone), 1, and 250 items in chunks of 128 (a full chunk, then a partial one).
		for _, n := range []int{0, 1, 250} {
			t.Run(fmt.Sprintf("%s with %d items", r.kind, n), func(t *testing.T) {
				h := newHarness(t)
				h.lists.list = sendItems(n, 128, n)
				rec := h.do(t, http.MethodGet, r.path, "", readKey)
				if rec.Code != http.StatusOK || rec.Header().Get("Content-Type") != "application/json" {
					t.Fatalf("%d %s: %s", rec.Code, rec.Header().Get("Content-Type"), rec.Body)
				}
				assertList(t, r, n, rec.Body.Bytes())
			})
		}
	}
}

func TestAListThatFailsBeforeItsFirstChunkAnswersInTheV1ErrorEnvelope(t *testing.T) {
	tests := []struct {
		name   string
		send   func(lister) error
		status int
		text   string
	}{
		{"a bad range", failing(wire(fault.InvalidField("from", "must not be after to"))), 400, "from must not be after to"},
		{"no credentials", failing(status.Error(codes.Unauthenticated, "missing API key")), 401, "missing API key"},
		{"the wrong key type", failing(status.Error(codes.PermissionDenied, "read key required")), 403, "read key required"},
		{"a server failure", failing(status.Error(codes.Internal, "database on fire")), 500, internalMessage},
		// A list always opens with its head; a stream without one has failed.
		{"an end without any chunk", func(lister) error { return nil }, 500, internalMessage},
	}
	for _, r := range listRoutes {
		for _, tc := range tests {
			t.Run(r.kind+" "+tc.name, func(t *testing.T) {
				h := newHarness(t)
				h.lists.list = tc.send
				rec := h.do(t, http.MethodGet, r.path, "", readKey)
				wantV1Failure(t, rec, tc.status, tc.text)
				if strings.Contains(rec.Body.String(), "fire") {
					t.Fatalf("a 500 leaked its cause: %s", rec.Body)
				}
			})
		}
	}
}

// A first chunk the edge cannot render fails before any byte of the list is out, so the answer
// can still be an honest 500 in the envelope instead of a broken connection.
func TestAListWhoseFirstChunkCannotBeRenderedAnswers500(t *testing.T) {
	tests := []struct {
		name string
		send func(lister) error
	}{
		{"items before the head", func(l lister) error { return l.items(0, 2) }},
		{"more items in the head chunk than it announces", sendItems(3, 3, 2)},
		{"a negative length", sendItems(0, 1, -1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.lists.list = tc.send
			rec := h.do(t, http.MethodGet, listRoutes[0].path, "", readKey)
			wantV1Failure(t, rec, http.StatusInternalServerError, internalMessage)
			if !strings.Contains(h.logs.String(), "streamed list failed") {
				t.Fatalf("the cause of the 500 is not logged:\n%s", h.logs)
			}
		})
	}
}

// open sends a read-key GET with request id list-1 to the edge over a real connection and returns
// the response unread.
func open(t *testing.T, srv *httptest.Server, path string) *http.Response {
	t.Helper()
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+path, nil)
	for k, v := range readKey {
		req.Header.Set(k, v)
	}
	req.Header.Set("X-Request-Id", "list-1")
	res, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestAListThatBreaksAfterItsFirstBytesAbortsTheResponseAndLogsOneWarning(t *testing.T) {
	tests := []struct {
		name string
		send func(lister) error
	}{
		{"a failure after the head", thenFail(sendItems(3, 3, 10), status.Error(codes.Internal, "connection to the database lost"))},
		// The last announced item is out, but the stream's end is what makes the list complete.
		{"a failure after the last item", thenFail(sendItems(3, 2, 3), status.Error(codes.Internal, "connection to the database lost"))},
		{"fewer items than announced", sendItems(3, 2, 5)},
		{"more items than announced", sendItems(6, 2, 5)},
		{"more items after the announced ones", sendItems(6, 5, 5)},
		{"a second head", func(l lister) error {
			if err := l.head(2, 0, 1); err != nil {
				return err
			}
			return l.head(2, 1, 2)
		}},
	}
	for _, r := range listRoutes {
		for _, tc := range tests {
			t.Run(r.kind+" "+tc.name, func(t *testing.T) {
				h := newHarness(t)
				h.lists.list = tc.send
				srv := httptest.NewServer(h.handler)
				defer srv.Close()
				res := open(t, srv, r.path)
				body, err := io.ReadAll(res.Body)
				_ = res.Body.Close()
				if err == nil {
					t.Fatalf("read a complete %d response: %s", res.StatusCode, body)
				}
				if json.Valid(body) {
					t.Fatalf("the broken response parses: %s", body)
				}
				srv.Close() // waits for the handler, which logs after the client saw the abort
				lines := logLines(t, h.logs.Bytes())
				if len(lines) != 1 {
					t.Fatalf("want one log line for the aborted request, got %d:\n%s", len(lines), h.logs)
				}
				l := lines[0]
				if l["level"] != "WARN" || l["msg"] != "http request aborted" || l["request_id"] != "list-1" || l["status_sent"] != 200.0 ||
					!strings.Contains(fmt.Sprint(l["reason"]), "streamed list failed") {
					t.Fatalf("log line %v", l)
				}
			})
		}
	}
}

// The edge writes a list as its chunks arrive: the client holds the head before the service
// sends the rest (which waits for exactly that), so the answer is never collected first.
func TestAListReachesTheClientWhileItIsStillStreaming(t *testing.T) {
	for _, r := range listRoutes {
		t.Run(r.kind, func(t *testing.T) {
			h := newHarness(t)
			clientHasHead := make(chan struct{})
			h.lists.list = func(l lister) error {
				if err := l.head(2, 0, 1); err != nil {
					return err
				}
				select {
				case <-clientHasHead:
				case <-l.ctx.Done():
					return l.ctx.Err()
				}
				return l.items(1, 2)
			}
			srv := httptest.NewServer(h.handler)
			defer srv.Close()
			res := open(t, srv, r.path)
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
			assertList(t, r, 2, append(first, rest...))
		})
	}
}

func TestAListsQueryWithBadBytesIsRefusedBeforeTheStreamOpens(t *testing.T) {
	h := newHarness(t)
	h.lists.list = func(lister) error {
		t.Error("the stream was opened")
		return nil
	}
	rec := h.do(t, http.MethodGet, "/v1/analytics/subscriptions?from=%ff&to=2026-01-01", "", readKey)
	if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "from") {
		t.Fatalf("%d %s, want a 400 naming from", rec.Code, rec.Body)
	}
}

// auditPath is the audit log's route for one page.
const auditPath = "/v1/apps/0b0c3f4e-1a2b-4c5d-8e9f-0a1b2c3d4e5f/audit-log?from=2026-01-01&to=2026-01-31&limit=2"

func auditChunk(head *analyticsv1.ListHead, next string, ids ...string) *analyticsv1.AuditEntryChunk {
	c := &analyticsv1.AuditEntryChunk{Head: head, Next: next}
	for _, id := range ids {
		c.Items = append(c.Items, &analyticsv1.AuditEntry{Id: id, Actor: &analyticsv1.AuditActor{}})
	}
	return c
}

// A page of the audit log ends its data with the next page's cursor after the items, from the
// stream's last message (one of its own, or the last chunk of items); the last page, like an
// unpaged list, has no next at all.
func TestAPagedAuditListEndsItsDataWithTheNextCursor(t *testing.T) {
	head := &analyticsv1.ListHead{Kind: "auditEntry", ItemsLength: 2}
	tests := []struct {
		name     string
		chunks   []*analyticsv1.AuditEntryChunk
		keys     string
		wantNext any
	}{
		{"the cursor in the only chunk", []*analyticsv1.AuditEntryChunk{auditChunk(head, "Y3Vyc29y", "a", "b")}, "kind,itemsLength,items,next", "Y3Vyc29y"},
		{"the cursor in a chunk of its own", []*analyticsv1.AuditEntryChunk{auditChunk(head, "", "a", "b"), auditChunk(nil, "Y3Vyc29y")}, "kind,itemsLength,items,next", "Y3Vyc29y"},
		{"the last page", []*analyticsv1.AuditEntryChunk{auditChunk(head, "", "a"), auditChunk(nil, "", "b")}, "kind,itemsLength,items", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t)
			h.lists.audit = tc.chunks
			rec := h.do(t, http.MethodGet, auditPath, "", readKey)
			if rec.Code != http.StatusOK {
				t.Fatalf("%d: %s", rec.Code, rec.Body)
			}
			var envelope struct {
				Data json.RawMessage `json:"data"`
			}
			if err := json.Unmarshal(rec.Body.Bytes(), &envelope); err != nil {
				t.Fatalf("not one JSON object: %v\n%s", err, rec.Body)
			}
			if got := topLevelKeys(t, envelope.Data); strings.Join(got, ",") != tc.keys {
				t.Fatalf("data keys %v, want %s", got, tc.keys)
			}
			var data map[string]any
			_ = json.Unmarshal(envelope.Data, &data)
			if items, _ := data["items"].([]any); len(items) != 2 || data["next"] != tc.wantNext {
				t.Fatalf("data %v, want 2 items and next %v", data, tc.wantNext)
			}
		})
	}
}

// A stream that sends anything after its cursor is broken: the client never gets a list that
// parses.
func TestAnAuditListThatSendsAChunkAfterItsCursorAbortsTheResponse(t *testing.T) {
	h := newHarness(t)
	h.lists.audit = []*analyticsv1.AuditEntryChunk{
		auditChunk(&analyticsv1.ListHead{Kind: "auditEntry", ItemsLength: 2}, "Y3Vyc29y", "a"), auditChunk(nil, "", "b")}
	srv := httptest.NewServer(h.handler)
	defer srv.Close()
	res := open(t, srv, auditPath)
	body, err := io.ReadAll(res.Body)
	_ = res.Body.Close()
	if err == nil || json.Valid(body) {
		t.Fatalf("read a complete %d response (%v): %s", res.StatusCode, err, body)
	}
}
