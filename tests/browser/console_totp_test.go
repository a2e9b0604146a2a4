package browser

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/berthhq/berth/cmd/berth/stacktest"
)

// A console member's authenticator app end to end: the member enrols it on the security page (the
// key as a QR code and as text, the first code and the password confirm it, the recovery codes are
// shown once), signs out, and the password now leads to a second step that the authenticator's
// next code answers. Removing the app with the password turns the second step off: the next
// sign-in needs the password alone. Every page is checked with axe-core and photographed.
func TestAConsoleMemberEnrolsTOTPSignsInWithACodeAndRemovingItTurnsTheSecondStepOffInChromium(t *testing.T) {
	chromium := ensureChromium(t)
	check := newConsoleCheck(t)
	env := stacktest.Start(t, "berth-browser-test", "https://app.example.com/callback")
	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 180*time.Second)
	defer cancel()
	fail := failWithPage(t, browser)
	security := env.Stack.BaseURL + "/console/security"
	signOutAndIn := func(then chromedp.Action[chromedp.Void]) error {
		return chromedp.Do(ctx,
			chromedp.Click(chromedp.ID("sign-out")),
			chromedp.WaitVisible(chromedp.ID("sign-in")),
			submitConsoleSignIn(env),
			then,
		)
	}

	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), signInToConsole(env), chromedp.Navigate(security),
		chromedp.WaitVisible(chromedp.ID("start-totp")), chromedp.Click(chromedp.ID("start-totp")),
		chromedp.WaitVisible(chromedp.ID("totp-secret"))); err != nil {
		fail("start the enrolment", err)
	}
	check.page(ctx, "security-totp-key")
	secret, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("totp-secret")))
	if err != nil || secret == "" {
		t.Fatalf("the key shown: %q (%v)", secret, err)
	}
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("code"), totpNow(t, secret, time.Now())),
		chromedp.SendKeys(chromedp.ID("current_password"), env.App.Console.Password),
		chromedp.Click(chromedp.ID("confirm-totp")),
		chromedp.WaitVisible(chromedp.ID("recovery-codes")),
	); err != nil {
		fail("confirm the enrolment", err)
	}
	check.page(ctx, "security-totp-codes")

	// The code after the one that confirmed the enrolment (a code is good once).
	if err := signOutAndIn(chromedp.WaitVisible(chromedp.ID("verify"))); err != nil {
		fail("sign in to the second step", err)
	}
	check.page(ctx, "second-factor-totp")
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("code"), totpNow(t, secret, time.Now().Add(30*time.Second))),
		chromedp.Click(chromedp.ID("verify")),
		chromedp.WaitVisible(chromedp.ID("apps")),
	); err != nil {
		fail("sign in with the authenticator's code", err)
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(security), chromedp.WaitVisible(chromedp.ID("remove-totp"))); err != nil {
		fail("open the security page with the authenticator app set up", err)
	}
	check.page(ctx, "security-totp-on")
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("remove-totp-password"), env.App.Console.Password),
		chromedp.Click(chromedp.ID("remove-totp-submit")),
		chromedp.WaitVisible(chromedp.ID("start-totp")),
	); err != nil {
		fail("remove the authenticator app", err)
	}
	check.page(ctx, "security-totp-removed")
	if err := signOutAndIn(chromedp.WaitVisible(chromedp.ID("apps"))); err != nil {
		fail("sign in without the second step", err)
	}
}
