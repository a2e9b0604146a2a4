package edge

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/fault"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

const (
	mGetTenant       = "/berth.tenant.v1.TenantService/GetTenant"
	mUpdateTenant    = "/berth.tenant.v1.TenantService/UpdateTenant"
	mListUserRoles   = "/berth.identity.v1.IdentityService/ListUserRoles"
	mGetUser         = "/berth.identity.v1.IdentityService/GetUser"
	mGetPublicKey    = "/berth.identity.v1.IdentityService/GetPublicKey"
	mSetAccessStatus = "/berth.identity.v1.IdentityService/SetAccessStatus"
	mUpdateUser      = "/berth.identity.v1.IdentityService/UpdateUser"
)

func TestV1SuccessEnvelopeWrapsResponseOrNullData(t *testing.T) {
	tests := []struct {
		name        string
		method      string // gRPC method programmed
		backend     func(*harness) *fakeBackend
		resp        proto.Message
		httpMethod  string
		path        string
		body        string
		wantMessage string
		wantData    any
	}{
		{
			name: "route 5 tenant read", method: mGetTenant, backend: func(h *harness) *fakeBackend { return h.tenant },
			resp:       &tenantv1.Tenant{Kind: "tenant", Id: "t1", Name: "Acme", PaymentFailedCount: 2},
			httpMethod: http.MethodGet, path: "/v1/tenants/t1", wantMessage: "Tenant retrieved",
			wantData: map[string]any{"kind": "tenant", "id": "t1", "name": "Acme", "paymentFailedCount": float64(2)},
		},
		{
			name: "route 11 user roles", method: mListUserRoles, backend: func(h *harness) *fakeBackend { return h.identity },
			resp:       &identityv1.UserRoleList{Kind: "userRole", ItemsLength: 1, Items: []*identityv1.UserRole{{Id: "r1", Name: "admin"}}},
			httpMethod: http.MethodGet, path: "/v1/apps/a1/user-roles", wantMessage: "User roles retrieved",
			wantData: map[string]any{"kind": "userRole", "itemsLength": float64(1), "items": []any{map[string]any{"id": "r1", "name": "admin"}}},
		},
		{
			name: "route 14 user read", method: mGetUser, backend: func(h *harness) *fakeBackend { return h.identity },
			resp:       &identityv1.User{Kind: "user", Id: "u1", Email: "a@example.com"},
			httpMethod: http.MethodGet, path: "/v1/users/a@example.com", wantMessage: "User retrieved",
			wantData: map[string]any{"kind": "user", "id": "u1", "email": "a@example.com"},
		},
		{
			name: "route 15 public key", method: mGetPublicKey, backend: func(h *harness) *fakeBackend { return h.identity },
			resp:       &identityv1.PublicKey{Kind: "publicKey", PublicKey: "-----BEGIN PUBLIC KEY-----"},
			httpMethod: http.MethodGet, path: "/v1/apps/a1/public-keys", wantMessage: "Public key retrieved",
			wantData: map[string]any{"kind": "publicKey", "publicKey": "-----BEGIN PUBLIC KEY-----"},
		},
		{
			name: "route 16 access status", method: mSetAccessStatus, backend: func(h *harness) *fakeBackend { return h.identity },
			resp: &emptypb.Empty{}, httpMethod: http.MethodPut, path: "/v1/apps/a1/users/u1/access-status/0",
			wantMessage: "Access status updated", wantData: nil,
		},
		{
			name: "route 17 tenant update", method: mUpdateTenant, backend: func(h *harness) *fakeBackend { return h.tenant },
			resp: &emptypb.Empty{}, httpMethod: http.MethodPut, path: "/v1/tenants/t1", body: `{"kind":"tenant","name":"n"}`,
			wantMessage: "Tenant updated", wantData: nil,
		},
		{
			name: "route 18 user update", method: mUpdateUser, backend: func(h *harness) *fakeBackend { return h.identity },
			resp: &emptypb.Empty{}, httpMethod: http.MethodPut, path: "/v1/users/u1", body: `{"user":{"name":"n"}}`,
			wantMessage: "User updated", wantData: nil,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			tt.backend(h).program(tt.method, answer{resp: tt.resp})
			rec := h.do(t, tt.httpMethod, tt.path, tt.body, jsonHeader)
			if rec.Code != http.StatusOK {
				t.Fatalf("status = %d, want 200; body %s", rec.Code, rec.Body.String())
			}
			if got := rec.Header().Get("Content-Type"); got != "application/json" {
				t.Errorf("Content-Type = %q, want application/json", got)
			}
			if keys := strings.Join(topLevelKeys(t, rec.Body.Bytes()), ","); keys != "success,message,error,data" {
				t.Errorf("key order = %s, want success,message,error,data", keys)
			}
			body := decode(t, rec)
			if body["success"] != true || body["message"] != tt.wantMessage || body["error"] != nil {
				t.Errorf("envelope = %v", body)
			}
			if tt.wantData == nil {
				if body["data"] != nil {
					t.Errorf("data = %v, want null", body["data"])
				}
				return
			}
			data, ok := body["data"].(map[string]any)
			if !ok {
				t.Fatalf("data = %v, want an object", body["data"])
			}
			for k, want := range tt.wantData.(map[string]any) {
				assertJSON(t, data[k], want)
			}
			if got := tt.backend(h).only(t).method; got != tt.method {
				t.Errorf("backend method = %s, want %s", got, tt.method)
			}
		})
	}
}

func TestResponsesShowEveryFieldWithZeroValues(t *testing.T) {
	h := newHarness(t)
	h.identity.program(mGetUser, answer{resp: &identityv1.User{Id: "u1"}})
	h.tenant.program(mGetTenant, answer{resp: &tenantv1.Tenant{Id: "t1"}})

	user := decode(t, h.do(t, http.MethodGet, "/v1/users/u1", "", nil))["data"].(map[string]any)
	if len(user) != 31 {
		t.Errorf("user has %d keys, want all 31: %v", len(user), user)
	}
	for k, want := range map[string]any{"id": "u1", "kind": "", "tenantId": false, "given_name": "", "email_verified": false} {
		if got, ok := user[k]; !ok || got != want {
			t.Errorf("user[%q] = %v (present %v), want %v", k, got, ok, want)
		}
	}

	tenant := decode(t, h.do(t, http.MethodGet, "/v1/tenants/t1", "", nil))["data"].(map[string]any)
	fields := (&tenantv1.Tenant{}).ProtoReflect().Descriptor().Fields()
	for i := range fields.Len() {
		if _, ok := tenant[string(fields.Get(i).Name())]; !ok {
			t.Errorf("tenant field %s missing", fields.Get(i).Name())
		}
	}
	assertJSON(t, tenant["shippingAddress"], nil)
	assertJSON(t, tenant["users"], []any{})
	assertJSON(t, tenant["paymentFailedCount"], 0)
}

func TestBackendErrorsMapToV1Statuses(t *testing.T) {
	tests := []struct {
		name       string
		err        error
		wantStatus int
		wantError  string
	}{
		{"invalid argument", wire(fault.Invalid("accessStatus", "accessStatus must be 0 or 1")), 400, "accessStatus must be 0 or 1"},
		{"not found answers like bad input", wire(fault.NotFound("user not found")), 400, "user not found"},
		{"out of range", status.Error(codes.OutOfRange, "too far"), 400, "too far"},
		{"failed precondition", status.Error(codes.FailedPrecondition, "no running subscription"), 400, "no running subscription"},
		{"already exists", status.Error(codes.AlreadyExists, "exists"), 400, "exists"},
		{"unauthenticated", wire(fault.Unauthenticated("invalid API key")), 401, "invalid API key"},
		{"permission denied", wire(fault.Forbidden("read key cannot write")), 403, "read key cannot write"},
		{"internal hides detail", status.Error(codes.Internal, "pq: connection refused at 10.0.0.7"), 500, "Internal Server Error"},
		{"unknown hides detail", errors.New("boom secret-ish detail"), 500, "Internal Server Error"},
		{"unavailable", status.Error(codes.Unavailable, "db down"), 500, "Internal Server Error"},
		{"deadline exceeded", status.Error(codes.DeadlineExceeded, "slow"), 500, "Internal Server Error"},
		{"resource exhausted is a limit the caller reached", status.Error(codes.ResourceExhausted, "daily invite limit reached"), 400, "daily invite limit reached"},
		{"unimplemented", status.Error(codes.Unimplemented, "not yet"), 500, "Internal Server Error"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.identity.program(mSetAccessStatus, answer{err: tt.err})
			rec := h.do(t, http.MethodPut, "/v1/apps/a1/users/u1/access-status/0", "", map[string]string{"X-Request-Id": "req-" + strings.ReplaceAll(tt.name, " ", "-")})
			wantV1Failure(t, rec, tt.wantStatus, tt.wantError)
			logged := h.logs.String()
			if tt.wantStatus == 500 {
				// The real cause is in the log, tied to the request id.
				cause := status.Convert(tt.err).Message()
				if !strings.Contains(logged, cause) || !strings.Contains(logged, `"request_id":"req-`) {
					t.Errorf("500 cause or request id not logged: %s", logged)
				}
			}
		})
	}
}

func TestRoutingErrorsAnswerInThePathsFamily(t *testing.T) {
	tests := []struct {
		name   string
		method string
		path   string
		api    bool
		status int
	}{
		{"unknown /v1 path", http.MethodGet, "/v1/nothing-here", false, 404},
		{"unknown root path", http.MethodGet, "/", false, 404},
		{"unknown /api path", http.MethodGet, "/api/v1/nothing-here", true, 404},
		{"wrong method on /v1 route", http.MethodDelete, "/v1/tenants/t1", false, 405},
		{"POST on GET-only route", http.MethodPost, "/v1/apps/a1/public-keys", false, 405},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			rec := h.do(t, tt.method, tt.path, "", nil)
			if tt.api {
				wantAPIFailure(t, rec, tt.status, "", "[E4000]", http.StatusText(tt.status))
			} else {
				wantV1Failure(t, rec, tt.status, http.StatusText(tt.status))
			}
			if n := len(h.identity.received()) + len(h.tenant.received()); n != 0 {
				t.Errorf("backends received %d calls, want none", n)
			}
		})
	}
}

func TestRequestMediaTypes(t *testing.T) {
	tests := []struct {
		name        string
		path        string
		contentType string
		body        string
		wantStatus  int
		wantAPI     bool
	}{
		{"json with charset", "/v1/tenants/t1", "application/json; charset=utf-8", `{"name":"n"}`, 200, false},
		{"json upper case", "/v1/tenants/t1", "Application/JSON", `{"name":"n"}`, 200, false},
		{"text/plain JSON body", "/v1/tenants/t1", "text/plain", `{"name":"n"}`, 200, false},
		{"no content type JSON body", "/v1/tenants/t1", "", `{"name":"n"}`, 200, false},
		{"no content type non-JSON body", "/v1/tenants/t1", "", `name=n`, 400, false},
		{"text/plain non-JSON body", "/v1/tenants/t1", "text/plain", `hello`, 400, false},
		{"xml refused", "/v1/tenants/t1", "application/xml", `<name>n</name>`, 400, false},
		{"form refused", "/v1/tenants/t1", "application/x-www-form-urlencoded", `name=n`, 400, false},
		{"json with malformed parameter", "/v1/tenants/t1", "application/json; charset", `{"name":"n"}`, 200, false},
		{"malformed media type refused", "/v1/tenants/t1", "/json", `{"name":"n"}`, 400, false},
		{"xml on /api path refused in api shape", "/api/v1/tokens", "application/xml", `<a/>`, 400, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.tenant.program(mUpdateTenant, answer{resp: &emptypb.Empty{}})
			headers := map[string]string{}
			if tt.contentType != "" {
				headers["Content-Type"] = tt.contentType
			}
			method := http.MethodPut
			if tt.wantAPI {
				method = http.MethodPost
			}
			rec := h.do(t, method, tt.path, tt.body, headers)
			switch {
			case tt.wantAPI:
				wantAPIFailure(t, rec, tt.wantStatus, "Content-Type", "[E4000]", "Bad Request")
			case tt.wantStatus == 200:
				if rec.Code != 200 {
					t.Fatalf("status = %d, want 200; body %s", rec.Code, rec.Body.String())
				}
				patch := h.tenant.only(t).req.(*tenantv1.UpdateTenantRequest).GetPatch()
				if patch.GetName() != "n" {
					t.Errorf("backend patch = %v, want name n", patch)
				}
			default:
				if rec.Code != tt.wantStatus {
					t.Fatalf("status = %d, want %d; body %s", rec.Code, tt.wantStatus, rec.Body.String())
				}
				decode(t, rec) // still a JSON object
				if n := len(h.tenant.received()); n != 0 {
					t.Errorf("backend received %d calls, want none", n)
				}
			}
		})
	}
}

func TestBodyLimitIsOneMebibyte(t *testing.T) {
	// A JSON document of exactly n bytes: {"name":"aaa…"}.
	doc := func(n int) string { return `{"name":"` + strings.Repeat("a", n-len(`{"name":""}`)) + `"}` }
	tests := []struct {
		name       string
		size       int
		wantStatus int
	}{
		{"at the limit", maxBody, 200},
		{"one byte over", maxBody + 1, 400},
		{"far over", 4 * maxBody, 400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.tenant.program(mUpdateTenant, answer{resp: &emptypb.Empty{}})
			rec := h.do(t, http.MethodPut, "/v1/tenants/t1", doc(tt.size), jsonHeader)
			if tt.wantStatus == 200 {
				if rec.Code != 200 {
					t.Fatalf("status = %d, want 200; body %s", rec.Code, rec.Body.String())
				}
				return
			}
			wantV1Failure(t, rec, 400, "body: larger than 1 MiB")
			if n := len(h.tenant.received()); n != 0 {
				t.Errorf("backend received %d calls, want none", n)
			}
		})
	}
}

func TestUnknownJSONFieldsAndQueryParametersAreIgnored(t *testing.T) {
	h := newHarness(t)
	h.tenant.program(mUpdateTenant, answer{resp: &emptypb.Empty{}})
	h.identity.program(mGetUser, answer{resp: &identityv1.User{Id: "u1"}})

	rec := h.do(t, http.MethodPut, "/v1/tenants/t1?test=true&foo=bar",
		`{"kind":"tenant","name":"n","paidUntil":"2099-01-01","bogus":{"x":1},"shippingAddress":{"city":"c","type":"shipping","deleted":true}}`, jsonHeader)
	if rec.Code != 200 {
		t.Fatalf("status = %d, want 200; body %s", rec.Code, rec.Body.String())
	}
	want := &tenantv1.UpdateTenantRequest{TenantId: "t1", Patch: &tenantv1.TenantPatch{
		Kind: proto.String("tenant"), Name: proto.String("n"), ShippingAddress: &tenantv1.AddressPatch{City: proto.String("c")},
	}}
	if got := h.tenant.only(t).req; !proto.Equal(got, want) {
		t.Errorf("backend request = %v, want %v", got, want)
	}

	if rec := h.do(t, http.MethodGet, "/v1/users/u1?test=true", "", nil); rec.Code != 200 {
		t.Errorf("GET with ?test=true: status = %d; body %s", rec.Code, rec.Body.String())
	}
}

func TestRoute18AcceptsPutAndPostWithTestInQueryOrBody(t *testing.T) {
	tests := []struct {
		name   string
		method string
		target string
		body   string
		want   *identityv1.UpdateUserRequest
	}{
		{
			name: "PUT with test in query", method: http.MethodPut, target: "/v1/users/u1?test=true",
			body: `{"user":{"name":"Ann","acceptedNewsletter":true}}`,
			want: &identityv1.UpdateUserRequest{UserId: "u1", Test: proto.Bool(true), Body: &identityv1.UserUpdateBody{
				User: &identityv1.UserPatch{Name: proto.String("Ann"), AcceptedNewsletter: proto.Bool(true)}}},
		},
		{
			name: "POST alias with test in body", method: http.MethodPost, target: "/v1/users/u1",
			body: `{"user":{"given_name":"Ann"},"test":true}`,
			want: &identityv1.UpdateUserRequest{UserId: "u1", Body: &identityv1.UserUpdateBody{
				User: &identityv1.UserPatch{GivenName: proto.String("Ann")}, Test: proto.Bool(true)}},
		},
		{
			name: "POST without test", method: http.MethodPost, target: "/v1/users/u1",
			body: `{"user":{"email":"a@example.com"}}`,
			want: &identityv1.UpdateUserRequest{UserId: "u1", Body: &identityv1.UserUpdateBody{
				User: &identityv1.UserPatch{Email: proto.String("a@example.com")}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.identity.program(mUpdateUser, answer{resp: &emptypb.Empty{}})
			rec := h.do(t, tt.method, tt.target, tt.body, jsonHeader)
			if rec.Code != 200 {
				t.Fatalf("status = %d, want 200; body %s", rec.Code, rec.Body.String())
			}
			if got := h.identity.only(t).req; !proto.Equal(got, tt.want) {
				t.Errorf("backend request = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestRoute17FlatAndNestedBodiesReachTheBackend(t *testing.T) {
	tests := []struct {
		name string
		body string
		want *tenantv1.TenantPatch
	}{
		{
			name: "flat", body: `{"kind":"tenant","companyName":"Acme","isBusinessCustomer":true,"billingAddress":{"country":"DE"},"test":true}`,
			want: &tenantv1.TenantPatch{Kind: proto.String("tenant"), CompanyName: proto.String("Acme"), IsBusinessCustomer: proto.Bool(true),
				BillingAddress: &tenantv1.AddressPatch{Country: proto.String("DE")}, Test: proto.Bool(true)},
		},
		{
			name: "nested under tenant", body: `{"tenant":{"kind":"tenant","name":"Acme","shippingAddress":{"line1":"Main St 1"}}}`,
			want: &tenantv1.TenantPatch{Tenant: &tenantv1.TenantPatch{Kind: proto.String("tenant"), Name: proto.String("Acme"),
				ShippingAddress: &tenantv1.AddressPatch{Line1: proto.String("Main St 1")}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.tenant.program(mUpdateTenant, answer{resp: &emptypb.Empty{}})
			if rec := h.do(t, http.MethodPut, "/v1/tenants/t1", tt.body, jsonHeader); rec.Code != 200 {
				t.Fatalf("status = %d, want 200; body %s", rec.Code, rec.Body.String())
			}
			want := &tenantv1.UpdateTenantRequest{TenantId: "t1", Patch: tt.want}
			if got := h.tenant.only(t).req; !proto.Equal(got, want) {
				t.Errorf("backend request = %v, want %v", got, want)
			}
		})
	}
}

func TestOnlyCredentialHeadersRequestIDAndTheEdgesClientAddressReachServices(t *testing.T) {
	h := newHarness(t)
	h.identity.program(mGetPublicKey, answer{resp: &identityv1.PublicKey{}})
	rec := h.do(t, http.MethodGet, "/v1/apps/a1/public-keys", "", map[string]string{
		"x-api-key":                            "secret-key",
		"X-API-KEY-Type":                       "read",
		"X-CLIENT-ID":                          "app-1",
		"Authorization":                        "Bearer tok",
		"X-Request-Id":                         "client-req-1",
		"X-Berth-Admin-Token":                  "forged-admin",
		"X-Berth-Service-Token":                "forged-service",
		"Grpc-Metadata-X-Berth-Admin-Token":    "forged-via-prefix",
		"Grpc-Metadata-Anything":               "x",
		"X-Berth-Client-Address":               "198.51.100.9", // forged: the edge sends its own reading
		"Grpc-Metadata-X-Berth-Client-Address": "198.51.100.9",
		"Cookie":                               "session=1",
		"X-Custom":                             "y",
		"Origin":                               "https://shop.example",
	})
	if rec.Code != 200 {
		t.Fatalf("status = %d; body %s", rec.Code, rec.Body.String())
	}
	md := h.identity.only(t).md
	for key, want := range map[string]string{
		"x-api-key":      "secret-key",
		"x-api-key-type": "read",
		"x-client-id":    "app-1",
		"authorization":  "Bearer tok",
		"x-request-id":   "client-req-1",
		"origin":         "https://shop.example",
		// The request's TCP peer (httptest's), no proxy being trusted: what the audit log names.
		authn.MDClientAddress: "192.0.2.1",
	} {
		if got := md.Get(key); len(got) != 1 || got[0] != want {
			t.Errorf("metadata %s = %v, want exactly [%s]", key, got, want)
		}
	}
	// Keys gRPC itself or grpc-gateway always set (grpc-accept-encoding once a compressor is
	// linked in, as the tracing exporter's dependencies do); nothing else may appear.
	allowed := map[string]bool{
		"x-api-key": true, "x-api-key-type": true, "x-client-id": true, "authorization": true, "x-request-id": true, "origin": true,
		"x-forwarded-for": true, "x-forwarded-host": true, ":authority": true, "content-type": true, "user-agent": true,
		"grpc-accept-encoding": true, authn.MDClientAddress: true,
	}
	for key := range md {
		if !allowed[key] {
			t.Errorf("unexpected metadata %q = %v reached the service", key, md.Get(key))
		}
	}
}

func TestNoGrpcMetadataLeaksIntoResponseHeaders(t *testing.T) {
	leaky := answer{header: metadata.Pairs("x-berth-internal", "h"), trailer: metadata.Pairs("x-berth-trailer", "t")}
	tests := []struct {
		name string
		ans  answer
	}{
		{"success", answer{resp: &identityv1.PublicKey{}, header: leaky.header, trailer: leaky.trailer}},
		{"error", answer{err: wire(fault.Forbidden("no")), header: leaky.header, trailer: leaky.trailer}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.identity.program(mGetPublicKey, tt.ans)
			rec := h.do(t, http.MethodGet, "/v1/apps/a1/public-keys", "", map[string]string{"TE": "trailers"})
			for k := range rec.Result().Header {
				lk := strings.ToLower(k)
				if strings.HasPrefix(lk, "grpc-") || strings.Contains(lk, "berth") || lk == "trailer" {
					t.Errorf("response header %s leaked", k)
				}
			}
			for k := range rec.Result().Trailer {
				t.Errorf("response trailer %s leaked", k)
			}
		})
	}
}

func TestEveryResponseCarriesARequestID(t *testing.T) {
	tests := []struct {
		name    string
		method  string
		path    string
		body    string
		headers map[string]string
	}{
		{"success", http.MethodGet, "/v1/apps/a1/public-keys", "", nil},
		{"backend error", http.MethodGet, "/v1/users/u1", "", nil},
		{"unknown path", http.MethodGet, "/v1/nowhere", "", nil},
		{"wrong method", http.MethodPatch, "/v1/tenants/t1", "", nil},
		{"refused media type", http.MethodPut, "/v1/tenants/t1", "<x/>", map[string]string{"Content-Type": "application/xml"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.identity.program(mGetPublicKey, answer{resp: &identityv1.PublicKey{}})
			h.identity.program(mGetUser, answer{err: wire(fault.NotFound("user not found"))})
			if id := h.do(t, tt.method, tt.path, tt.body, tt.headers).Header().Get("X-Request-Id"); len(id) != 32 {
				t.Errorf("minted X-Request-Id = %q, want a 32-hex-digit id", id)
			}
			headers := map[string]string{"X-Request-Id": "abc-123"}
			for k, v := range tt.headers {
				headers[k] = v
			}
			if id := h.do(t, tt.method, tt.path, tt.body, headers).Header().Get("X-Request-Id"); id != "abc-123" {
				t.Errorf("echoed X-Request-Id = %q, want abc-123", id)
			}
		})
	}
}

func TestUnsafeRequestIDIsReplacedBeforeForwarding(t *testing.T) {
	h := newHarness(t)
	h.identity.program(mGetPublicKey, answer{resp: &identityv1.PublicKey{}})
	rec := h.do(t, http.MethodGet, "/v1/apps/a1/public-keys", "", map[string]string{"X-Request-Id": `x" level=error msg=forged`})
	id := rec.Header().Get("X-Request-Id")
	if len(id) != 32 {
		t.Fatalf("X-Request-Id = %q, want a fresh id", id)
	}
	if got := h.identity.only(t).md.Get("x-request-id"); len(got) != 1 || got[0] != id {
		t.Errorf("forwarded x-request-id = %v, want [%s]", got, id)
	}
}

func TestMethodOverridesAreIgnored(t *testing.T) {
	tests := []struct {
		name    string
		headers map[string]string
	}{
		// grpc-gateway honours the override header only on form-encoded POSTs, so this case holds
		// while either WithDisableHTTPMethodOverride or WithDisablePathLengthFallback is set.
		{"X-HTTP-Method-Override", map[string]string{"X-HTTP-Method-Override": "GET", "Content-Type": "application/x-www-form-urlencoded"}},
		{"form POST fallback to GET", map[string]string{"Content-Type": "application/x-www-form-urlencoded"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.tenant.program(mGetTenant, answer{resp: &tenantv1.Tenant{Id: "t1"}})
			rec := h.do(t, http.MethodPost, "/v1/tenants/t1", "", tt.headers)
			wantV1Failure(t, rec, http.StatusMethodNotAllowed, "Method Not Allowed")
			if n := len(h.tenant.received()); n != 0 {
				t.Errorf("backend received %d calls, want none", n)
			}
		})
	}
}

func TestRequestsAreCountedPerResolvedRouteNeverPerPath(t *testing.T) {
	h := newHarness(t)
	h.identity.program(mGetPublicKey, answer{resp: &identityv1.PublicKey{}})
	counter := func(route, code string) float64 {
		return testutil.ToFloat64(httpRequests.WithLabelValues(route, code))
	}
	beforeRoute, beforeUnmatched := counter(mGetPublicKey, "200"), counter("unmatched", "404")
	h.do(t, http.MethodGet, "/v1/apps/a1/public-keys", "", nil)
	h.do(t, http.MethodGet, "/v1/apps/a2/public-keys", "", nil)
	h.do(t, http.MethodGet, "/v1/nowhere/at-all", "", nil)
	if got := counter(mGetPublicKey, "200") - beforeRoute; got != 2 {
		t.Errorf("requests counted for the public-key route = %v, want 2 (both app ids under one label)", got)
	}
	if got := counter("unmatched", "404") - beforeUnmatched; got != 1 {
		t.Errorf("unmatched requests counted = %v, want 1", got)
	}
}

func TestAccessLogNamesRequestButNoSecrets(t *testing.T) {
	h := newHarness(t)
	h.identity.program(mGetPublicKey, answer{resp: &identityv1.PublicKey{}})
	h.do(t, http.MethodGet, "/v1/apps/a1/public-keys", "", map[string]string{
		"X-API-KEY": "very-secret-key", "Authorization": "Bearer very-secret-token", "X-Request-Id": "log-1",
	})
	logged := h.logs.String()
	for _, want := range []string{`"method":"GET"`, `"path":"/v1/apps/a1/public-keys"`, `"status":200`, `"duration_ms":`, `"request_id":"log-1"`} {
		if !strings.Contains(logged, want) {
			t.Errorf("access log lacks %s: %s", want, logged)
		}
	}
	if strings.Contains(logged, "very-secret") {
		t.Errorf("access log leaks a credential: %s", logged)
	}
	if n := strings.Count(logged, `"request_id"`); n != 1 {
		t.Errorf("the access-log line names request_id %d times, want once: %s", n, logged)
	}
}

func TestNewRefusesAMissingBackend(t *testing.T) {
	_, icc := startBackend(t, func(*grpc.Server) {})
	_, err := New(context.Background(), map[string]grpc.ClientConnInterface{"identity": icc}, discard, WithLogin(icc), WithPayment(icc))
	if err == nil || !strings.Contains(err.Error(), "tenant") {
		t.Errorf("New without tenant backend: err = %v, want one naming tenant", err)
	}
}

// Token responses carry secrets: the route declares no_store, and the edge answers every outcome of
// it (success and failure) with Cache-Control: no-store, while other routes are left alone.
func TestTokenRouteAnswersAreNeverStored(t *testing.T) {
	const mExchangeToken = "/berth.identity.v1.TokenService/ExchangeToken"
	body := `{"client_id":"c","grant_type":"authorization_code","code":"x","redirect_uri":"https://a.test/cb"}`
	for _, tt := range []struct {
		name string
		a    answer
		code int
	}{
		{"success", answer{resp: &identityv1.TokenList{}}, http.StatusCreated},
		{"refused exchange", answer{err: wire(fault.Invalid("code", "code is invalid"))}, http.StatusBadRequest},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.identity.program(mExchangeToken, tt.a)
			rec := h.do(t, http.MethodPost, "/api/v1/tokens", body, jsonHeader)
			if rec.Code != tt.code {
				t.Fatalf("status = %d, want %d; body %s", rec.Code, tt.code, rec.Body.String())
			}
			if got := rec.Header().Get("Cache-Control"); got != "no-store" {
				t.Errorf("Cache-Control = %q, want no-store", got)
			}
		})
	}
	h := newHarness(t)
	h.identity.program(mGetUser, answer{resp: &identityv1.User{}})
	if got := h.do(t, http.MethodGet, "/v1/users/u1", "", nil).Header().Get("Cache-Control"); got != "" {
		t.Errorf("user read: Cache-Control = %q, want none (only routes declaring no_store)", got)
	}
}
