package grpcapi_test

import (
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/grpcx"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// The account page's calls are the edge's alone (service token): the change takes the client
// address for the attempt limits, which only the edge may state.
func TestAccountPageCallsOverTheLoginService(t *testing.T) {
	e := newEnv(t)
	a := e.provision(t)
	tok := e.signedIn(t, a, "grace@example.test")
	service := func() []string { return []string{authn.MDServiceToken, serviceToken} }

	_, err := e.login.DescribeAccount(ctxWith(t), &identityv1.DescribeAccountRequest{ClientId: a.app.GetId()})
	wantCode(t, "describe without the service token", err, codes.Unauthenticated)
	lc, err := e.login.DescribeAccount(ctxWith(t, service()...), &identityv1.DescribeAccountRequest{ClientId: a.app.GetId()})
	if err != nil || lc.GetAppId() != a.app.GetId() || lc.GetAccountCallbackUri() != "https://berth.test/account/callback" {
		t.Fatalf("DescribeAccount = %v, %v", lc, err)
	}

	change := func(md []string, current, next string) error {
		_, err := e.login.ChangePassword(ctxWith(t, md...), &identityv1.ChangePasswordRequest{
			AccessToken: tok.GetAccessToken(), CurrentPassword: current, NewPassword: next, ClientIp: "192.0.2.9",
		})
		return err
	}
	wantCode(t, "change with the user's bearer alone", change(bearer(tok), signUpPassword, "a brand new password"), codes.Unauthenticated)
	err = change(service(), "wrong", "a brand new password")
	wantCode(t, "wrong current password", err, codes.InvalidArgument)
	if f := grpcx.FieldOf(grpcx.StatusOf(err)); f != "current_password" {
		t.Errorf("field of a wrong current password = %q", f)
	}
	err = change(service(), signUpPassword, "short")
	if st := grpcx.StatusOf(err); st.Code() != codes.InvalidArgument || grpcx.FieldOf(st) != "password" || grpcx.ReasonOf(st) != "length" {
		t.Errorf("short new password = %v", err)
	}
	if err := change(service(), signUpPassword, "a brand new password"); err != nil {
		t.Fatal(err)
	}
	_, err = e.token.ExchangeToken(ctxWith(t), &identityv1.ExchangeTokenRequest{
		ClientId: a.app.GetId(), GrantType: "authorization_code", RefreshToken: tok.GetRefreshToken(), Nonce: "n2",
	})
	wantCode(t, "refresh of a session the change ended", err, codes.InvalidArgument)
}
