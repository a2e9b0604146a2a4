package contract

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/cmd/berth/allinone"
	"github.com/berthhq/berth/cmd/berth/seed"
	"github.com/berthhq/berth/cmd/berth/stacktest"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// env is one running stack with the demo app seeded, plus a second app for cross-app checks.
type env struct {
	t            *testing.T
	serviceToken string
	stack        *allinone.Stack
	demo         seed.Demo
	other        seed.Demo // a second project/app with its own keys, tenant and users
	admin        seed.Admin
	adminToken   string
}

// start brings up the whole stack on free ports. backend "postgres" gives each module its own
// fresh database; "memory" uses the embedded stores.
func start(t *testing.T, backend string) *env {
	t.Helper()
	return startWith(t, stacktest.Options{Postgres: backend == "postgres"})
}

// startWith is start with more options; issuer and redirect URI are always the contract's.
func startWith(t *testing.T, o stacktest.Options) *env {
	t.Helper()
	o.Issuer, o.RedirectURI = "berth-contract", "http://localhost:3000/callback"
	s := stacktest.StartWith(t, o)
	e := &env{t: t, stack: s.Stack, serviceToken: s.ServiceToken, admin: s.Admin, adminToken: s.AdminToken, demo: s.App}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var err error
	if e.other, err = seed.Run(ctx, e.admin, seed.Options{BaseURL: s.Stack.BaseURL, RedirectURI: "http://localhost:4000/callback",
		Sandbox: seed.Sandbox{Pspx: s.Stack.Sandboxes.PspxURL, Pspy: s.Stack.Sandboxes.PspyURL}, EmailVerification: "optional"}); err != nil {
		t.Fatalf("seed second app: %v", err)
	}
	return e
}

// creds builds API-key headers.
func creds(key, typ, client string) map[string]string {
	return map[string]string{"X-API-KEY": key, "X-API-KEY-TYPE": typ, "X-CLIENT-ID": client}
}

func (e *env) read() map[string]string  { return creds(e.demo.ReadKey, "read", e.demo.AppID) }
func (e *env) write() map[string]string { return creds(e.demo.WriteKey, "write", e.demo.AppID) }

type response struct {
	status int
	header http.Header
	body   any
	raw    string
}

func (e *env) do(method, path string, headers map[string]string, body string) response {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.stack.BaseURL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	r := response{status: res.StatusCode, header: res.Header, raw: string(raw)}
	if err := json.Unmarshal(raw, &r.body); err != nil {
		e.t.Fatalf("%s %s: body is not JSON: %q", method, path, raw)
	}
	checkAnswer(e.t, method, path, r.status, r.body)
	return r
}

// ok asserts a /v1 success and returns data.
func (r response) ok(t *testing.T, status int) any {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.raw)
	}
	assertV1Success(t, r.body)
	return r.body.(map[string]any)["data"]
}

func assertV1Success(t *testing.T, body any) {
	t.Helper()
	m, _ := body.(map[string]any)
	want := map[string]string{}
	for k, v := range v1SuccessFields {
		want[k] = v
	}
	if m != nil && m["data"] == nil {
		want["data"] = null
	}
	assertShape(t, "/v1 success envelope", body, want)
	if m["success"] != true || m["message"] == "" {
		t.Fatalf("success envelope = %v", m)
	}
}

// fails asserts a /v1 error with the given status.
func (r response) fails(t *testing.T, status int) {
	t.Helper()
	if r.status != status {
		t.Fatalf("status %d, want %d: %s", r.status, status, r.raw)
	}
	assertShape(t, "/v1 error envelope", r.body, v1ErrorFields)
	m := r.body.(map[string]any)
	if m["success"] != false || m["error"] == "" {
		t.Fatalf("error envelope = %v", m)
	}
	for k := range r.header {
		if strings.HasPrefix(strings.ToLower(k), "grpc-") {
			t.Fatalf("gRPC header leaked: %s", k)
		}
	}
}
