package browser

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/berthhq/berth/cmd/berth/stacktest"
)

// signInOnTheHostedPage fills the sign-in form the browser shows.
func signInOnTheHostedPage(email, password string) []chromedp.Action[chromedp.Void] {
	return []chromedp.Action[chromedp.Void]{
		chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), email),
		chromedp.SendKeys(chromedp.ID("password"), password),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
	}
}

// The account page end to end: it signs in through the hosted login page, shows the email,
// changes the password (after which an older session's refresh token fails at route 1 and the new
// password signs in), ends a session, and speaks German with language=de.
func TestTheAccountPageInChromiumChangesThePasswordAndEndsSessions(t *testing.T) {
	chromium := ensureChromium(t)
	app := newCallbackApp(t)
	env := stacktest.Start(t, "berth-browser-test", app.redirectURI())
	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 90*time.Second)
	defer cancel()
	email := "account-" + stacktest.RandomHex(4) + "@example.com"
	const oldPassword, newPassword = "a long enough passphrase 42", "another passphrase for 2027"
	loginURL := func(typ string) string {
		return env.Stack.BaseURL + "/login?" + url.Values{
			"client_id": {env.App.AppID}, "state": {"s"}, "nonce": {"n"}, "type": {typ}, "redirect_uri": {app.redirectURI()},
		}.Encode()
	}
	accountURL := env.Stack.BaseURL + "/account?client_id=" + env.App.AppID

	// A session of the app, started with the old password.
	err := chromedp.Do(ctx, slices.Concat(
		[]chromedp.Action[chromedp.Void]{chromedp.Navigate(loginURL("signUp"))},
		signUpOnTheHostedPage("Account Test", email),
		[]chromedp.Action[chromedp.Void]{chromedp.WaitVisible(chromedp.ID("signed-in"))},
	)...)
	if err != nil {
		t.Fatalf("sign up: %v\npage:\n%s", err, currentPage(browser))
	}
	_, older := exchangeCode(t, env, landedQuery(t, app).Get("code"), app.redirectURI(), "s", "n")

	// The account page sends the browser to sign in, then shows the email.
	err = chromedp.Do(ctx, slices.Concat(
		[]chromedp.Action[chromedp.Void]{chromedp.Navigate(accountURL)},
		signInOnTheHostedPage(email, oldPassword),
		// dd#email: the sign-in form's own #email input is visible until the browser leaves it.
		[]chromedp.Action[chromedp.Void]{chromedp.WaitVisible(chromedp.CSS("dd#email"))},
	)...)
	if err != nil {
		t.Fatalf("sign in to the account page: %v\npage:\n%s", err, currentPage(browser))
	}
	shown, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("dd#email")))
	if err != nil || !strings.Contains(shown, email) {
		t.Fatalf("the account page shows %q (%v), want %s", shown, err, email)
	}
	sessions, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("form.session").length`))
	if err != nil || sessions != 1 {
		t.Errorf("the page lists %d sessions (%v), want the app's one (its own sign-in keeps none)\npage:\n%s", sessions, err, currentPage(browser))
	}

	// Change the password.
	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("current_password"), oldPassword),
		chromedp.SendKeys(chromedp.ID("new_password"), newPassword),
		chromedp.Click(chromedp.ID("change-password")),
		chromedp.WaitVisible(chromedp.CSS(`p.ok`)),
	)
	if err != nil {
		t.Fatalf("change the password: %v\npage:\n%s", err, currentPage(browser))
	}
	if got := refreshStatus(t, env, older); got != http.StatusBadRequest {
		t.Errorf("refresh with the older session's token after the change = %d, want 400", got)
	}

	// The new password signs in to the app.
	err = chromedp.Do(ctx, slices.Concat(
		[]chromedp.Action[chromedp.Void]{chromedp.Navigate(loginURL("signIn"))},
		signInOnTheHostedPage(email, newPassword),
		[]chromedp.Action[chromedp.Void]{chromedp.WaitVisible(chromedp.ID("signed-in"))},
	)...)
	if err != nil {
		t.Fatalf("sign in with the new password: %v\npage:\n%s", err, currentPage(browser))
	}
	_, newer := exchangeCode(t, env, landedQuery(t, app).Get("code"), app.redirectURI(), "s", "n")

	// End that session on the account page (still signed in: its cookie lives 15 minutes).
	err = chromedp.Do(ctx,
		chromedp.Navigate(accountURL),
		chromedp.WaitVisible(chromedp.CSS(`form.session button`)),
		chromedp.Click(chromedp.CSS(`form.session button`)),
		chromedp.WaitVisible(chromedp.CSS(`p.ok`)),
	)
	if err != nil {
		t.Fatalf("end the session: %v\npage:\n%s", err, currentPage(browser))
	}
	if left, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("form.session").length`)); err != nil || left != 0 {
		t.Errorf("%d sessions left (%v) after ending the only one", left, err)
	}
	if got := refreshStatus(t, env, newer); got != http.StatusBadRequest {
		t.Errorf("refresh of the ended session = %d, want 400", got)
	}

	// The page in German.
	err = chromedp.Do(ctx, chromedp.Navigate(accountURL+"&language=de"), chromedp.WaitVisible(chromedp.CSS("dd#email")))
	if err != nil {
		t.Fatalf("open the German page: %v\npage:\n%s", err, currentPage(browser))
	}
	type german struct{ Lang, Heading, Button string }
	got, err := chromedp.Run(ctx, chromedp.Evaluate[german](`({
		Lang: document.documentElement.lang,
		Heading: document.querySelector("h1").innerText,
		Button: document.getElementById("change-password").innerText,
	})`))
	if want := (german{Lang: "de", Heading: "Dein Konto", Button: "Passwort ändern"}); err != nil || got != want {
		t.Errorf("the German page shows %+v (%v), want %+v", got, err, want)
	}
}

// An unverified user asks the account page for a new verification mail: a new mail arrives, its
// link confirms the address, and the page then shows it verified without the button.
func TestTheAccountPageInChromiumResendsTheVerificationMailAndItsLinkVerifies(t *testing.T) {
	chromium := ensureChromium(t)
	app := newCallbackApp(t)
	env := stacktest.Start(t, "berth-browser-test", app.redirectURI()) // optional policy: sign-up signs in unverified
	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 90*time.Second)
	defer cancel()
	email := "resend-" + stacktest.RandomHex(4) + "@example.com"
	signUpURL := env.Stack.BaseURL + "/login?" + url.Values{
		"client_id": {env.App.AppID}, "state": {"s"}, "nonce": {"n"}, "type": {"signUp"}, "redirect_uri": {app.redirectURI()},
	}.Encode()
	accountURL := env.Stack.BaseURL + "/account?client_id=" + env.App.AppID

	err := chromedp.Do(ctx, slices.Concat(
		[]chromedp.Action[chromedp.Void]{chromedp.Navigate(signUpURL)},
		signUpOnTheHostedPage("Resend Test", email),
		[]chromedp.Action[chromedp.Void]{chromedp.WaitVisible(chromedp.ID("signed-in"))},
	)...)
	if err != nil {
		t.Fatalf("sign up: %v\npage:\n%s", err, currentPage(browser))
	}
	<-app.queries
	first := verifyLink.FindString(mailTo(t, env, email).Text)
	if first == "" {
		t.Fatal("the sign-up mailed no verification link")
	}

	err = chromedp.Do(ctx, slices.Concat(
		[]chromedp.Action[chromedp.Void]{chromedp.Navigate(accountURL)},
		signInOnTheHostedPage(email, "a long enough passphrase 42"),
		[]chromedp.Action[chromedp.Void]{
			chromedp.WaitVisible(chromedp.ID("resend-verification")),
			chromedp.Click(chromedp.ID("resend-verification")),
			chromedp.WaitVisible(chromedp.CSS(`p.ok`)),
		},
	)...)
	if err != nil {
		t.Fatalf("resend on the account page: %v\npage:\n%s", err, currentPage(browser))
	}
	var link string
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		link = verifyLink.FindString(mailTo(t, env, email).Text)
		if link != first || time.Now().After(deadline) {
			break
		}
	}
	if link == "" || link == first {
		t.Fatalf("no new verification mail after the resend (newest link %q)", link)
	}

	err = chromedp.Do(ctx,
		chromedp.Navigate(link),
		chromedp.WaitVisible(chromedp.CSS(`button[type="submit"]`)),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
	)
	if err != nil {
		t.Fatalf("confirm by the new link: %v\npage:\n%s", err, currentPage(browser))
	}
	// The confirmation answers the "confirmed" page; the browser may still be navigating there.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		title, err := chromedp.Run(ctx, chromedp.Title())
		if err == nil && title == "Email address confirmed" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the confirmation did not answer the confirmed page (%q, %v)\npage:\n%s", title, err, currentPage(browser))
		}
	}
	if v := userVerified(t, env, email); v != true {
		t.Fatalf("route 14 emailVerified after the resent link = %v, want true", v)
	}
	err = chromedp.Do(ctx, chromedp.Navigate(accountURL), chromedp.WaitVisible(chromedp.CSS("dd#email")))
	if err != nil {
		t.Fatalf("reopen the account page: %v\npage:\n%s", err, currentPage(browser))
	}
	type state struct {
		Email  string
		Button bool
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[state](`({
		Email: document.getElementById("email").innerText,
		Button: document.getElementById("resend-verification") !== null,
	})`))
	if err != nil || !strings.Contains(got.Email, "(verified)") || got.Button {
		t.Errorf("the account page after verifying shows %+v (%v), want verified and no resend button", got, err)
	}
}
