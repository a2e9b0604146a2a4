package grpcapi_test

import (
	"net/url"
	"strconv"
	"testing"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"

	"github.com/berthhq/berth/pkg/authn"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

const signUpPassword = "correct horse battery"

// signedIn signs a new user up through the login API (as the edge does) and exchanges the code on
// the public token route. It returns the user's tokens.
func (e *env) signedIn(t *testing.T, a tenantApp, email string) *identityv1.Token {
	t.Helper()
	params := &identityv1.LoginParams{ClientId: a.app.GetId(), RedirectUri: "https://app.test/cb", State: "s", Nonce: "n"}
	_, err := e.login.SignUp(ctxWith(t), &identityv1.SignUpRequest{Params: params, Email: email, Password: signUpPassword})
	wantCode(t, "login API without the service token", err, codes.Unauthenticated)
	redirect, err := e.login.SignUp(ctxWith(t, authn.MDServiceToken, serviceToken),
		&identityv1.SignUpRequest{Params: params, Email: email, Password: signUpPassword, ClientIp: "192.0.2.9"})
	if err != nil {
		t.Fatal(err)
	}
	u, err := url.Parse(redirect.GetUrl())
	if err != nil {
		t.Fatal(err)
	}
	list, err := e.token.ExchangeToken(ctxWith(t), &identityv1.ExchangeTokenRequest{
		ClientId: a.app.GetId(), GrantType: "authorization_code", RedirectUri: "https://app.test/cb/",
		Code: u.Query().Get("code"), Nonce: "n", Service: "email",
	})
	if err != nil {
		t.Fatal(err)
	}
	if list.GetKind() != "tokens" || list.GetTotalItems() != 1 || list.GetItemsLength() != 1 || len(list.GetItems()) != 1 {
		t.Fatalf("token list = %v", list)
	}
	tok := list.GetItems()[0]
	ms, err := strconv.ParseInt(tok.GetExpiresIn(), 10, 64)
	if err != nil || tok.GetTokenType() != "Bearer" || tok.GetRedirectUri() != "https://app.test/cb" || tok.GetRefreshToken() == "" ||
		ms <= 0 || ms%1000 != 0 {
		t.Errorf("token item = %v", tok)
	}
	return tok
}

func bearer(tok *identityv1.Token) []string {
	return []string{authn.MDAuthorization, "Bearer " + tok.GetAccessToken()}
}

func TestTenantTokenRoutes(t *testing.T) {
	e := newEnv(t)
	a, b := e.provision(t), e.provision(t)
	tok := e.signedIn(t, a, "grace@example.test")
	asGrace := func() []string { return bearer(tok) }

	me, err := e.identity.GetMe(ctxWith(t, asGrace()...), &identityv1.GetMeRequest{})
	if err != nil || me.GetEmail() != "grace@example.test" || me.GetKind() != "user" {
		t.Fatalf("GetMe = %v, %v", me, err)
	}
	internal := ctxWith(t, authn.MDServiceToken, serviceToken)
	v, err := e.internal.VerifyAccessToken(internal, &identityv1.VerifyAccessTokenRequest{AccessToken: tok.GetAccessToken()})
	if err != nil || v.GetUserId() != me.GetId() || v.GetAppId() != a.app.GetId() || v.GetTenantId() == "" || strconv.FormatInt(v.GetExpiresAt(), 10)+"000" != tok.GetExpiresIn() {
		t.Errorf("VerifyAccessToken = %v, %v", v, err)
	}
	_, err = e.internal.VerifyAccessToken(internal, &identityv1.VerifyAccessTokenRequest{AccessToken: tok.GetIdToken()})
	wantCode(t, "ID token as access token", err, codes.Unauthenticated)

	name := "Grace H."
	cases := []struct {
		name string
		call func() error
		want codes.Code
	}{
		{"roles of the token's app", func() error {
			_, err := e.identity.ListUserRoles(ctxWith(t, asGrace()...), &identityv1.ListUserRolesRequest{AppId: a.app.GetId()})
			return err
		}, codes.OK},
		{"roles of another app", func() error {
			_, err := e.identity.ListUserRoles(ctxWith(t, asGrace()...), &identityv1.ListUserRolesRequest{AppId: b.app.GetId()})
			return err
		}, codes.PermissionDenied},
		{"update own user", func() error {
			_, err := e.identity.UpdateUser(ctxWith(t, asGrace()...), &identityv1.UpdateUserRequest{UserId: me.GetId(),
				Body: &identityv1.UserUpdateBody{User: &identityv1.UserPatch{Name: &name}}})
			return err
		}, codes.OK},
		{"update another user", func() error {
			_, err := e.identity.UpdateUser(ctxWith(t, asGrace()...), &identityv1.UpdateUserRequest{UserId: a.user.GetId()})
			return err
		}, codes.PermissionDenied},
		{"API-key-only route with a token", func() error {
			_, err := e.identity.GetUser(ctxWith(t, asGrace()...), &identityv1.GetUserRequest{UserId: me.GetId()})
			return err
		}, codes.Unauthenticated},
		{"GetMe with an API key: me names nobody", func() error {
			_, err := e.identity.GetMe(a.ctx(t, "read"), &identityv1.GetMeRequest{})
			return err
		}, codes.InvalidArgument},
		{"delete another user with a token", func() error {
			_, err := e.identity.DeleteUser(ctxWith(t, asGrace()...), &identityv1.DeleteUserRequest{UserId: a.user.GetId()})
			return err
		}, codes.PermissionDenied},
		{"delete with a read key", func() error {
			_, err := e.identity.DeleteUser(a.ctx(t, "read"), &identityv1.DeleteUserRequest{UserId: a.user.GetId()})
			return err
		}, codes.PermissionDenied},
		{"delete another app's user with a write key", func() error {
			_, err := e.identity.DeleteUser(b.ctx(t, "write"), &identityv1.DeleteUserRequest{UserId: a.user.GetId()})
			return err
		}, codes.NotFound},
		{"forged bearer", func() error {
			_, err := e.identity.GetMe(ctxWith(t, authn.MDAuthorization, "Bearer a.b.c"), &identityv1.GetMeRequest{})
			return err
		}, codes.Unauthenticated},
	}
	for _, c := range cases {
		wantCode(t, c.name, c.call(), c.want)
	}
	me, _ = e.identity.GetMe(ctxWith(t, asGrace()...), &identityv1.GetMeRequest{})
	if me.GetName() != name {
		t.Errorf("name after own update = %q", me.GetName())
	}

	// Deleting oneself ends the token's use.
	if _, err := e.identity.DeleteUser(ctxWith(t, asGrace()...), &identityv1.DeleteUserRequest{UserId: me.GetId()}); err != nil {
		t.Fatal(err)
	}
	_, err = e.identity.GetMe(ctxWith(t, asGrace()...), &identityv1.GetMeRequest{})
	wantCode(t, "token of a deleted user", err, codes.PermissionDenied)
	_, err = e.identity.DeleteUser(a.ctx(t, "write"), &identityv1.DeleteUserRequest{UserId: me.GetId()})
	wantCode(t, "deleting twice", err, codes.NotFound)
	if _, err := e.identity.DeleteUser(a.ctx(t, "write"), &identityv1.DeleteUserRequest{UserId: a.user.GetId()}); err != nil {
		t.Errorf("delete with a write key: %v", err)
	}
	_, err = e.token.ExchangeToken(ctxWith(t), &identityv1.ExchangeTokenRequest{ClientId: a.app.GetId(), RefreshToken: tok.GetRefreshToken()})
	wantCode(t, "refresh after deletion", err, codes.InvalidArgument)
}

func TestPublicDiscoveryAndLoginDescription(t *testing.T) {
	e := newEnv(t)
	a := e.provision(t)
	d, err := e.token.GetOpenIDConfiguration(ctxWith(t), &identityv1.GetOpenIDConfigurationRequest{AppId: a.app.GetId()})
	if err != nil || d.GetIssuer() != "test-issuer" || d.GetJwksUri() != "https://berth.test/apps/"+a.app.GetId()+"/.well-known/jwks.json" {
		t.Errorf("discovery = %v, %v", d, err)
	}
	jwks, err := e.token.GetJWKS(ctxWith(t), &identityv1.GetJWKSRequest{AppId: a.app.GetId()})
	if err != nil || len(jwks.GetKeys()) != 1 || jwks.GetKeys()[0].GetKty() != "RSA" || jwks.GetKeys()[0].GetKid() == "" {
		t.Errorf("JWKS = %v, %v", jwks, err)
	}
	_, err = e.token.GetJWKS(ctxWith(t), &identityv1.GetJWKSRequest{AppId: uuid.NewString()})
	wantCode(t, "JWKS of an unknown app", err, codes.NotFound)

	svc := ctxWith(t, authn.MDServiceToken, serviceToken)
	lc, err := e.login.DescribeLogin(svc, &identityv1.DescribeLoginRequest{ClientId: a.app.GetId(), RedirectUri: "https://app.test/cb/"})
	if err != nil || lc.GetAppId() != a.app.GetId() || lc.GetAppName() != "app" {
		t.Errorf("DescribeLogin = %v, %v", lc, err)
	}
	_, err = e.login.DescribeLogin(svc, &identityv1.DescribeLoginRequest{ClientId: a.app.GetId(), RedirectUri: "https://evil.test/cb"})
	wantCode(t, "unregistered redirect", err, codes.InvalidArgument)
	_, err = e.token.ExchangeToken(ctxWith(t), &identityv1.ExchangeTokenRequest{ClientId: a.app.GetId(), GrantType: "authorization_code"})
	wantCode(t, "exchange without a code", err, codes.InvalidArgument)

	app, err := e.admin.CreateApp(asAdmin(t), &identityv1.CreateAppRequest{ProjectId: a.app.GetProjectId(), Name: "ttl", AccessTokenTtlSeconds: 300})
	if err != nil || app.GetAccessTokenTtlSeconds() != 300 || app.GetRefreshTokenTtlSeconds() != 30*24*3600 {
		t.Errorf("CreateApp with lifetimes = %v, %v", app, err)
	}
	_, err = e.admin.CreateApp(asAdmin(t), &identityv1.CreateAppRequest{ProjectId: a.app.GetProjectId(), Name: "ttl", AccessTokenTtlSeconds: 5})
	wantCode(t, "too short a lifetime", err, codes.InvalidArgument)
}
