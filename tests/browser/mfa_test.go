package browser

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/pquerna/otp/totp"

	"github.com/berthhq/berth/cmd/berth/stacktest"
)

// totpNow is the authenticator's code for secret at t, as the user's phone would show it.
func totpNow(t *testing.T, secret string, at time.Time) string {
	t.Helper()
	code, err := totp.GenerateCode(secret, at)
	if err != nil {
		t.Fatal(err)
	}
	return code
}

// hostedLogin is the hosted page's link of type typ (signIn, signUp) for app's redirect URI, with
// state s and nonce n.
func hostedLogin(env stacktest.Env, app *callbackApp, typ string) string {
	return env.Stack.BaseURL + "/login?" + url.Values{
		"client_id": {env.App.AppID}, "state": {"s"}, "nonce": {"n"}, "type": {typ}, "redirect_uri": {app.redirectURI()},
	}.Encode()
}

// signUpAndLand signs a new user up on the hosted page at link and waits for the app's page.
func signUpAndLand(t *testing.T, ctx, browser context.Context, link, email string) {
	t.Helper()
	err := chromedp.Do(ctx, slices.Concat(
		[]chromedp.Action[chromedp.Void]{chromedp.Navigate(link)},
		signUpOnTheHostedPage("Second Factor", email),
		[]chromedp.Action[chromedp.Void]{chromedp.WaitVisible(chromedp.ID("signed-in"))},
	)...)
	if err != nil {
		t.Fatalf("sign up: %v\npage:\n%s", err, currentPage(browser))
	}
}

// enrolTOTPOnTheAccountPage signs the user in to the hosted account page and enrols an
// authenticator app: the QR code and the key are shown, the first code (computed as the phone
// would) and the password confirm it, and the ten recovery codes are shown once. It answers the
// key and the recovery codes, the browser back on the account page.
func enrolTOTPOnTheAccountPage(t *testing.T, ctx, browser context.Context, env stacktest.Env, email, password string) (string, []string) {
	t.Helper()
	err := chromedp.Do(ctx, slices.Concat(
		[]chromedp.Action[chromedp.Void]{chromedp.Navigate(env.Stack.BaseURL + "/account?client_id=" + env.App.AppID)},
		signInOnTheHostedPage(email, password),
		[]chromedp.Action[chromedp.Void]{
			chromedp.WaitVisible(chromedp.ID("start-totp")),
			chromedp.Click(chromedp.ID("start-totp")),
			chromedp.WaitVisible(chromedp.ID("totp-secret")),
		},
	)...)
	if err != nil {
		t.Fatalf("start the enrolment: %v\npage:\n%s", err, currentPage(browser))
	}
	secret, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("totp-secret")))
	if err != nil || secret == "" {
		t.Fatalf("the key shown: %q (%v)", secret, err)
	}
	qr, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll(".qr svg path").length`))
	if err != nil || qr != 1 {
		t.Errorf("the QR code is not drawn (%d paths, %v)", qr, err)
	}
	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("code"), totpNow(t, secret, time.Now())),
		chromedp.SendKeys(chromedp.ID("current_password"), password),
		chromedp.Click(chromedp.ID("confirm-totp")),
		chromedp.WaitVisible(chromedp.ID("recovery-codes")),
	)
	if err != nil {
		t.Fatalf("confirm the enrolment: %v\npage:\n%s", err, currentPage(browser))
	}
	recovery, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#recovery-codes code")].map(c => c.innerText)`))
	if err != nil || len(recovery) != 10 {
		t.Fatalf("recovery codes shown: %v (%v), want 10", recovery, err)
	}
	err = chromedp.Do(ctx, chromedp.Click(chromedp.ID("back")), chromedp.WaitVisible(chromedp.ID("regenerate-codes")))
	if err != nil {
		t.Fatalf("back to the account page: %v\npage:\n%s", err, currentPage(browser))
	}
	return secret, recovery
}

// amrOf reads the amr claim of an access token.
func amrOf(t *testing.T, jwt string) []string {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", jwt)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims struct {
		AMR []string `json:"amr"`
	}
	if err := json.Unmarshal(raw, &claims); err != nil {
		t.Fatal(err)
	}
	return claims.AMR
}

// The second factor end to end: a user enrols an authenticator app on the account page (the test
// computes the codes as the phone would), and from then on signing in asks for a code after the
// password; a recovery code works once and is refused the second time; the authenticator's next
// code signs in, and the tokens say two factors were proved.
func TestATOTPEnrolledOnTheAccountPageIsAskedForAtSignInAndARecoveryCodeWorksOnce(t *testing.T) {
	chromium := ensureChromium(t)
	app := newCallbackApp(t)
	env := stacktest.Start(t, "berth-browser-test", app.redirectURI())
	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 120*time.Second)
	defer cancel()
	email := "mfa-" + stacktest.RandomHex(4) + "@example.com"
	const password = "a long enough passphrase 42"
	loginURL := func(typ string) string { return hostedLogin(env, app, typ) }

	signUpAndLand(t, ctx, browser, loginURL("signUp"), email)
	access, _ := exchangeCode(t, env, landedQuery(t, app).Get("code"), app.redirectURI(), "s", "n")
	if got := amrOf(t, access); !slices.Equal(got, []string{"pwd"}) {
		t.Errorf("amr after the password alone = %v", got)
	}

	secret, recovery := enrolTOTPOnTheAccountPage(t, ctx, browser, env, email, password)

	// Signing in now asks for a code after the password. A recovery code works once ...
	askedForCode := slices.Concat(
		[]chromedp.Action[chromedp.Void]{chromedp.Navigate(loginURL("signIn"))},
		signInOnTheHostedPage(email, password),
		[]chromedp.Action[chromedp.Void]{chromedp.WaitVisible(chromedp.ID("code"))},
	)
	err := chromedp.Do(ctx, slices.Concat(askedForCode, []chromedp.Action[chromedp.Void]{
		chromedp.SendKeys(chromedp.ID("code"), recovery[0]),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.ID("signed-in")),
	})...)
	if err != nil {
		t.Fatalf("sign in with a recovery code: %v\npage:\n%s", err, currentPage(browser))
	}
	access, _ = exchangeCode(t, env, landedQuery(t, app).Get("code"), app.redirectURI(), "s", "n")
	if got := amrOf(t, access); !slices.Equal(got, []string{"pwd", "otp", "mfa"}) {
		t.Errorf("amr after a recovery code = %v", got)
	}

	// ... and is refused the second time, on the same page, which then takes the app's code.
	err = chromedp.Do(ctx, slices.Concat(askedForCode, []chromedp.Action[chromedp.Void]{
		chromedp.SendKeys(chromedp.ID("code"), recovery[0]),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(`p.alert`)),
	})...)
	if err != nil {
		t.Fatalf("a used recovery code: %v\npage:\n%s", err, currentPage(browser))
	}
	alert, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`p.alert`)))
	if !strings.Contains(alert, "This code is not correct") {
		t.Errorf("the used recovery code is answered %q", alert)
	}
	// The enrolment used the current time step: the next one is fresh and within the skew.
	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("code"), totpNow(t, secret, time.Now().Add(30*time.Second))),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.ID("signed-in")),
	)
	if err != nil {
		t.Fatalf("sign in with the authenticator's code: %v\npage:\n%s", err, currentPage(browser))
	}
	access, _ = exchangeCode(t, env, landedQuery(t, app).Get("code"), app.redirectURI(), "s", "n")
	if got := amrOf(t, access); !slices.Equal(got, []string{"pwd", "otp", "mfa"}) {
		t.Errorf("amr after the authenticator's code = %v", got)
	}
}
