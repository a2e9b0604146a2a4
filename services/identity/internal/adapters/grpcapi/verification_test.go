package grpcapi_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/berthhq/berth/pkg/authn"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

var mailedCode = regexp.MustCompile(`(?m)^([0-9]{6})$`)

// Over the wire: the admin API sets the policy, sign-up answers a verification instead of a
// redirect, the code continues the request, and route 14's user and the tenant service's list
// then say the address is verified.
func TestVerificationOverGRPCFeedsEmailVerifiedOfRoute14AndTheTenantUsers(t *testing.T) {
	e := newEnv(t)
	a := e.provision(t)
	got, err := e.admin.SetAppEmailVerification(asAdmin(t), &identityv1.SetAppEmailVerificationRequest{AppId: a.app.GetId(), Policy: "required"})
	if err != nil || got.GetEmailVerification() != "required" {
		t.Fatalf("SetAppEmailVerification = %v, %v", got, err)
	}
	_, err = e.admin.SetAppEmailVerification(asAdmin(t), &identityv1.SetAppEmailVerificationRequest{AppId: a.app.GetId(), Policy: "maybe"})
	wantCode(t, "unknown policy", err, codes.InvalidArgument)
	_, err = e.admin.SetAppEmailVerification(ctxWith(t), &identityv1.SetAppEmailVerificationRequest{AppId: a.app.GetId(), Policy: "optional"})
	wantCode(t, "policy without the admin token", err, codes.Unauthenticated)

	svc := ctxWith(t, authn.MDServiceToken, serviceToken)
	params := &identityv1.LoginParams{ClientId: a.app.GetId(), RedirectUri: "https://app.test/cb", State: "s", Nonce: "n"}
	out, err := e.login.SignUp(svc, &identityv1.SignUpRequest{Params: params, Email: "grace@example.test", Password: signUpPassword, ClientIp: "192.0.2.9"})
	if err != nil || out.GetUrl() != "" || out.GetVerification() == "" {
		t.Fatalf("SignUp = %v, %v; want a verification", out, err)
	}
	e.mailbox.mu.Lock()
	m := mailedCode.FindStringSubmatch(e.mailbox.sent[len(e.mailbox.sent)-1].Text)
	e.mailbox.mu.Unlock()
	if m == nil {
		t.Fatal("no code in the verification mail")
	}
	_, err = e.login.VerifyEmailCode(svc, &identityv1.VerifyEmailCodeRequest{ClientId: a.app.GetId(), Verification: out.GetVerification(), Code: "000000x"})
	wantCode(t, "malformed code", err, codes.InvalidArgument)
	res, err := e.login.VerifyEmailCode(svc, &identityv1.VerifyEmailCodeRequest{ClientId: a.app.GetId(), Verification: out.GetVerification(), Code: m[1], ClientIp: "192.0.2.9"})
	if err != nil || !strings.HasPrefix(res.GetUrl(), "https://app.test/cb?") {
		t.Fatalf("VerifyEmailCode = %v, %v", res, err)
	}

	u, err := e.identity.GetUser(a.ctx(t, "read"), &identityv1.GetUserRequest{UserId: "grace@example.test"})
	if err != nil || !u.GetEmailVerified() {
		t.Fatalf("route 14 after verification: %v, %v", u, err)
	}
	stored, err := e.store.GetUserByEmail(context.Background(), a.app.GetId(), "grace@example.test")
	if err != nil {
		t.Fatal(err)
	}
	list, err := e.internal.ListTenantUsers(svc, &identityv1.ListTenantUsersRequest{AppId: a.app.GetId(), TenantId: stored.TenantID})
	if err != nil || len(list.GetUsers()) != 1 || !list.GetUsers()[0].GetEmailVerified() {
		t.Fatalf("the tenant's users (route 5) after verification: %v, %v", list, err)
	}

	_, err = e.login.VerifyEmailLink(svc, &identityv1.VerifyEmailLinkRequest{Token: "no-such-token"})
	wantCode(t, "unknown link", err, codes.InvalidArgument)
	_, err = e.login.ResendVerification(svc, &identityv1.ResendVerificationRequest{Params: params, Email: "bad\x01@example.test"})
	wantCode(t, "control character in the address", err, codes.InvalidArgument)
}

var mailedToken = regexp.MustCompile(`/login/verify\?token=([A-Za-z0-9_-]+)`)

// The pages a mail's link opens and the payment pages learn the app's look from identity, the
// edge's calls alone: a live link names its app until it is met; an app id names its app.
func TestTheLinkAndPaymentPagesLearnTheAppsBrandingOverTheLoginService(t *testing.T) {
	e := newEnv(t)
	a := e.provision(t)
	if _, err := e.admin.SetAppBranding(asAdmin(t), &identityv1.SetAppBrandingRequest{AppId: a.app.GetId(), Branding: &identityv1.AppBranding{
		DisplayName: "Shop", AccentColor: "#0a7f3e",
	}}); err != nil {
		t.Fatal(err)
	}
	svc := ctxWith(t, authn.MDServiceToken, serviceToken)
	params := &identityv1.LoginParams{ClientId: a.app.GetId(), RedirectUri: "https://app.test/cb", State: "s", Nonce: "n"}
	if _, err := e.login.SignUp(svc, &identityv1.SignUpRequest{Params: params, Email: "grace@example.test", Password: signUpPassword, ClientIp: "192.0.2.9"}); err != nil {
		t.Fatal(err)
	}
	e.mailbox.mu.Lock()
	m := mailedToken.FindStringSubmatch(e.mailbox.sent[len(e.mailbox.sent)-1].Text)
	e.mailbox.mu.Unlock()
	if m == nil {
		t.Fatal("no link in the verification mail")
	}
	link := &identityv1.VerifyEmailLinkRequest{Token: m[1]}

	_, err := e.login.DescribeVerification(ctxWith(t), link)
	wantCode(t, "describe a link without the service token", err, codes.Unauthenticated)
	lc, err := e.login.DescribeVerification(svc, link)
	if err != nil || lc.GetAppId() != a.app.GetId() || lc.GetBranding().GetDisplayName() != "Shop" || lc.GetBranding().GetAccentColor() != "#0a7f3e" {
		t.Fatalf("DescribeVerification = %v, %v", lc, err)
	}
	if _, err := e.login.VerifyEmailLink(svc, link); err != nil {
		t.Fatal(err)
	}
	_, err = e.login.DescribeVerification(svc, link)
	wantCode(t, "describe a met link", err, codes.InvalidArgument)
	_, err = e.login.DescribeVerification(svc, &identityv1.VerifyEmailLinkRequest{Token: "no-such-token"})
	wantCode(t, "describe an unknown link", err, codes.InvalidArgument)

	_, err = e.login.DescribeApp(ctxWith(t), &identityv1.DescribeAccountRequest{ClientId: a.app.GetId()})
	wantCode(t, "describe an app without the service token", err, codes.Unauthenticated)
	lc, err = e.login.DescribeApp(svc, &identityv1.DescribeAccountRequest{ClientId: a.app.GetId()})
	if err != nil || lc.GetAppId() != a.app.GetId() || lc.GetBranding().GetDisplayName() != "Shop" {
		t.Fatalf("DescribeApp = %v, %v", lc, err)
	}
	for _, id := range []string{"00000000-0000-4000-8000-000000000000", "not-an-id"} {
		_, err = e.login.DescribeApp(svc, &identityv1.DescribeAccountRequest{ClientId: id})
		wantCode(t, "describe app "+id, err, codes.InvalidArgument)
	}
}
