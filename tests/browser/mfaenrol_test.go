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

// Once the app requires a second factor, a user without one enrols at the next sign-in and may
// choose a passkey instead of an authenticator app: Chromium's virtual authenticator creates it,
// the page shows the recovery codes once, and the sign-in continues to the app with a code whose
// tokens say a key was proved besides the password. The next sign-in asks for that passkey.
func TestARequiredMFAUserEnrolsAPasskeyAtSignInAndLandsOnTheAppWithACodeInChromium(t *testing.T) {
	chromium := ensureChromium(t)
	app := newCallbackApp(t)
	// Passkeys are bound to a host name: the stack is served as localhost, not 127.0.0.1.
	env := stacktest.StartWith(t, stacktest.Options{Issuer: "berth-browser-test", RedirectURI: app.redirectURI(), Localhost: true})
	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 120*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatal(err)
	}
	authenticator := virtualAuthenticator(ctx, t)
	email := "enrol-" + stacktest.RandomHex(4) + "@example.com"
	const password = "a long enough passphrase 42"
	step := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v\npage:\n%s", what, err, currentPage(browser))
		}
	}
	signUpAndLand(t, ctx, browser, hostedLogin(env, app, "signUp"), email)
	landedQuery(t, app)

	admin, cancelAdmin := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancelAdmin()
	if _, err := env.Admin.Identity.SetAppMfa(admin, &identityv1.SetAppMfaRequest{AppId: env.App.AppID, Policy: "required"}); err != nil {
		t.Fatal(err)
	}

	signIn := slices.Concat([]chromedp.Action[chromedp.Void]{chromedp.Navigate(hostedLogin(env, app, "signIn"))}, signInOnTheHostedPage(email, password))
	step("sign in: the enrolment", slices.Concat(signIn, []chromedp.Action[chromedp.Void]{chromedp.WaitVisible(chromedp.ID("totp-secret")),
		chromedp.WaitVisible(chromedp.ID("passkey-button"))})...)
	if label, _ := chromedp.Run(ctx, chromedp.Text(chromedp.ID("passkey-button"))); !strings.Contains(label, "Create a passkey") {
		t.Errorf("the enrolment's passkey button says %q", label)
	}
	step("create the passkey", chromedp.Click(chromedp.ID("passkey-button")), chromedp.WaitVisible(chromedp.ID("recovery-codes")))
	stored, err := chromedp.Call(ctx, webauthn.GetCredentials, webauthn.GetCredentialsParams(authenticator))
	if err != nil || len(stored.Credentials) != 1 || stored.Credentials[0].RpID != "localhost" {
		t.Fatalf("the authenticator holds %+v (%v), want the new passkey for localhost", stored, err)
	}
	codes, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#recovery-codes code").length`))
	if err != nil || codes != 10 {
		t.Errorf("recovery codes shown: %d (%v), want 10", codes, err)
	}
	step("continue to the app", chromedp.Click(chromedp.ID("continue")), chromedp.WaitVisible(chromedp.ID("signed-in")))
	q := landedQuery(t, app)
	if q.Get("code") == "" || q.Get("state") != "s" || q.Get("service") != "email" {
		t.Fatalf("the enrolment landed with %v, want a code, the request's state and service=email", q)
	}
	access, _ := exchangeCode(t, env, q.Get("code"), app.redirectURI(), "s", "n")
	if got := amrOf(t, access); !slices.Equal(got, []string{"pwd", "hwk", "mfa"}) {
		t.Errorf("amr after the enrolment = %v, want [pwd hwk mfa]", got)
	}

	step("the next sign-in asks for the passkey", slices.Concat(signIn, []chromedp.Action[chromedp.Void]{
		chromedp.WaitVisible(chromedp.ID("passkey-button")),
		chromedp.Click(chromedp.ID("passkey-button")),
		chromedp.WaitVisible(chromedp.ID("signed-in")),
	})...)
	landedQuery(t, app)
}
