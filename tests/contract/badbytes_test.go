package contract

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/pkg/grpcx"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// parserText are fragments of parser, driver and runtime errors that must never reach a caller.
var parserText = []string{"proto:", "unexpected EOF", "http: ", "invalid character", "json:", "grpc:", "rpc error", "SQLSTATE", "invalid byte sequence", "invalid URL escape"}

// Bad bytes (docs/api.md, "Bad bytes") on both stores: each is a 400 in its family
// naming the field, never a 500 (Postgres refuses NUL; gRPC cannot marshal invalid UTF-8), and no
// answer carries parser text.
func TestBadBytesAreA400InTheFamilyNamingTheField(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			tenant := "/v1/tenants/" + e.demo.TenantID
			tests := []struct {
				name, method, path, body string
				headers                  map[string]string
				api                      bool
				field                    string // /v1: the error text starts with it; /api/v1: validation
			}{
				{"invalid UTF-8 in a path id", "GET", "/v1/users/%ff", "", e.read(), false, "userId"},
				{"invalid UTF-8 in the JWKS app id", "GET", "/apps/%c3%28/.well-known/jwks.json", "", nil, true, "appId"},
				{"invalid UTF-8 in a query field", "GET", "/api/v1/analytics/sign-ins?from=%ff&to=2026-01-01", "", e.read(), false, "from"},
				{"NUL in an ignored query parameter", "GET", tenant + "?test=%00", "", e.read(), false, "test"},
				{"invalid UTF-8 in a body string", "PUT", tenant, "{\"name\":\"AC\xffME\"}", e.write(), false, "name"},
				{"NUL in route 17 tenant text", "PUT", tenant, `{"kind":"tenant","companyName":"ACME\u0000"}`, e.write(), false, "companyName"},
				{"NUL in a route 17 address", "PUT", tenant, `{"tenant":{"shippingAddress":{"line1":"Main St\u0000"}}}`, e.write(), false, "tenant.shippingAddress.line1"},
				{"control character in tenant text", "PUT", tenant, `{"name":"ACME\u001b[2J"}`, e.write(), false, "name"},
				{"newline in a single-line tenant field", "PUT", tenant, `{"companyVATId":"DE\n1"}`, e.write(), false, "companyVATId"},
				{"body over 1 MiB", "PUT", tenant, `{"description":"` + strings.Repeat("a", 1<<20) + `"}`, e.write(), false, "body"},
				{"malformed JSON", "PUT", tenant, `{"name":`, e.write(), false, "body"},
				{"wrong JSON type", "PUT", tenant, `{"isBusinessCustomer":"yes"}`, e.write(), false, "isBusinessCustomer"},
				{"malformed JSON on the token route", "POST", "/api/v1/tokens", `{"code":`, nil, true, "body"},
			}
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					r := e.do(tt.method, tt.path, tt.headers, tt.body)
					for _, p := range parserText {
						if strings.Contains(r.raw, p) {
							t.Fatalf("answer carries parser text %q: %s", p, r.raw)
						}
					}
					if tt.api {
						e.apiFails(t, r, 400, "[E4000]")
						if v := r.body.(map[string]any)["errors"].([]any)[0].(map[string]any)["validation"]; v != tt.field {
							t.Fatalf("validation = %v, want %s", v, tt.field)
						}
						return
					}
					r.fails(t, 400)
					if msg := r.body.(map[string]any)["error"].(string); !strings.HasPrefix(msg, tt.field) {
						t.Fatalf("error = %q, want it to name %s", msg, tt.field)
					}
				})
			}
			t.Run("lines in the description are kept", func(t *testing.T) {
				e.do("PUT", tenant, e.write(), `{"description":"first line\nsecond line"}`).ok(t, 200)
				data := e.do("GET", tenant, e.read(), "").ok(t, 200).(map[string]any)
				if data["description"] != "first line\nsecond line" {
					t.Fatalf("description = %q", data["description"])
				}
			})
			t.Run("NUL in the sign-in email", func(t *testing.T) { e.nulSignIn(t) })
			t.Run("malformed escape in the path", func(t *testing.T) { e.malformedEscape(t) })
		})
	}
}

// nulSignIn posts the hosted page with a NUL in the email (a 500 from Postgres before) and calls
// identity's SignIn directly with it: both refuse it naming the email.
func (e *env) nulSignIn(t *testing.T) {
	form := url.Values{
		"client_id": {e.demo.AppID}, "redirect_uri": {e.demo.RedirectURI}, "state": {"st4te"},
		"email": {"ada\x00@example.com"}, "password": {"correct horse battery staple"},
	}
	req, _ := http.NewRequest("POST", e.stack.BaseURL+"/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	page, _ := io.ReadAll(res.Body)
	if res.StatusCode != 400 || !strings.Contains(string(page), "Enter a valid email address.") {
		t.Fatalf("login page answered %d: %s", res.StatusCode, page)
	}

	conn, err := grpcx.Dial(e.stack.Addr("identity"), e.serviceToken, e.stack.TLS)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, err = identityv1.NewLoginServiceClient(conn).SignIn(context.Background(), &identityv1.SignInRequest{
		Params:   &identityv1.LoginParams{ClientId: e.demo.AppID, RedirectUri: e.demo.RedirectURI, State: "st4te"},
		Email:    "ada\x00@example.com",
		Password: "correct horse battery staple",
		ClientIp: "127.0.0.1",
	})
	if st := status.Convert(err); st.Code() != codes.InvalidArgument || grpcx.FieldOf(st) != "email" {
		t.Fatalf("SignIn = %v, want InvalidArgument naming email", st)
	}
}

// malformedEscape holds /v1/users/%zz, a request line Go's net/http refuses before any handler, to
// a 400 in the /v1 envelope naming the path: the edge's listener answers Go's refusal in the
// family of the path as sent (docs/api.md), never Go's plain text, a 500 or a hang.
func (e *env) malformedEscape(t *testing.T) {
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.stack.BaseURL, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "GET /v1/users/%zz HTTP/1.1\r\nHost: edge\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	res, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusBadRequest || !strings.HasPrefix(res.Header.Get("Content-Type"), "application/json") || !strings.Contains(string(body), `"error":"path: not a valid path`) {
		t.Fatalf("status = %d %q %s, want 400 in the /v1 envelope naming the path", res.StatusCode, res.Header.Get("Content-Type"), body)
	}
}
