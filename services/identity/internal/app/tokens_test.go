package app_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// code signs up (or in) email and returns the issued authorization code.
func (f *fixture) code(t *testing.T, email string) string {
	t.Helper()
	redirect, err := f.signIn(email, goodPassword)
	if err != nil {
		redirect = f.signUp(t, email)
	}
	return query(t, redirect).Get("code")
}

func (f *fixture) exchange(code string) (app.Tokens, error) {
	return f.svc.ExchangeToken(context.Background(), app.TokenRequest{
		ClientID: f.app.ID, GrantType: "authorization_code", RedirectURI: "https://app.test/cb/", Code: code, Nonce: "nonce-1",
	})
}

// refresh refreshes the way the published browser SDK does: grant_type authorization_code plus the
// refresh token, with a new nonce.
func (f *fixture) refresh(rt, nonce string) (app.Tokens, error) {
	return f.svc.ExchangeToken(context.Background(), app.TokenRequest{
		ClientID: f.app.ID, GrantType: "authorization_code", RefreshToken: rt, Nonce: nonce,
	})
}

// claimsOf decodes a JWT segment the way the browser SDK does (atob: standard base64, so no '-' or
// '_' may appear).
func claimsOf(t *testing.T, jwt string, segment int) map[string]any {
	t.Helper()
	seg := strings.Split(jwt, ".")[segment]
	if strings.ContainsAny(seg, "-_") {
		t.Fatalf("segment %d contains '-' or '_': %s", segment, seg)
	}
	raw, err := base64.RawStdEncoding.DecodeString(seg)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestCodeExchangeIssuesTokensAsTheSDKExpects(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	code := f.code(t, "grace@example.test")
	u, _ := f.svc.GetUser(ctx, f.app.ID, "grace@example.test")
	if err := f.svc.UpdateUser(ctx, f.app.ID, u.ID, domain.UserPatch{Language: ptr("DE"), GivenName: ptr("Grâce 😀>?~")}); err != nil {
		t.Fatal(err)
	}
	signInTime := f.now
	f.now = f.now.Add(5 * time.Second)
	tok, err := f.exchange(code)
	if err != nil {
		t.Fatal(err)
	}
	if tok.RedirectURI != "https://app.test/cb" || !domain.WellFormedSecret(tok.RefreshToken) {
		t.Errorf("tokens = %+v", tok)
	}
	wantExp := f.now.Add(15 * time.Minute)
	if !tok.ExpiresAt.Equal(wantExp) {
		t.Errorf("ExpiresAt = %v, want %v", tok.ExpiresAt, wantExp)
	}
	if h := claimsOf(t, tok.AccessToken, 0); h["alg"] != "RS256" || h["typ"] != "JWT" {
		t.Errorf("header = %v", h)
	}
	a := claimsOf(t, tok.AccessToken, 1)
	want := map[string]any{
		"iss": testIssuer, "sub": u.ID, "aud": f.app.ID, "tenantId": u.TenantID, "lng": "de", "nonce": "nonce-1",
		"auth_time": float64(signInTime.Unix()), "exp": float64(wantExp.Unix()), "token_use": "access",
	}
	for k, v := range want {
		if a[k] != v {
			t.Errorf("access %s = %v, want %v", k, a[k], v)
		}
	}
	if scope, _ := json.Marshal(a["scope"]); string(scope) != `["openid","email"]` {
		t.Errorf("scope = %s", scope)
	}
	if psc, _ := json.Marshal(a["psc"]); string(psc) != `[]` {
		t.Errorf("psc = %s, want []", psc)
	}
	id := claimsOf(t, tok.IDToken, 1)
	if _, has := id["psc"]; has || id["token_use"] != "id" || id["email"] != "grace@example.test" || id["given_name"] != "Grâce 😀>?~" ||
		id["email_verified"] != false || id["nonce"] != "nonce-1" || id["aud"] != f.app.ID || id["iss"] != testIssuer {
		t.Errorf("ID token claims = %v", id)
	}
	if a["jti"] == id["jti"] || a["jti"] == "" {
		t.Error("access and ID token share a jti")
	}
	if _, err := f.exchange(code); codeOf(err) != codes.InvalidArgument {
		t.Errorf("second exchange of a code: %v, want InvalidArgument", err)
	}
	if ms := strconv.FormatInt(tok.ExpiresAt.UnixMilli(), 10); ms != strconv.FormatInt(wantExp.Unix(), 10)+"000" {
		t.Errorf("expiresIn would be %s", ms)
	}
}

func TestCodeLivesSixtySeconds(t *testing.T) {
	for _, c := range []struct {
		after time.Duration
		ok    bool
	}{{59 * time.Second, true}, {60 * time.Second, true}, {61 * time.Second, false}} {
		t.Run(c.after.String(), func(t *testing.T) {
			f := newFixture(t)
			code := f.code(t, "grace@example.test")
			f.now = f.now.Add(c.after)
			_, err := f.exchange(code)
			if (err == nil) != c.ok {
				t.Fatalf("exchange after %v: %v, want ok=%t", c.after, err, c.ok)
			}
			if err != nil {
				wantStatus(t, "expired code", err, codes.InvalidArgument)
			}
		})
	}
}

func TestCodeExchangeRefusals(t *testing.T) {
	ctx := context.Background()
	type setup struct {
		f    *fixture
		code string
		req  app.TokenRequest
	}
	base := func(t *testing.T) setup {
		f := newFixture(t)
		code := f.code(t, "grace@example.test")
		return setup{f, code, app.TokenRequest{ClientID: f.app.ID, GrantType: "authorization_code", RedirectURI: "https://app.test/cb", Code: code, Nonce: "nonce-1"}}
	}
	cases := []struct {
		name  string
		prep  func(t *testing.T, s *setup)
		field string
	}{
		{"unknown client", func(_ *testing.T, s *setup) { s.req.ClientID = "6b7a1f0e-0000-4000-8000-000000000000" }, "client_id"},
		{"malformed client", func(_ *testing.T, s *setup) { s.req.ClientID = "x" }, "client_id"},
		{"disabled client", func(t *testing.T, s *setup) {
			if _, err := s.f.svc.SetAppEnabled(ctx, s.f.app.ID, false); err != nil {
				t.Fatal(err)
			}
		}, "client_id"},
		{"code of another app", func(t *testing.T, s *setup) { s.req.ClientID = s.f.newApp(t).ID }, "code"},
		{"malformed code", func(_ *testing.T, s *setup) { s.req.Code = "abc" }, "code"},
		{"unknown code", func(_ *testing.T, s *setup) { s.req.Code = strings.Repeat("A", 43) }, "code"},
		{"missing code", func(_ *testing.T, s *setup) { s.req.Code = "" }, "code"},
		{"other redirect", func(_ *testing.T, s *setup) { s.req.RedirectURI = "https://app.test/return?from=login" }, "redirect_uri"},
		{"missing redirect", func(_ *testing.T, s *setup) { s.req.RedirectURI = "" }, "redirect_uri"},
		{"other nonce", func(_ *testing.T, s *setup) { s.req.Nonce = "nonce-2" }, "nonce"},
		{"wrong grant type", func(_ *testing.T, s *setup) { s.req.GrantType = "password" }, "grant_type"},
		{"refresh grant without a refresh token", func(_ *testing.T, s *setup) { s.req.GrantType = "refresh_token" }, "grant_type"},
		{"frozen user", func(t *testing.T, s *setup) {
			u, _ := s.f.svc.GetUser(ctx, s.f.app.ID, "grace@example.test")
			if err := s.f.svc.SetAccessStatus(ctx, s.f.app.ID, s.f.app.ID, u.ID, "0"); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"deleted user", func(t *testing.T, s *setup) {
			u, _ := s.f.svc.GetUser(ctx, s.f.app.ID, "grace@example.test")
			if err := s.f.svc.DeleteUser(ctx, s.f.app.ID, u.ID); err != nil {
				t.Fatal(err)
			}
		}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := base(t)
			c.prep(t, &s)
			_, err := s.f.svc.ExchangeToken(ctx, s.req)
			wantStatus(t, c.name, err, codes.InvalidArgument)
			if fieldOf(err) != c.field {
				t.Errorf("field = %q, want %q", fieldOf(err), c.field)
			}
		})
	}
	// A code without a nonce takes the nonce of the token request.
	s := base(t)
	p := s.f.params()
	p.Nonce = ""
	out, err := s.f.svc.SignIn(ctx, app.SignInInput{Params: p, Email: "grace@example.test", Password: goodPassword})
	if err != nil {
		t.Fatal(err)
	}
	redirect := out.URL
	s.req.Code, s.req.Nonce = query(t, redirect).Get("code"), "late-nonce"
	tok, err := s.f.svc.ExchangeToken(ctx, s.req)
	if err != nil || claimsOf(t, tok.IDToken, 1)["nonce"] != "late-nonce" {
		t.Errorf("nonce-less code: %v", err)
	}
}

func TestRefreshRotatesAndDetectsReuse(t *testing.T) {
	f := newFixture(t)
	first, err := f.exchange(f.code(t, "grace@example.test"))
	if err != nil {
		t.Fatal(err)
	}
	f.now = f.now.Add(time.Hour)
	second, err := f.refresh(first.RefreshToken, "nonce-2")
	if err != nil {
		t.Fatal(err)
	}
	if second.RefreshToken == first.RefreshToken || second.RedirectURI != "https://app.test/cb" {
		t.Errorf("refresh = %+v", second)
	}
	a := claimsOf(t, second.AccessToken, 1)
	if a["nonce"] != "nonce-2" || a["auth_time"] != float64(clockTime.Unix()) || !second.ExpiresAt.Equal(f.now.Add(15*time.Minute)) {
		t.Errorf("refreshed access claims = %v, expires %v", a, second.ExpiresAt)
	}
	if claimsOf(t, second.IDToken, 1)["nonce"] != "nonce-2" {
		t.Error("ID token does not carry the nonce of the refresh request")
	}
	// The old token shown again: refused, and the whole family (the live second token) dies with it.
	_, err = f.refresh(first.RefreshToken, "n")
	wantStatus(t, "reuse", err, codes.InvalidArgument)
	_, err = f.refresh(second.RefreshToken, "n")
	wantStatus(t, "family after reuse", err, codes.InvalidArgument)

	// A refresh_token grant works too. It answers the redirect URI stored with the family, never an
	// (unregistered) one the refresh request names.
	third, err := f.exchange(f.code(t, "grace@example.test"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.svc.ExchangeToken(context.Background(), app.TokenRequest{ClientID: f.app.ID, GrantType: "refresh_token",
		RefreshToken: third.RefreshToken, RedirectURI: "https://evil.test/return/"})
	if err != nil || got.RedirectURI != "https://app.test/cb" {
		t.Errorf("refresh_token grant = %+v, %v, want the family's redirect URI https://app.test/cb", got, err)
	}
}

// The authorization step granted "openid email": an exchange or refresh may ask for part of it and
// gets the intersection, asking for more never adds a scope, and a refresh after a narrowed
// exchange may return to the whole grant (the family keeps the grant, not the last answer).
func TestIssuedScopeNeverExceedsTheGrant(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	scopeOf := func(tok app.Tokens) string {
		t.Helper()
		raw, _ := json.Marshal(claimsOf(t, tok.AccessToken, 1)["scope"])
		if id, _ := json.Marshal(claimsOf(t, tok.IDToken, 1)["scope"]); string(id) != string(raw) {
			t.Errorf("ID token scope %s differs from access token scope %s", id, raw)
		}
		return string(raw)
	}
	exchange := func(scope string) app.Tokens {
		t.Helper()
		tok, err := f.svc.ExchangeToken(ctx, app.TokenRequest{ClientID: f.app.ID, GrantType: "authorization_code",
			RedirectURI: "https://app.test/cb", Code: f.code(t, "grace@example.test"), Nonce: "nonce-1", Scope: scope})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	refresh := func(rt, scope string) app.Tokens {
		t.Helper()
		tok, err := f.svc.ExchangeToken(ctx, app.TokenRequest{ClientID: f.app.ID, RefreshToken: rt, Scope: scope})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	if got := scopeOf(exchange("")); got != `["openid","email"]` {
		t.Errorf("exchange without scope = %s, want the grant", got)
	}
	if got := scopeOf(exchange("openid profile email admin")); got != `["openid","email"]` {
		t.Errorf("exchange asking for more = %s, want the grant only", got)
	}
	if got := scopeOf(exchange("admin")); got != `[]` {
		t.Errorf("exchange asking only for ungranted scope = %s, want []", got)
	}
	narrowed := exchange("email")
	if got := scopeOf(narrowed); got != `["email"]` {
		t.Errorf("narrowed exchange = %s, want [\"email\"]", got)
	}
	wider := refresh(narrowed.RefreshToken, "openid email profile admin")
	if got := scopeOf(wider); got != `["openid","email"]` {
		t.Errorf("refresh asking for more = %s, want at most the grant", got)
	}
	if got := scopeOf(refresh(wider.RefreshToken, "openid")); got != `["openid"]` {
		t.Errorf("refresh asking for less = %s, want [\"openid\"]", got)
	}
}

func TestRefreshRefusals(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name string
		prep func(t *testing.T, f *fixture, tok app.Tokens) app.TokenRequest
	}{
		{"unknown token", func(_ *testing.T, f *fixture, _ app.Tokens) app.TokenRequest {
			return app.TokenRequest{ClientID: f.app.ID, RefreshToken: strings.Repeat("B", 43)}
		}},
		{"malformed token", func(_ *testing.T, f *fixture, _ app.Tokens) app.TokenRequest {
			return app.TokenRequest{ClientID: f.app.ID, RefreshToken: "x"}
		}},
		{"token of another app", func(t *testing.T, f *fixture, tok app.Tokens) app.TokenRequest {
			return app.TokenRequest{ClientID: f.newApp(t).ID, RefreshToken: tok.RefreshToken}
		}},
		{"expired (30 days)", func(_ *testing.T, f *fixture, tok app.Tokens) app.TokenRequest {
			f.now = f.now.Add(30 * 24 * time.Hour)
			return app.TokenRequest{ClientID: f.app.ID, RefreshToken: tok.RefreshToken}
		}},
		{"frozen user", func(t *testing.T, f *fixture, tok app.Tokens) app.TokenRequest {
			u, _ := f.svc.GetUser(ctx, f.app.ID, "grace@example.test")
			if err := f.svc.SetAccessStatus(ctx, f.app.ID, f.app.ID, u.ID, "0"); err != nil {
				t.Fatal(err)
			}
			// Unfreezing does not bring the revoked tokens back.
			if err := f.svc.SetAccessStatus(ctx, f.app.ID, f.app.ID, u.ID, "1"); err != nil {
				t.Fatal(err)
			}
			return app.TokenRequest{ClientID: f.app.ID, RefreshToken: tok.RefreshToken}
		}},
		{"deleted user", func(t *testing.T, f *fixture, tok app.Tokens) app.TokenRequest {
			u, _ := f.svc.GetUser(ctx, f.app.ID, "grace@example.test")
			if err := f.svc.DeleteUser(ctx, f.app.ID, u.ID); err != nil {
				t.Fatal(err)
			}
			return app.TokenRequest{ClientID: f.app.ID, RefreshToken: tok.RefreshToken}
		}},
		{"app key rotated", func(t *testing.T, f *fixture, tok app.Tokens) app.TokenRequest {
			if _, err := f.svc.RotateAppKey(ctx, f.app.ID); err != nil {
				t.Fatal(err)
			}
			return app.TokenRequest{ClientID: f.app.ID, RefreshToken: tok.RefreshToken}
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			tok, err := f.exchange(f.code(t, "grace@example.test"))
			if err != nil {
				t.Fatal(err)
			}
			_, err = f.svc.ExchangeToken(ctx, c.prep(t, f, tok))
			wantStatus(t, c.name, err, codes.InvalidArgument)
		})
	}
	// Just before the refresh lifetime ends the token still works.
	f := newFixture(t)
	tok, _ := f.exchange(f.code(t, "grace@example.test"))
	f.now = f.now.Add(30*24*time.Hour - time.Second)
	if _, err := f.refresh(tok.RefreshToken, ""); err != nil {
		t.Errorf("refresh a second before expiry: %v", err)
	}
}

func TestAppLifetimesApply(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	a, err := f.svc.CreateApp(ctx, app.NewApp{ProjectID: f.app.ProjectID, Name: "short", RedirectURIs: []string{"https://app.test/cb"},
		AccessTokenTTL: 2 * time.Minute, RefreshTokenTTL: time.Hour, EmailVerification: "optional"})
	if err != nil {
		t.Fatal(err)
	}
	f.app = a
	tok, err := f.exchange(f.code(t, "grace@example.test"))
	if err != nil {
		t.Fatal(err)
	}
	if !tok.ExpiresAt.Equal(f.now.Add(2 * time.Minute)) {
		t.Errorf("access expiry = %v", tok.ExpiresAt)
	}
	f.now = f.now.Add(time.Hour)
	_, err = f.refresh(tok.RefreshToken, "")
	wantStatus(t, "refresh after the app's refresh lifetime", err, codes.InvalidArgument)
}
