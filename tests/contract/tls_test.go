package contract

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/cmd/berth/stacktest"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/testkit"
	"github.com/berthhq/berth/pkg/testkit/tlstest"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// With TLS on, every gRPC hop (edge to services, service to service, the seed's admin calls) runs
// over TLS, and service calls over mutual TLS: the published flows work as over plaintext, and a
// service token without the deployment's certificate opens nothing.
func TestTheStackServesItsFlowsWithItsGRPCOverMutualTLS(t *testing.T) {
	files := tlstest.NewCA(t).Issue("berth")
	deployment, err := grpcx.LoadTLS(files.CA, files.Cert, files.Key)
	if err != nil {
		t.Fatal(err)
	}
	s := stacktest.StartWith(t, stacktest.Options{Issuer: "berth-contract", RedirectURI: "http://localhost:3000/callback", TLS: deployment})
	e := &env{t: t, stack: s.Stack, serviceToken: s.ServiceToken, admin: s.Admin, adminToken: s.AdminToken, demo: s.App}

	// Sign-up through the login service (a service call), the exchange and reads through the edge.
	tk := e.newUser(t, "tls-user@example.com")
	me := e.do("GET", "/v1/users/me", bearer(tk.access), "").ok(t, 200).(map[string]any)
	e.do("GET", "/v1/tenants/"+e.demo.TenantID, e.read(), "").ok(t, 200) // tenant asks identity for the users
	u := e.tokenUser(t, "tls-payer@example.com")
	e.createCheckout(t, bearer(u.access), u.tenant, e.demo.AppID, checkoutBody(e.demo.Pspx.Prices.Monthly, e.demo.Pspx.TaxRate, "subscription", nil))
	testkit.Eventually(t, "analytics lists today's sign-ins", func() bool {
		return len(e.analyticsList(t, "/v1/analytics/sign-ins", "analyticsSignIn", day(0), day(0))) >= 2
	})
	if me["id"] == "" {
		t.Fatalf("users/me %v", me)
	}

	call := func(t *testing.T, conn *grpc.ClientConn) error {
		t.Helper()
		defer conn.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_, err := identityv1.NewIdentityInternalServiceClient(conn).VerifyApiKey(ctx, &identityv1.VerifyApiKeyRequest{ApiKey: e.demo.ReadKey, ClientId: e.demo.AppID})
		return err
	}
	withCert, err := grpcx.Dial(e.stack.Addr("identity"), e.serviceToken, deployment)
	if err != nil {
		t.Fatal(err)
	}
	if err := call(t, withCert); err != nil {
		t.Fatalf("a service call with the deployment's certificate: %v", err)
	}
	caOnly, err := grpcx.LoadTLS(files.CA, "", "")
	if err != nil {
		t.Fatal(err)
	}
	noCert, err := grpcx.Dial(e.stack.Addr("identity"), e.serviceToken, caOnly)
	if err != nil {
		t.Fatal(err)
	}
	if err := call(t, noCert); status.Code(err) != codes.Unauthenticated || !strings.Contains(err.Error(), "certificate") {
		t.Fatalf("the service token without a certificate: %v, want refused", err)
	}
	plain, err := grpcx.Dial(e.stack.Addr("identity"), e.serviceToken, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := call(t, plain); status.Code(err) != codes.Unavailable {
		t.Fatalf("a plaintext call to a TLS server: %v, want no connection", err)
	}
}
