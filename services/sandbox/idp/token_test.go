package idp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/berthhq/berth/services/sandbox/idp"
)

func TestTheTokenEndpointRefusesWhatDoesNotMatchTheCode(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if _, err := e.sb.RegisterClient("idpA", idp.Client{ClientID: "other-app", ClientSecret: secret, RedirectURIs: []string{redirectURI}}); err != nil {
		t.Fatal(err)
	}
	r := e.rp(oauth2.AuthStyleInParams, oidc.ScopeOpenID, "email")
	type request struct {
		form  url.Values
		basic [2]string // HTTP Basic id and secret, when set
	}
	// valid is the request that redeems code, before a case changes it.
	valid := func(code, verifier string) request {
		return request{form: url.Values{"grant_type": {"authorization_code"}, "code": {code}, "redirect_uri": {redirectURI},
			"code_verifier": {verifier}, "client_id": {e.clientID}, "client_secret": {secret}}}
	}
	for _, c := range []struct {
		name           string
		change         func(req *request, first func() int)
		status         int
		error, inError string
	}{
		{"a valid request", func(*request, func() int) {}, 200, "", ""},
		{"a valid request with HTTP Basic", func(req *request, _ func() int) {
			req.form.Del("client_id")
			req.form.Del("client_secret")
			req.basic = [2]string{e.clientID, secret}
		}, 200, "", ""},
		{"an unknown code", func(req *request, _ func() int) { req.form.Set("code", "NOTACODE") }, 400, "invalid_grant", "unknown code"},
		{"a reused code", func(_ *request, first func() int) {
			if first() != 200 {
				t.Error("the first redemption failed")
			}
		}, 400, "invalid_grant", "presented before"},
		{"a wrong verifier", func(req *request, _ func() int) { req.form.Set("code_verifier", oauth2.GenerateVerifier()) }, 400, "invalid_grant", "does not match"},
		{"no verifier", func(req *request, _ func() int) { req.form.Del("code_verifier") }, 400, "invalid_grant", "code_verifier is missing"},
		{"a verifier too short", func(req *request, _ func() int) { req.form.Set("code_verifier", "short") }, 400, "invalid_grant", "code_verifier"},
		{"a wrong secret in the form", func(req *request, _ func() int) { req.form.Set("client_secret", "not-the-secret-at-all") }, 401, "invalid_client", ""},
		{"a wrong secret in HTTP Basic", func(req *request, _ func() int) {
			req.form.Del("client_secret")
			req.basic = [2]string{e.clientID, "not-the-secret-at-all"}
		}, 401, "invalid_client", ""},
		{"no client authentication", func(req *request, _ func() int) {
			req.form.Del("client_id")
			req.form.Del("client_secret")
		}, 401, "invalid_client", "authenticate"},
		{"HTTP Basic and a form secret both", func(req *request, _ func() int) { req.basic = [2]string{e.clientID, secret} }, 400, "invalid_request", "one way"},
		{"another client's code", func(req *request, _ func() int) { req.form.Set("client_id", "other-app") }, 400, "invalid_grant", "another client"},
		{"a wrong redirect_uri", func(req *request, _ func() int) { req.form.Set("redirect_uri", redirectURI+"/other") }, 400, "invalid_grant", "redirect_uri"},
		{"no redirect_uri", func(req *request, _ func() int) { req.form.Del("redirect_uri") }, 400, "invalid_grant", "redirect_uri"},
		{"an expired code", func(*request, func() int) { e.clock.Advance(context.Background(), 61*time.Second) }, 400, "invalid_grant", "expired"},
		{"another grant type", func(req *request, _ func() int) { req.form.Set("grant_type", "refresh_token") }, 400, "unsupported_grant_type", ""},
		{"a parameter twice", func(req *request, _ func() int) { req.form.Add("code", "again") }, 400, "invalid_request", "more than once"},
	} {
		t.Run(c.name, func(t *testing.T) {
			verifier := oauth2.GenerateVerifier()
			code := e.code(r, verifier)
			req := valid(code, verifier)
			send := func(req request) (int, map[string]any) {
				hr, _ := http.NewRequest("POST", e.issuer+"/token", strings.NewReader(req.form.Encode()))
				hr.Header.Set("Content-Type", "application/x-www-form-urlencoded")
				if req.basic[0] != "" {
					hr.SetBasicAuth(url.QueryEscape(req.basic[0]), url.QueryEscape(req.basic[1]))
				}
				resp, err := http.DefaultClient.Do(hr)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				var out map[string]any
				if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
					t.Fatal(err)
				}
				if resp.Header.Get("Cache-Control") != "no-store" {
					t.Errorf("Cache-Control %q", resp.Header.Get("Cache-Control"))
				}
				return resp.StatusCode, out
			}
			c.change(&req, func() int { status, _ := send(valid(code, verifier)); return status })
			status, out := send(req)
			desc, _ := out["error_description"].(string)
			if status != c.status || (c.error != "" && out["error"] != c.error) || !strings.Contains(desc, c.inError) {
				t.Fatalf("%d %v, want %d %s mentioning %q", status, out, c.status, c.error, c.inError)
			}
			if c.status == 200 && (out["token_type"] != "Bearer" || out["id_token"] == nil || out["access_token"] == nil) {
				t.Fatalf("token answer %v", out)
			}
		})
	}
}

func TestACodePresentedTwiceRevokesTheTokenItWasRedeemedFor(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	r := e.rp(oauth2.AuthStyleInHeader, oidc.ScopeOpenID, "email")
	// The replay comes at once, or after the code's minute when other sign-ins made the provider
	// forget what expired: the spent code is remembered as long as its token lives.
	for _, later := range []time.Duration{0, 2 * time.Minute} {
		verifier := oauth2.GenerateVerifier()
		code := e.code(r, verifier)
		tok, err := r.config.Exchange(ctx, code, oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatal(err)
		}
		e.clock.Advance(ctx, later)
		e.code(r, oauth2.GenerateVerifier())
		if _, err := r.provider.UserInfo(ctx, oauth2.StaticTokenSource(tok)); err != nil {
			t.Fatalf("%v later, userinfo before the replay: %v", later, err)
		}
		if _, err := r.config.Exchange(ctx, code, oauth2.VerifierOption(verifier)); oauthErrorCode(err) != "invalid_grant" || !strings.Contains(err.Error(), "presented before") {
			t.Fatalf("%v later, the replay: %v", later, err)
		}
		if _, err := r.provider.UserInfo(ctx, oauth2.StaticTokenSource(tok)); err == nil || !strings.Contains(err.Error(), "401") {
			t.Fatalf("%v later, userinfo after the replay: %v, want 401", later, err)
		}
	}
}

func TestUserinfoRefusesMissingUnknownAndExpiredTokens(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	r := e.rp(oauth2.AuthStyleInHeader, oidc.ScopeOpenID, "email")
	verifier := oauth2.GenerateVerifier()
	tok, err := r.config.Exchange(ctx, e.code(r, verifier), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, auth string }{{"no token", ""}, {"unknown token", "Bearer nope"}, {"basic", "Basic " + tok.AccessToken}} {
		req, _ := http.NewRequest("GET", e.issuer+"/userinfo", nil)
		if c.auth != "" {
			req.Header.Set("Authorization", c.auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 || !strings.Contains(resp.Header.Get("WWW-Authenticate"), "invalid_token") {
			t.Errorf("%s: %d %q", c.name, resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
		}
	}
	e.clock.Advance(ctx, time.Hour)
	if _, err := r.provider.UserInfo(ctx, oauth2.StaticTokenSource(tok)); err == nil {
		t.Fatal("userinfo answered an expired token")
	}
}
