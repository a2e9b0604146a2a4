package browser

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/berthhq/berth/cmd/berth/stacktest"
	"github.com/berthhq/berth/services/sandbox/idp"
	"github.com/berthhq/berth/services/sandbox/mount"
)

// TestTheIdentityProviderSandboxsPageSignsInTheTypedOrPickedPersonOrDenies drives the sandbox
// provider's hosted authorize page in Chromium as a tester does: typing an identity whose email
// the provider does not vouch for, picking a preset one, and denying consent. The app behind the
// redirect URI verifies each ID token with go-oidc.
func TestTheIdentityProviderSandboxsPageSignsInTheTypedOrPickedPersonOrDenies(t *testing.T) {
	chromium := ensureChromium(t)
	srv := httptest.NewUnstartedServer(nil)
	sb := mount.New("http://"+srv.Listener.Addr().String(), slog.New(slog.DiscardHandler))
	mux := http.NewServeMux()
	sb.Register(mux)
	srv.Config.Handler = mux
	srv.Start()
	t.Cleanup(srv.Close)
	t.Cleanup(sb.Close)

	name := "idpA-" + stacktest.RandomHex(4)
	typed, picked, denied := newCallbackApp(t), newCallbackApp(t), newCallbackApp(t)
	client, err := sb.Idp.RegisterClient(name, idp.Client{RedirectURIs: []string{typed.redirectURI(), picked.redirectURI(), denied.redirectURI()}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(newBrowser(t, chromium), 90*time.Second)
	defer cancel()
	provider, err := oidc.NewProvider(ctx, sb.IdpURL+"/"+name)
	if err != nil {
		t.Fatal(err)
	}
	verifier := provider.Verifier(&oidc.Config{ClientID: client.ClientID})

	// flow opens the page for app, lets act answer it and answers the query the app received,
	// with the ID token's claims when the code exchanged for one.
	flow := func(app *callbackApp, act ...chromedp.Action[chromedp.Void]) (url.Values, map[string]any) {
		t.Helper()
		config := oauth2.Config{ClientID: client.ClientID, ClientSecret: client.ClientSecret, Endpoint: provider.Endpoint(),
			RedirectURL: app.redirectURI(), Scopes: []string{oidc.ScopeOpenID, "email", "profile"}}
		pkce, state, nonce := oauth2.GenerateVerifier(), stacktest.RandomHex(8), stacktest.RandomHex(8)
		steps := append([]chromedp.Action[chromedp.Void]{chromedp.Navigate(config.AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(pkce)))}, act...)
		steps = append(steps, chromedp.WaitVisible(chromedp.ID("signed-in")))
		if err := chromedp.Do(ctx, steps...); err != nil {
			t.Fatalf("the provider's page: %v\npage:\n%s", err, currentPage(ctx))
		}
		q := <-app.queries
		if q.Get("state") != state || q.Get("iss") != sb.IdpURL+"/"+name {
			t.Fatalf("the app got %v, want state %s and the issuer", q, state)
		}
		if q.Get("code") == "" {
			return q, nil
		}
		tok, err := config.Exchange(ctx, q.Get("code"), oauth2.VerifierOption(pkce))
		if err != nil {
			t.Fatal(err)
		}
		idt, err := verifier.Verify(ctx, tok.Extra("id_token").(string))
		if err != nil || idt.Nonce != nonce {
			t.Fatalf("ID token: %v (nonce %q)", err, idt.Nonce)
		}
		claims := map[string]any{}
		if err := idt.Claims(&claims); err != nil {
			t.Fatal(err)
		}
		return q, claims
	}

	_, claims := flow(typed,
		chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), "typed@example.com"),
		chromedp.SendKeys(chromedp.ID("name"), "Typed Person"),
		chromedp.Click(chromedp.ID("email_verified")), // checked at first: the tester unticks it
		chromedp.Click(chromedp.ID("allow")),
	)
	if claims["email"] != "typed@example.com" || claims["name"] != "Typed Person" || claims["email_verified"] != false {
		t.Fatalf("typed identity: %v", claims)
	}

	_, claims = flow(picked,
		chromedp.WaitVisible(chromedp.CSS(`form.pick button`)),
		chromedp.Click(chromedp.CSS(`form.pick input[value="tester@example.com"] ~ button`)),
	)
	if claims["email"] != "tester@example.com" || claims["email_verified"] != true {
		t.Fatalf("picked identity: %v", claims)
	}

	q, _ := flow(denied, chromedp.WaitVisible(chromedp.ID("deny")), chromedp.Click(chromedp.ID("deny")))
	if q.Get("error") != "access_denied" || q.Has("code") {
		t.Fatalf("denied: %v", q)
	}
}
