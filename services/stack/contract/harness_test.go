package contract

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
	"github.com/berthhq/berth/services/stack/allinone"
	"github.com/berthhq/berth/services/stack/seed"
	"github.com/jackc/pgx/v5/pgxpool"
	"google.golang.org/grpc"
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
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// start brings up the whole stack on free ports. backend "postgres" gives each service its own
// fresh database; "memory" uses the embedded stores.
func start(t *testing.T, backend string) *env {
	t.Helper()
	ctx := context.Background()
	cfg := allinone.Config{
		HTTPAddr: "127.0.0.1:0", IdentityGRPCAddr: "127.0.0.1:0", TenantGRPCAddr: "127.0.0.1:0", AnalyticsGRPCAddr: "127.0.0.1:0",
		Issuer:       "berth-contract",
		NATSURL:      os.Getenv("TEST_NATS_URL"),
		EventPrefix:  "contract" + randomHex(4),
		Pepper:       []byte(randomHex(16)),
		SecretKey:    []byte(randomHex(16)), // 32 bytes of text
		AdminToken:   randomHex(16),
		ServiceToken: randomHex(16),
		Log:          slog.New(slog.NewJSONHandler(io.Discard, nil)),
	}
	if backend == "postgres" {
		noMigrations := func(context.Context, *pgxpool.Pool) error { return nil }
		cfg.IdentityDatabaseURL = pgtest.URL(t, "contract-identity", noMigrations)
		cfg.TenantDatabaseURL = pgtest.URL(t, "contract-tenant", noMigrations)
		cfg.AnalyticsDatabaseURL = pgtest.URL(t, "contract-analytics", noMigrations)
	}
	s, err := allinone.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("start stack: %v", err)
	}
	t.Cleanup(s.Close)

	dial := func(addr string) *grpc.ClientConn {
		c, err := grpc.NewClient(addr, append(grpcx.ClientOptions(""), grpc.WithChainUnaryInterceptor(grpcx.AdminTokenInterceptor(cfg.AdminToken)))...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	e := &env{t: t, stack: s, serviceToken: cfg.ServiceToken, admin: seed.Admin{
		Identity: identityv1.NewIdentityAdminServiceClient(dial(s.IdentityAddr)),
		Tenant:   tenantv1.NewTenantAdminServiceClient(dial(s.TenantAddr)),
	}}
	seedCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	if e.demo, err = seed.Run(seedCtx, e.admin, s.BaseURL, "http://localhost:3000/callback"); err != nil {
		t.Fatalf("seed demo: %v", err)
	}
	if e.other, err = seed.Run(seedCtx, e.admin, s.BaseURL, "http://localhost:4000/callback"); err != nil {
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
