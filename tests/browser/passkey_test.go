package browser

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"github.com/berthhq/berth/cmd/berth/stacktest"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// A passkey end to end, through Chromium's virtual authenticator (DevTools WebAuthn domain): the
// user adds a passkey on the account page (the first factor of the account, so the page shows
// the recovery codes once), and signing in then asks for it after the password; the browser's
// passkey answers and the tokens say a key was proved besides the password. Once the app allows
// it, the passkey alone signs in from the sign-in page.
func TestAPasskeyAddedOnTheAccountPageIsAskedForAtSignInAndWhereAllowedReplacesThePasswordInChromium(t *testing.T) {
	chromium := ensureChromium(t)
	app := newCallbackApp(t)
	// Passkeys are bound to a host name: the stack is served as localhost, not 127.0.0.1.
	env := stacktest.StartWith(t, stacktest.Options{Issuer: "berth-browser-test", RedirectURI: app.redirectURI(), Localhost: true})
	if !strings.HasPrefix(env.Stack.BaseURL, "http://localhost:") {
		t.Fatalf("the stack is served at %s, want localhost", env.Stack.BaseURL)
	}
	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 120*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	authenticator := virtualAuthenticator(ctx, t)
	email := "passkey-" + stacktest.RandomHex(4) + "@example.com"
	const password = "a long enough passphrase 42"
	loginURL := func(typ string) string { return hostedLogin(env, app, typ) }

	signUpAndLand(t, ctx, browser, loginURL("signUp"), email)
	landedQuery(t, app)

	// Add the passkey on the account page: the browser's prompt is the virtual authenticator.
	err := chromedp.Do(ctx, slices.Concat(
		[]chromedp.Action[chromedp.Void]{chromedp.Navigate(env.Stack.BaseURL + "/account?client_id=" + env.App.AppID)},
		signInOnTheHostedPage(email, password),
		[]chromedp.Action[chromedp.Void]{
			chromedp.WaitVisible(chromedp.ID("add-passkey")),
			chromedp.Click(chromedp.ID("add-passkey")),
			chromedp.WaitVisible(chromedp.ID("passkey-button")),
			chromedp.SendKeys(chromedp.ID("current_password"), password),
			chromedp.Click(chromedp.ID("passkey-button")),
			chromedp.WaitVisible(chromedp.ID("recovery-codes")),
		},
	)...)
	if err != nil {
		t.Fatalf("add a passkey: %v\npage:\n%s", err, currentPage(browser))
	}
	stored, err := chromedp.Call(ctx, webauthn.GetCredentials, webauthn.GetCredentialsParams(authenticator))
	if err != nil || len(stored.Credentials) != 1 {
		t.Fatalf("the authenticator holds %d credentials (%v), want the new passkey", len(stored.Credentials), err)
	}
	if rp := stored.Credentials[0].RpID; rp != "localhost" {
		t.Errorf("the passkey's relying party is %q, want the public URL's host", rp)
	}
	err = chromedp.Do(ctx, chromedp.Click(chromedp.ID("back")), chromedp.WaitVisible(chromedp.ID("passkeys")))
	if err != nil {
		t.Fatalf("back to the account page: %v\npage:\n%s", err, currentPage(browser))
	}
	if shown, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("passkeys"))); !strings.Contains(shown, "1") {
		t.Errorf("the account page shows %q, want one passkey", shown)
	}

	// Signing in asks for the second factor; the passkey answers it.
	err = chromedp.Do(ctx, slices.Concat(
		[]chromedp.Action[chromedp.Void]{chromedp.Navigate(loginURL("signIn"))},
		signInOnTheHostedPage(email, password),
		[]chromedp.Action[chromedp.Void]{
			chromedp.WaitVisible(chromedp.ID("passkey-button")),
			chromedp.Click(chromedp.ID("passkey-button")),
			chromedp.WaitVisible(chromedp.ID("signed-in")),
		},
	)...)
	if err != nil {
		t.Fatalf("sign in with the passkey: %v\npage:\n%s", err, currentPage(browser))
	}
	access, _ := exchangeCode(t, env, landedQuery(t, app).Get("code"), app.redirectURI(), "s", "n")
	if got := amrOf(t, access); !slices.Equal(got, []string{"pwd", "hwk", "mfa"}) {
		t.Errorf("amr after the passkey = %v, want [pwd hwk mfa]", got)
	}

	// Where the app allows it, the passkey signs in without the password.
	admin, cancelAdmin := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancelAdmin()
	if _, err := env.Admin.Identity.SetAppPasskeySignIn(admin, &identityv1.SetAppPasskeySignInRequest{AppId: env.App.AppID, Enabled: true}); err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx,
		chromedp.Navigate(loginURL("signIn")),
		chromedp.WaitVisible(chromedp.ID("passkey-button")),
		chromedp.Click(chromedp.ID("passkey-button")),
		chromedp.WaitVisible(chromedp.ID("signed-in")),
	)
	if err != nil {
		t.Fatalf("sign in with the passkey alone: %v\npage:\n%s", err, currentPage(browser))
	}
	access, _ = exchangeCode(t, env, landedQuery(t, app).Get("code"), app.redirectURI(), "s", "n")
	if got := amrOf(t, access); !slices.Equal(got, []string{"hwk", "mfa"}) {
		t.Errorf("amr after a passwordless sign-in = %v, want [hwk mfa]", got)
	}
}

// virtualAuthenticator turns on the DevTools WebAuthn domain in ctx's tab and adds a platform
// authenticator that verifies the user and answers every prompt at once, standing in for the
// person at the browser; it returns the authenticator (its id).
func virtualAuthenticator(ctx context.Context, t *testing.T) webauthn.AddVirtualAuthenticatorResult {
	t.Helper()
	if _, err := chromedp.Call(ctx, webauthn.Enable, webauthn.EnableParams{}); err != nil {
		t.Fatalf("WebAuthn.enable: %v", err)
	}
	id, err := chromedp.Call(ctx, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{
		Options: &webauthn.VirtualAuthenticatorOptions{
			Protocol: webauthn.AuthenticatorProtocolCtap2, Transport: webauthn.AuthenticatorTransportInternal,
			HasResidentKey: true, HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true,
		},
	})
	if err != nil {
		t.Fatalf("WebAuthn.addVirtualAuthenticator: %v", err)
	}
	return id
}
