// Package e2e starts the whole stack for the end-to-end tests of browser-side clients (the hosted
// login page driven in Chromium, the published web client SDK run in Node): the all-in-one process
// on free ports with memory stores, and one app provisioned through the admin APIs, exactly as an
// operator would.
package e2e

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"io"
	"log/slog"
	"os"
	"testing"
	"time"

	"google.golang.org/grpc"

	"github.com/berthhq/berth/pkg/grpcx"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
	"github.com/berthhq/berth/services/stack/allinone"
	"github.com/berthhq/berth/services/stack/seed"
)

// Env is a running stack and the app provisioned on it.
type Env struct {
	Stack *allinone.Stack
	App   seed.Demo
}

// Start brings up the stack with tokens issued as issuer and provisions an app (with keys, a
// tenant and users) whose only redirect URI is redirectURI. The stack stops when the test ends.
// TEST_NATS_URL selects an external JetStream server, as in the contract tests.
func Start(t testing.TB, issuer, redirectURI string) Env {
	t.Helper()
	ctx := context.Background()
	cfg := allinone.Config{
		HTTPAddr: "127.0.0.1:0", IdentityGRPCAddr: "127.0.0.1:0", TenantGRPCAddr: "127.0.0.1:0", AnalyticsGRPCAddr: "127.0.0.1:0",
		Issuer:       issuer,
		NATSURL:      os.Getenv("TEST_NATS_URL"),
		EventPrefix:  "e2e" + RandomHex(4),
		Pepper:       []byte(RandomHex(16)),
		SecretKey:    []byte(RandomHex(16)), // 32 bytes of text
		AdminToken:   RandomHex(16),
		ServiceToken: RandomHex(16),
		Log:          slog.New(slog.NewJSONHandler(io.Discard, nil)),
	}
	s, err := allinone.Start(ctx, cfg)
	if err != nil {
		t.Fatalf("start stack: %v", err)
	}
	t.Cleanup(s.Close)

	dial := func(addr string) *grpc.ClientConn {
		c, err := grpc.NewClient(addr, append(grpcx.ClientOptions(""), grpc.WithChainUnaryInterceptor(grpcx.AdminTokenInterceptor(cfg.AdminToken)))...)
		if err != nil {
			t.Fatalf("dial %s: %v", addr, err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	admin := seed.Admin{
		Identity: identityv1.NewIdentityAdminServiceClient(dial(s.IdentityAddr)),
		Tenant:   tenantv1.NewTenantAdminServiceClient(dial(s.TenantAddr)),
	}
	seedCtx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	app, err := seed.Run(seedCtx, admin, s.BaseURL, redirectURI)
	if err != nil {
		t.Fatalf("provision app: %v", err)
	}
	return Env{Stack: s, App: app}
}

// RandomHex returns n random bytes as hex, for unique emails, states and prefixes.
func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Unavailable ends a test whose external tool (a browser, Node) is missing: a skip on a developer
// machine, a failure under CI=true, where a silently skipped end-to-end test would hide breakage.
func Unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}
