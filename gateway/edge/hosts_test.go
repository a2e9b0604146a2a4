package edge

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	edgev1 "github.com/berthhq/berth/proto/edge/v1"
)

// The tests in this file go through a real HTTP server and raw TCP, because what they protect
// happens outside any handler the recorder-based tests reach: the path cleaning of a host's
// http.ServeMux and the refusals of Go's HTTP server itself.

// edgeHosts are the two ways the edge is served: alone (the gateway binary) and behind a host's
// own http.ServeMux that serves other paths too (the all-in-one process: ops endpoints,
// sandboxes, dev pages).
func edgeHosts(h *harness) map[string]http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	mux.Handle("/", h.handler)
	return map[string]http.Handler{"gateway": h.handler, "all-in-one": Front(mux, h.handler)}
}

// serveEdge serves handler as both hosts do, on the edge's listener, and returns its address.
func serveEdge(t *testing.T, handler http.Handler) string {
	t.Helper()
	srv := httptest.NewUnstartedServer(handler)
	srv.Listener = Listener(srv.Listener, discard)
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.Listener.Addr().String()
}

// rawConn is one client connection that writes requests byte for byte as given.
type rawConn struct {
	t    *testing.T
	conn net.Conn
	r    *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	return &rawConn{t: t, conn: conn, r: bufio.NewReader(conn)}
}

// send writes the request line, the headers (Host unless noHost) and a body of n bytes, while
// it reads the answer: a server that answers before it reads the body gets it all the same.
func (c *rawConn) send(line string, headers []string, body string, noHost bool) (*http.Response, []byte) {
	c.t.Helper()
	var b strings.Builder
	b.WriteString(line + "\r\n")
	if !noHost {
		b.WriteString("Host: edge\r\n")
	}
	for _, h := range headers {
		b.WriteString(h + "\r\n")
	}
	if body != "" {
		fmt.Fprintf(&b, "Content-Type: application/json\r\nContent-Length: %d\r\n", len(body))
	}
	b.WriteString("\r\n" + body)
	go func() { _, _ = io.WriteString(c.conn, b.String()) }()
	res, err := http.ReadResponse(c.r, nil)
	if err != nil {
		c.t.Fatalf("%q: no answer: %v", line, err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	if err != nil {
		c.t.Fatalf("%q: answer broken off: %v", line, err)
	}
	return res, raw
}

// wantFamilyFailure checks a 400 in fam's envelope: /v1 shows message, /api/v1 validation.
func wantFamilyFailure(t *testing.T, res *http.Response, raw []byte, fam edgev1.Family, message, validation string) {
	t.Helper()
	if res.StatusCode != http.StatusBadRequest || res.Header.Get("Content-Type") != "application/json" {
		t.Fatalf("answer %d %q (Location %q): %s", res.StatusCode, res.Header.Get("Content-Type"), res.Header.Get("Location"), raw)
	}
	if res.Header.Get("Location") != "" || res.Header.Get("X-Request-Id") == "" {
		t.Errorf("Location %q, X-Request-Id %q: want none and one", res.Header.Get("Location"), res.Header.Get("X-Request-Id"))
	}
	var got any
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatalf("body is not JSON: %s", raw)
	}
	want := any(map[string]any{"success": false, "error": message, "message": nil, "data": nil})
	if fam == edgev1.Family_FAMILY_API {
		want = map[string]any{"errors": []any{map[string]any{"validation": validation, "code": "[E4000]", "message": "Bad Request"}}}
	}
	assertJSON(t, got, want)
}

// bigBody is larger than what Go's server discards by itself after a handler that did not read
// the body (256 KiB): only a drained body leaves the connection usable.
var bigBody = `{"name":"` + strings.Repeat("a", 300<<10) + `"}`

func TestPathsWithDotOrEmptySegmentsAnswer400InThePathsFamilyOnBothHostsNeverARedirect(t *testing.T) {
	const message = `path: must not contain empty, "." or ".." segments`
	paths := []struct {
		target string
		fam    edgev1.Family
	}{
		{"/v1/tenants/..", edgev1.Family_FAMILY_V1},
		{"/v1/tenants/.", edgev1.Family_FAMILY_V1},
		{"/v1/users/./x", edgev1.Family_FAMILY_V1},
		{"/v1/tenants/abc/../def", edgev1.Family_FAMILY_V1},
		{"/v1/tenants/t1/..?test=true", edgev1.Family_FAMILY_V1},
		{"/v1/tenants/%2e%2E", edgev1.Family_FAMILY_V1}, // a dot segment spelled with escapes
		{"/v1/tenants//t1", edgev1.Family_FAMILY_V1},
		{"http://edge/v1/tenants/..", edgev1.Family_FAMILY_V1}, // absolute form
		{"/api/v1/tokens/..", edgev1.Family_FAMILY_API},
		{"/api/v1/webhooks/pspx/.", edgev1.Family_FAMILY_API},
		{"/api/v1/analytics/sign-ins/./", edgev1.Family_FAMILY_API},
	}
	h := newHarness(t)
	for host, handler := range edgeHosts(h) {
		addr := serveEdge(t, handler)
		t.Run(host, func(t *testing.T) {
			for _, p := range paths {
				for _, method := range []string{"GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"} {
					t.Run(method+" "+p.target, func(t *testing.T) {
						c := dialRaw(t, addr)
						var headers []string
						body := ""
						switch method {
						case "OPTIONS": // a browser's preflight
							headers = []string{"Origin: https://shop.example", "Access-Control-Request-Method: GET"}
						case "POST", "PUT", "DELETE", "PATCH":
							body = bigBody
						}
						res, raw := c.send(method+" "+p.target+" HTTP/1.1", headers, body, false)
						wantFamilyFailure(t, res, raw, p.fam, message, "path")
						if res.Close {
							t.Fatalf("the connection closes: the body was not drained")
						}
						// The same connection serves the next request.
						if res, raw := c.send("GET "+OpenAPIPath+" HTTP/1.1", nil, "", false); res.StatusCode != http.StatusOK {
							t.Fatalf("next request on the connection: %d %.200s", res.StatusCode, raw)
						}
					})
				}
			}
		})
	}
	if calls := len(h.identity.received()) + len(h.tenant.received()) + len(h.analytics.received()); calls != 0 || h.webhooks.got != nil {
		t.Errorf("backends received %d calls and webhook %v: want none", calls, h.webhooks.got)
	}
}

func TestCanonicalPathsStillReachTheirRoutesAndTheHostsOwnPaths(t *testing.T) {
	h := newHarness(t)
	for host, handler := range edgeHosts(h) {
		t.Run(host, func(t *testing.T) {
			c := dialRaw(t, serveEdge(t, handler))
			for _, target := range []string{OpenAPIPath, "/apps/a1/.well-known/jwks.json", "/v1/tenants/t1/", "/v1/tenants/..t1", "/v1/tenants/a%2F..%2Fb"} {
				res, raw := c.send("GET "+target+" HTTP/1.1", nil, "", false)
				if res.StatusCode == http.StatusBadRequest || res.StatusCode == http.StatusTemporaryRedirect {
					t.Errorf("GET %s: %d %.200s", target, res.StatusCode, raw)
				}
			}
			if host == "all-in-one" {
				if res, raw := c.send("GET /healthz HTTP/1.1", nil, "", false); res.StatusCode != http.StatusOK || string(raw) != "ok" {
					t.Errorf("the host's own path: %d %q", res.StatusCode, raw)
				}
			}
		})
	}
}

func TestRequestsGoParsesNotAnswer400InThePathsFamilyOnBothHosts(t *testing.T) {
	const (
		escape  = "path: not a valid path (malformed escape)"
		header  = "header: not a valid header name or value"
		host    = "Host: missing or malformed"
		request = "request: not a valid HTTP request"
	)
	tests := []struct {
		name              string
		line              string
		headers           []string
		body              string
		noHost            bool
		fam               edgev1.Family
		message, validity string
	}{
		{"malformed escape, with a body", "PUT /v1/tenants/%zz HTTP/1.1", nil, bigBody, false, edgev1.Family_FAMILY_V1, escape, "path"},
		{"malformed escape", "GET /v1/users/%zz HTTP/1.1", nil, "", false, edgev1.Family_FAMILY_V1, escape, "path"},
		{"truncated escape", "DELETE /v1/users/a% HTTP/1.1", nil, "", false, edgev1.Family_FAMILY_V1, escape, "path"},
		{"malformed escape under /api", "POST /api/v1/tokens/%zz HTTP/1.1", nil, bigBody, false, edgev1.Family_FAMILY_API, escape, "path"},
		{"malformed escape in the absolute form", "GET http://edge/api/v1/%zz HTTP/1.1", nil, "", false, edgev1.Family_FAMILY_API, escape, "path"},
		{"control byte in a header", "GET /api/v1/analytics/sign-ins HTTP/1.1", []string{"X-Note: a\x01b"}, "", false, edgev1.Family_FAMILY_API, header, "header"},
		{"no Host", "GET /v1/tenants/t1 HTTP/1.1", nil, "", true, edgev1.Family_FAMILY_V1, host, "Host"},
		{"space in the target", "GET /v1/tenants/a b HTTP/1.1", nil, "", false, edgev1.Family_FAMILY_V1, request, "request"},
	}
	h := newHarness(t)
	for hostName, handler := range edgeHosts(h) {
		addr := serveEdge(t, handler)
		t.Run(hostName, func(t *testing.T) {
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					res, raw := dialRaw(t, addr).send(tt.line, tt.headers, tt.body, tt.noHost)
					wantFamilyFailure(t, res, raw, tt.fam, tt.message, tt.validity)
				})
			}
			t.Run("second request of a kept-alive connection", func(t *testing.T) {
				c := dialRaw(t, addr)
				if res, raw := c.send("GET "+OpenAPIPath+" HTTP/1.1", nil, "", false); res.StatusCode != http.StatusOK {
					t.Fatalf("first request: %d %.200s", res.StatusCode, raw)
				}
				res, raw := c.send("GET /api/v1/%zz HTTP/1.1", nil, "", false)
				wantFamilyFailure(t, res, raw, edgev1.Family_FAMILY_API, escape, "path")
			})
		})
	}
	if calls := len(h.identity.received()) + len(h.tenant.received()) + len(h.analytics.received()); calls != 0 {
		t.Errorf("backends received %d calls: want none", calls)
	}
}
