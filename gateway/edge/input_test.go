package edge

import (
	"net/http"
	"testing"

	"google.golang.org/protobuf/types/known/emptypb"
)

// Bad bytes in any part of a request are a 400 in the route's family naming the field, and never
// reach a backend (where gRPC could not even marshal invalid UTF-8: that used to be a 500).
func TestBadBytesAreRefusedInTheRoutesFamilyNamingTheField(t *testing.T) {
	key := map[string]string{"X-API-KEY": "k", "X-API-KEY-TYPE": "write", "X-CLIENT-ID": "app"}
	tests := []struct {
		name, method, target, body string
		headers                    map[string]string
		api                        bool // /api/v1 family
		field, message             string
	}{
		{"invalid UTF-8 in a path id", "GET", "/v1/users/%ff", "", key, false, "userId", "userId must be valid UTF-8"},
		{"NUL in a path id", "GET", "/v1/tenants/a%00b", "", key, false, "tenantId", "tenantId must not contain NUL characters"},
		{"invalid UTF-8 in the JWKS app id", "GET", "/apps/%c3%28/.well-known/jwks.json", "", nil, true, "appId", "appId must be valid UTF-8"},
		// Route 8 lives under /api/v1 but answers in the /v1 family, so the query is judged after routing.
		{"invalid UTF-8 in a query field", "GET", "/api/v1/analytics/sign-ins?from=%ff&to=2026-01-01", "", key, false, "from", "from must be valid UTF-8"},
		{"malformed escape in the query", "GET", "/api/v1/analytics/sign-ins?from=%zz", "", key, false, "query", "query: not a valid query string (malformed escape or separator)"},
		{"control character in an ignored query parameter", "GET", "/v1/tenants/t1?test=%1b", "", key, false, "test", "test must not contain control characters"},
		{"NUL in a route 17 body field", "PUT", "/v1/tenants/t1", `{"name":"ACME\u0000"}`, key, false, "name", "name must not contain NUL characters"},
		{"control character in a nested address", "PUT", "/v1/tenants/t1", `{"tenant":{"shippingAddress":{"line1":"a\u001bb"}}}`, key, false, "tenant.shippingAddress.line1", "tenant.shippingAddress.line1 must not contain control characters"},
		{"newline in a single-line tenant field", "PUT", "/v1/tenants/t1", `{"companyName":"a\nb"}`, key, false, "companyName", "companyName must not contain control characters"},
		{"raw invalid UTF-8 in a body string", "PUT", "/v1/tenants/t1", "{\"tenant\":{\"name\":\"A\xffB\"}}", key, false, "tenant.name", "tenant.name must be valid UTF-8"},
		{"raw invalid UTF-8 in a token body", "POST", "/api/v1/tokens", "{\"code\":\"\xc3\"}", nil, true, "code", "code must be valid UTF-8"},
		{"non-ASCII API key", "GET", "/v1/tenants/t1", "", map[string]string{"X-API-KEY": "k\xff", "X-API-KEY-TYPE": "read", "X-CLIENT-ID": "app"}, false, "X-API-KEY", "X-API-KEY must be printable ASCII"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			headers := map[string]string{"Content-Type": "application/json"}
			for k, v := range tt.headers {
				headers[k] = v
			}
			rec := h.do(t, tt.method, tt.target, tt.body, headers)
			if tt.api {
				wantAPIFailure(t, rec, http.StatusBadRequest, tt.field, "[E4000]", "Bad Request")
			} else {
				wantV1Failure(t, rec, http.StatusBadRequest, tt.message)
			}
			for _, b := range []*fakeBackend{h.identity, h.tenant, h.analytics} {
				if n := len(b.received()); n != 0 {
					t.Errorf("a backend received %d calls, want none", n)
				}
			}
		})
	}
}

// The description is declared multi-line (proto option), so lines pass the edge.
func TestMultiLineDescriptionPassesTheEdge(t *testing.T) {
	h := newHarness(t)
	h.tenant.program(mUpdateTenant, answer{resp: &emptypb.Empty{}})
	rec := h.do(t, "PUT", "/v1/tenants/t1", `{"description":"first line\r\n\tsecond"}`, jsonHeader)
	if rec.Code != http.StatusOK {
		t.Fatalf("status = %d, body %s", rec.Code, rec.Body.String())
	}
}

// A body the decoder refuses is answered with the field or rule, never the decoder's text.
func TestBodyDecodingFailuresNameTheFieldOrRule(t *testing.T) {
	tests := []struct {
		name, target, body string
		api                bool
		field, message     string
	}{
		{"malformed JSON", "/v1/tenants/t1", `{"name":`, false, "body", "body: not valid JSON"},
		{"not JSON at all", "/v1/tenants/t1", `name=ACME`, false, "body", "body: not valid JSON"},
		{"not an object", "/v1/tenants/t1", `["ACME"]`, false, "body", "body: must be a JSON object"},
		{"number for a string", "/v1/tenants/t1", `{"kind":"tenant","name":5}`, false, "name", "name: must be a string"},
		{"string for a boolean, nested", "/v1/tenants/t1", `{"tenant":{"isBusinessCustomer":"yes"}}`, false, "tenant.isBusinessCustomer", "tenant.isBusinessCustomer: must be a boolean"},
		{"array for an address", "/v1/tenants/t1", `{"shippingAddress":[]}`, false, "shippingAddress", "shippingAddress: must be an object"},
		{"field given twice", "/v1/tenants/t1", `{"name":"a","name":"b"}`, false, "name", "name: given more than once"},
		{"wrong type on the token route", "/api/v1/tokens", `{"grant_type":["authorization_code"]}`, true, "grant_type", ""},
		{"malformed JSON on the token route", "/api/v1/tokens", `{`, true, "body", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			method := "PUT"
			if tt.api {
				method = "POST"
			}
			rec := h.do(t, method, tt.target, tt.body, jsonHeader)
			if tt.api {
				wantAPIFailure(t, rec, http.StatusBadRequest, tt.field, "[E4000]", "Bad Request")
			} else {
				wantV1Failure(t, rec, http.StatusBadRequest, tt.message)
			}
		})
	}
}

func TestBadAuthorizationHeaderIsNamed(t *testing.T) {
	h := newHarness(t)
	rec := h.do(t, "GET", "/v1/users/me", "", map[string]string{"Authorization": "Bearer \x80"})
	wantV1Failure(t, rec, http.StatusBadRequest, "Authorization must be printable ASCII")
}
