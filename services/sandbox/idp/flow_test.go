package idp_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"
)

func TestARelyingPartyCompletesTheCodeFlowAndVerifiesTheIDToken(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, c := range []struct {
		name  string
		style oauth2.AuthStyle
	}{{"client_secret_basic", oauth2.AuthStyleInHeader}, {"client_secret_post", oauth2.AuthStyleInParams}} {
		t.Run(c.name, func(t *testing.T) {
			ctx := context.Background()
			r := e.rp(c.style, oidc.ScopeOpenID, "email", "profile")
			verifier := oauth2.GenerateVerifier()
			authURL := r.config.AuthCodeURL("state-"+c.name, oidc.Nonce("nonce-"+c.name), oauth2.S256ChallengeOption(verifier))
			q := e.signIn(authURL, "grace@example.com", "Grace Hopper", true)
			if q.Get("state") != "state-"+c.name || q.Get("iss") != e.issuer || q.Get("code") == "" {
				t.Fatalf("redirect query %v, want the code, the state and the issuer", q)
			}
			tok, err := r.config.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier))
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := tok.Extra("id_token").(string)
			idt, err := r.verifier.Verify(ctx, raw)
			if err != nil {
				t.Fatalf("verifying the ID token: %v", err)
			}
			var claims struct {
				Email         string `json:"email"`
				EmailVerified bool   `json:"email_verified"`
				Name          string `json:"name"`
			}
			if err := idt.Claims(&claims); err != nil {
				t.Fatal(err)
			}
			if idt.Nonce != "nonce-"+c.name || idt.Issuer != e.issuer || claims.Email != "grace@example.com" || !claims.EmailVerified || claims.Name != "Grace Hopper" || idt.Subject == "" {
				t.Fatalf("ID token %+v with claims %+v", idt, claims)
			}
			if err := idt.VerifyAccessToken(tok.AccessToken); err != nil {
				t.Fatalf("at_hash: %v", err)
			}
			info, err := r.provider.UserInfo(ctx, oauth2.StaticTokenSource(tok))
			if err != nil {
				t.Fatal(err)
			}
			if info.Subject != idt.Subject || info.Email != "grace@example.com" || !info.EmailVerified {
				t.Fatalf("userinfo %+v", info)
			}
		})
	}
}

func TestTheSamePersonKeepsTheirSubjectAndTheVerifiedFlagIsTheTesters(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	r := e.rp(oauth2.AuthStyleInHeader, oidc.ScopeOpenID, "email")
	signIn := func(email string, verified bool) (sub string, emailVerified bool) {
		verifier := oauth2.GenerateVerifier()
		q := e.signIn(r.config.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier)), email, "", verified)
		tok, err := r.config.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier))
		if err != nil {
			t.Fatal(err)
		}
		idt, err := r.verifier.Verify(ctx, tok.Extra("id_token").(string))
		if err != nil {
			t.Fatal(err)
		}
		var c struct {
			EmailVerified bool   `json:"email_verified"`
			Name          string `json:"name"`
		}
		if err := idt.Claims(&c); err != nil || c.Name != "" {
			t.Fatalf("claims %+v (%v): without the profile scope there is no name", c, err)
		}
		return idt.Subject, c.EmailVerified
	}
	first, v1 := signIn("lin@example.com", false)
	again, v2 := signIn("lin@example.com", true)
	other, _ := signIn("max@example.com", true)
	if first != again || first == other || v1 || !v2 {
		t.Fatalf("subjects %q %q %q, verified %v %v", first, again, other, v1, v2)
	}
}

func TestDenyingConsentSendsAccessDeniedWithTheStateBack(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.rp(oauth2.AuthStyleInHeader, oidc.ScopeOpenID)
	authURL := r.config.AuthCodeURL("keep-me", oauth2.S256ChallengeOption(oauth2.GenerateVerifier()))
	id := e.openPage(authURL)
	loc := e.answer(authURL, url.Values{"request": {id}, "action": {"deny"}})
	q := loc.Query()
	if !strings.HasPrefix(loc.String(), redirectURI+"?") || q.Get("error") != "access_denied" || q.Get("state") != "keep-me" || q.Has("code") {
		t.Fatalf("denied: sent to %s", loc)
	}
	// The request is answered: posting it again shows the error page, not a second answer.
	if code, body := e.do("POST", strings.TrimPrefix(authURL, e.srv.URL), "application/x-www-form-urlencoded", url.Values{"request": {id}, "action": {"allow"}, "email": {"a@example.com"}}.Encode()); code != 400 || !strings.Contains(body, "unknown, expired or already answered") {
		t.Fatalf("answering twice: %d %s", code, body)
	}
}

func TestWithoutTheOpenIDScopeTheFlowIsPlainOAuthWithUserinfo(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	r := e.rp(oauth2.AuthStyleInParams, "email", "profile")
	verifier := oauth2.GenerateVerifier()
	q := e.signIn(r.config.AuthCodeURL("s", oauth2.S256ChallengeOption(verifier)), "plain@example.com", "Plain", false)
	tok, err := r.config.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier))
	if err != nil {
		t.Fatal(err)
	}
	if tok.Extra("id_token") != nil {
		t.Fatalf("an ID token without openid: %v", tok.Extra("id_token"))
	}
	info, err := r.provider.UserInfo(ctx, oauth2.StaticTokenSource(tok))
	if err != nil || info.Email != "plain@example.com" || info.EmailVerified {
		t.Fatalf("userinfo %+v, %v", info, err)
	}
}
