package browser

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"github.com/berthhq/berth/cmd/berth/stacktest"
)

// A console member's passkey end to end, through Chromium's virtual authenticator: the member
// adds a passkey on the security page (the account's first second factor, so the recovery codes
// are shown once), signs out, signs in with the password and is offered the passkey beside the
// code field; the passkey lands them on the console. Removing it (with the password) drops the
// offer: the next sign-in needs the password alone. Every page is checked with axe-core and
// photographed at 1280 and 390 px.
func TestAConsoleMemberAddsAPasskeySignsInWithItAndRemovingItDropsTheOfferInChromium(t *testing.T) {
	chromium := ensureChromium(t)
	check := newConsoleCheck(t)
	// Passkeys are bound to a host name: the stack is served as localhost, not 127.0.0.1.
	env := stacktest.StartWith(t, stacktest.Options{Issuer: "berth-browser-test", RedirectURI: "https://app.example.com/callback", Localhost: true})
	if !strings.HasPrefix(env.App.Console.URL, "http://localhost:") {
		t.Fatalf("the console is served at %s, want localhost", env.App.Console.URL)
	}
	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 180*time.Second)
	defer cancel()
	fail := failWithPage(t, browser)
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	authenticator := virtualAuthenticator(ctx, t)
	security := env.Stack.BaseURL + "/console/security"

	if err := chromedp.Do(ctx, signInToConsole(env), chromedp.Navigate(security), chromedp.WaitVisible(chromedp.ID("passkey-button"))); err != nil {
		fail("open the security page", err)
	}
	check.page(ctx, "security-passkeys")
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("passkey-name"), "Work laptop"),
		chromedp.SendKeys(chromedp.ID("passkey-password"), env.App.Console.Password),
		chromedp.Click(chromedp.ID("passkey-button")),
		chromedp.WaitVisible(chromedp.ID("recovery-codes")),
	); err != nil {
		fail("add a passkey", err)
	}
	check.page(ctx, "security-passkey-codes")
	stored, err := chromedp.Call(ctx, webauthn.GetCredentials, webauthn.GetCredentialsParams(authenticator))
	if err != nil || len(stored.Credentials) != 1 || stored.Credentials[0].RpID != "localhost" {
		t.Fatalf("the authenticator holds %+v (%v), want one passkey of the console's host", stored, err)
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(security), chromedp.WaitVisible(chromedp.ID("passkeys"))); err != nil {
		fail("list the passkeys", err)
	}
	if listed, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("passkeys"))); !strings.Contains(listed, "Work laptop") {
		t.Errorf("the passkeys listed are %q, want Work laptop", listed)
	}
	check.page(ctx, "security-passkey-listed")

	// Signed out, the password leads to the second step, where the passkey answers.
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.ID("sign-out")),
		chromedp.WaitVisible(chromedp.ID("sign-in")),
		submitConsoleSignIn(env),
		chromedp.WaitVisible(chromedp.ID("passkey-button")),
	); err != nil {
		fail("sign in to the second step", err)
	}
	check.page(ctx, "second-factor-passkey")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("passkey-button")), chromedp.WaitVisible(chromedp.ID("apps"))); err != nil {
		fail("sign in with the passkey", err)
	}

	// Removing the passkey, its last second factor, drops the offer: the password alone signs in.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(security),
		chromedp.WaitVisible(chromedp.ID("remove-passkey")),
		chromedp.SendKeys(chromedp.ID("remove-password"), env.App.Console.Password),
		chromedp.Click(chromedp.ID("remove-passkey-submit")),
		chromedp.WaitVisible(chromedp.ID("no-passkeys")),
	); err != nil {
		fail("remove the passkey", err)
	}
	check.page(ctx, "security-passkey-removed")
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.ID("sign-out")),
		chromedp.WaitVisible(chromedp.ID("sign-in")),
		submitConsoleSignIn(env),
		chromedp.WaitVisible(chromedp.ID("apps")),
	); err != nil {
		fail("sign in without the passkey", err)
	}
}
