package edge

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/gateway/login"
	"github.com/berthhq/berth/gateway/recovery"
	"github.com/berthhq/berth/pkg/fault"
)

// parserText are fragments of Go, protobuf, JSON, gRPC and grpc-gateway error texts. None may ever
// reach a caller: error bodies name the field or rule instead.
var parserText = []string{
	"proto:", "unexpected EOF", "http: ", "invalid character", "json:", "grpc:", "rpc error",
	"type mismatch", "parsing field", "invalid URL escape", "syntax error", "cannot unmarshal",
	"unexpected token", "invalid UTF-8", "too many values",
}

// FuzzEdgeRequest drives the real edge handler with arbitrary requests (method, request target,
// credentials headers, media type, body) as net/http would hand them over, against backends that
// answer every RPC with a field-less 400. Whatever arrives, the edge must answer below 500, in
// JSON, in one of the two error envelopes when it fails, and without parser or runtime text. A
// request net/http itself refuses to parse never reaches a handler and is skipped.
func FuzzEdgeRequest(f *testing.F) {
	seeds := []struct {
		method, target, apiKey, auth, contentType string
		body                                      []byte
	}{
		{"GET", "/v1/users/%ff", "k", "", "", nil},
		{"GET", "/v1/users/%zz", "k", "", "", nil},
		{"GET", "/v1/tenants/a%00b?test=true", "k", "", "", nil},
		{"GET", "/apps/%c3%28/.well-known/jwks.json", "", "", "", nil},
		{"GET", "/apps/\xff/.well-known/openid-configuration", "", "", "", nil},
		{"GET", "/api/v1/analytics/sign-ins?from=%ff&to=%zz", "k", "", "", nil},
		{"GET", "/api/v1/analytics/sign-ins?from=a&from=b;c", "k", "", "", nil},
		{"PUT", "/v1/tenants/t1", "k", "", "application/json", []byte(`{"name":"ACME\u0000","shippingAddress":{"line1":"\u001b"}}`)},
		{"PUT", "/v1/tenants/t1", "k", "", "application/json", []byte("{\"tenant\":{\"name\":\"A\xffB\"}}")},
		{"PUT", "/v1/tenants/t1", "k", "", "text/plain", []byte(`{"name":5}`)},
		{"PUT", "/v1/tenants/t1", "k", "", "", []byte(`{"name":`)},
		{"PUT", "/v1/tenants/t1", "k", "", "application/json", []byte(`{"tenant":{"tenant":{"isBusinessCustomer":"x"}}}`)},
		{"PUT", "/v1/users/u1", "k", "", "application/json", []byte(`{"nickname":["a"],"nickname":"b"}`)},
		{"POST", "/api/v1/tokens", "", "", "application/json", []byte(`{"grant_type":{"x":1},"code":"\ud800"}`)},
		{"POST", "/api/v1/tokens", "", "", "application/json", []byte("{\"code\":\"\xc3\"}")},
		{"PUT", "/api/v1/internal/projects/p/apps/a/api-keys/k", "", "Bearer \x80", "application/json", []byte(`{"description":"a\nb"}`)},
		{"POST", "/v1/users/u1/referral-invites", "k\xff", "", "application/json; charset=utf-8", []byte(`[]`)},
		{"DELETE", "/v1/users/me?x=%", "", "Bearer t", "", nil},
		{"PATCH", "/nowhere/%ff", "", "", "application/xml", []byte(`<x/>`)},
		{"POST", "/login?client_id=%00", "", "", "application/x-www-form-urlencoded", []byte("email=a%00&password=x")},
	}
	for _, s := range seeds {
		f.Add(s.method, s.target, s.apiKey, s.auth, s.contentType, s.body)
	}
	h := newHarness(f)
	fallback := &answer{err: wire(fault.Invalid("", "refused by the fake backend"))}
	for _, b := range []*fakeBackend{h.identity, h.tenant, h.analytics} {
		b.fallback = fallback
	}
	f.Fuzz(func(t *testing.T, method, target, apiKey, auth, contentType string, body []byte) {
		req := parseLikeNetHTTP(method, target, apiKey, auth, contentType, body)
		if req == nil {
			return // net/http answers this itself (see docs/api.md, "Bad bytes")
		}
		rec := httptest.NewRecorder()
		done := make(chan struct{})
		go func() { defer close(done); h.handler.ServeHTTP(rec, req) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second): // a hang: Go's fuzzing reports none by itself
			panic(fmt.Sprintf("HANG %q %q %q %q %q %q", method, target, apiKey, auth, contentType, body))
		}
		checkEdgeAnswer(t, req, rec)
	})
}

// parseLikeNetHTTP builds the request the way net/http's server does, from the wire form; nil when
// the server would refuse it before any handler.
func parseLikeNetHTTP(method, target, apiKey, auth, contentType string, body []byte) *http.Request {
	var wire bytes.Buffer
	fmt.Fprintf(&wire, "%s %s HTTP/1.1\r\nHost: edge.test\r\n", method, target)
	for name, v := range map[string]string{"X-API-KEY": apiKey, "X-API-KEY-TYPE": "write", "X-CLIENT-ID": "app", "Authorization": auth, "Content-Type": contentType} {
		if v != "" {
			fmt.Fprintf(&wire, "%s: %s\r\n", name, v)
		}
	}
	fmt.Fprintf(&wire, "Content-Length: %d\r\n\r\n", len(body))
	wire.Write(body)
	req, err := http.ReadRequest(bufio.NewReader(&wire))
	if err != nil || !validHeaderValues(req.Header) {
		return nil
	}
	req.RemoteAddr = "192.0.2.1:40000"
	return req
}

// validHeaderValues mirrors the server's header check that http.ReadRequest leaves out: field
// values with control characters other than tab are refused with a 400 of net/http's own.
func validHeaderValues(h http.Header) bool {
	for _, vs := range h {
		for _, v := range vs {
			for i := range len(v) {
				if (v[i] < 0x20 && v[i] != '\t') || v[i] == 0x7f {
					return false
				}
			}
		}
	}
	return true
}

func checkEdgeAnswer(t *testing.T, req *http.Request, rec *httptest.ResponseRecorder) {
	t.Helper()
	if rec.Code >= 500 {
		t.Fatalf("%s %q answered %d: %s", req.Method, req.RequestURI, rec.Code, rec.Body.String())
	}
	if req.URL.Path == login.Path || req.URL.Path == recovery.Path {
		return // the hosted pages answer HTML; FuzzLoginForm and FuzzRecoveryForm check them
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("%s %q: Content-Type %q, body %q", req.Method, req.RequestURI, ct, rec.Body.String())
	}
	var body map[string]any
	if err := json.Unmarshal(rec.Body.Bytes(), &body); err != nil {
		t.Fatalf("%s %q: body is not a JSON object: %q", req.Method, req.RequestURI, rec.Body.String())
	}
	for _, p := range parserText {
		if strings.Contains(rec.Body.String(), p) {
			t.Fatalf("%s %q: body carries parser text %q: %s", req.Method, req.RequestURI, p, rec.Body.String())
		}
	}
	if rec.Code < 400 {
		return
	}
	if errs, ok := body["errors"].([]any); ok {
		item, _ := errs[0].(map[string]any)
		if len(errs) != 1 || len(body) != 1 || item["code"] == nil || item["message"] == nil || item["validation"] == nil {
			t.Fatalf("%s %q: malformed /api/v1 error: %s", req.Method, req.RequestURI, rec.Body.String())
		}
		return
	}
	if body["success"] != false || body["message"] != nil || body["data"] != nil || body["error"] == "" || len(body) != 4 {
		t.Fatalf("%s %q: malformed /v1 error: %s", req.Method, req.RequestURI, rec.Body.String())
	}
}
