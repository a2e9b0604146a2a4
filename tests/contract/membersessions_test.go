package contract

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/berthhq/berth/pkg/grpcx"
	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// A console sign-out reaches every service through identity's event: billing, which has the
// member's token verified and cached, refuses it well before its 30 s cache would expire.
func TestASignedOutConsoleMemberIsRefusedByOtherServicesBeforeTheirCacheExpires(t *testing.T) {
	e := start(t, "memory")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	signIn, err := e.admin.Members.SignInMember(ctx, &identityv1.SignInMemberRequest{
		Email: e.demo.Console.Email, Password: e.demo.Console.Password, ClientAddress: "192.0.2.10", UserAgent: "contract"})
	if err != nil || signIn.GetToken() == "" {
		t.Fatalf("sign-in: %v, %v", signIn, err)
	}
	dial := func(module string) *grpc.ClientConn {
		c, err := grpc.NewClient(e.stack.Addr(module), grpcx.ClientOptions("", e.stack.TLS)...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		return c
	}
	asMember := metadata.AppendToOutgoingContext(ctx, "authorization", "Bearer "+signIn.GetToken())
	billing := billingv1.NewBillingAdminServiceClient(dial("billing"))
	read := func() error {
		_, err := billing.GetAppBilling(asMember, &billingv1.GetAppBillingRequest{AppId: e.demo.AppID})
		return err
	}
	if err := read(); err != nil {
		t.Fatalf("the signed-in member reads the app's billing: %v", err)
	}
	if _, err := identityv1.NewMemberServiceClient(dial("identity")).SignOutMember(asMember, &emptypb.Empty{}); err != nil {
		t.Fatal(err)
	}
	signedOut := time.Now()
	for {
		err := read()
		if status.Code(err) == codes.Unauthenticated {
			t.Logf("billing refused the signed-out token after %v", time.Since(signedOut))
			return
		}
		if err != nil {
			t.Fatalf("after the sign-out: %v, want Unauthenticated", err)
		}
		if time.Since(signedOut) > 15*time.Second {
			t.Fatal("billing still admits the signed-out member's token 15 s after the sign-out")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
