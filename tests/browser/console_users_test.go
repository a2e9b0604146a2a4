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
	"github.com/berthhq/berth/pkg/testkit"
)

// meStatus is the status of the signed-in user's route (GET /v1/users/me, route 14's user) with
// the user's access token.
func meStatus(t *testing.T, env stacktest.Env, accessToken string) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, env.Stack.BaseURL+"/v1/users/me", nil)
	req.Header.Set("Authorization", "Bearer "+accessToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET /v1/users/me: %v", err)
	}
	_ = res.Body.Close()
	return res.StatusCode
}

// The console's users pages end to end: a user signs up on the hosted page; the member signs in
// to the console, finds the user by an email prefix and opens them; freezing makes the user's
// token refused on the me route and their refresh fail, unfreezing lets the token through again;
// ending every session makes a later sign-in's refresh token fail; a deletion with a mistyped
// address is refused and deletes nothing, with the address typed out the user is gone. Every page
// is checked with axe-core and photographed at 1280 and 390 px.
func TestConsoleUsersInChromiumFindsFreezesEndsSessionsAndDeletesAUser(t *testing.T) {
	chromium := ensureChromium(t)
	check := newConsoleCheck(t)
	app := newCallbackApp(t)
	env := stacktest.Start(t, "berth-browser-test", app.redirectURI())
	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 240*time.Second)
	defer cancel()
	base := env.Stack.BaseURL
	fail := failWithPage(t, browser)
	loginURL := func(typ string) string {
		return base + "/login?" + url.Values{
			"client_id": {env.App.AppID}, "state": {"s"}, "nonce": {"n"}, "type": {typ}, "redirect_uri": {app.redirectURI()},
		}.Encode()
	}
	prefix := "frozen-" + stacktest.RandomHex(4)
	email := prefix + "@example.com"

	// The user signs up and holds an access and a refresh token.
	if err := chromedp.Do(ctx, slices.Concat(
		[]chromedp.Action[chromedp.Void]{chromedp.EmulateViewport(1280, 900), chromedp.Navigate(loginURL("signUp"))},
		signUpOnTheHostedPage("Frozen User", email),
		[]chromedp.Action[chromedp.Void]{chromedp.WaitVisible(chromedp.ID("signed-in"))},
	)...); err != nil {
		fail("sign up", err)
	}
	access, refresh := exchangeCode(t, env, landedQuery(t, app).Get("code"), app.redirectURI(), "s", "n")
	if got := meStatus(t, env, access); got != http.StatusOK {
		t.Fatalf("the new user's me route = %d, want 200", got)
	}

	// The member signs in and goes from the app page to its users.
	if err := chromedp.Do(ctx,
		signInToConsole(env),
		chromedp.Navigate(base+"/console/apps/"+env.App.AppID),
		chromedp.WaitVisible(chromedp.ID("users-link")),
		chromedp.Click(chromedp.ID("users-link")),
		chromedp.WaitVisible(chromedp.ID("search")),
	); err != nil {
		fail("open the users page", err)
	}
	check.page(ctx, "users")

	// The email prefix finds exactly the new user; their page shows the session of the sign-up.
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("q"), prefix),
		chromedp.Click(chromedp.ID("search")),
		// The page before the search lists every user: wait for the answer, whose field holds the query.
		chromedp.WaitVisible(chromedp.CSS(`#q[value="`+prefix+`"]`)),
	); err != nil {
		fail("search the user", err)
	}
	if rows, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll("#users tbody tr a")].map(a => a.textContent)`)); err != nil || len(rows) != 1 || rows[0] != email {
		t.Fatalf("the search for %q lists %v (%v), want only %s", prefix, rows, err, email)
	}
	check.page(ctx, "users-found")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#users tbody tr a")), chromedp.WaitVisible(chromedp.ID("user-email"))); err != nil {
		fail("open the user", err)
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#sessions tr[data-session]").length`)); err != nil || n != 1 {
		t.Errorf("the user page lists %d sessions (%v), want the sign-up's one", n, err)
	}
	check.page(ctx, "user")
	userURL, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		fail("read the user page's address", err)
	}

	// Frozen, the user's token is refused and their session cannot refresh.
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.ID("freeze-confirm")),
		chromedp.Click(chromedp.ID("freeze")),
		chromedp.WaitVisible(chromedp.ID("unfreeze")),
	); err != nil {
		fail("freeze the user", err)
	}
	if state, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("user-state"))); err != nil || state != "frozen" {
		t.Errorf("the frozen user's state reads %q (%v)", state, err)
	}
	check.page(ctx, "user-frozen")
	if got := meStatus(t, env, access); got != http.StatusForbidden {
		t.Errorf("the frozen user's me route = %d, want 403", got)
	}
	if got := refreshStatus(t, env, refresh); got == http.StatusCreated {
		t.Error("the frozen user's refresh token still refreshes")
	}

	// Unfrozen, the same access token is accepted again.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("unfreeze")), chromedp.WaitVisible(chromedp.ID("freeze"))); err != nil {
		fail("unfreeze the user", err)
	}
	if got := meStatus(t, env, access); got != http.StatusOK {
		t.Errorf("the unfrozen user's me route = %d, want 200", got)
	}

	// A new sign-in's session ends when the member ends every session.
	other := newBrowser(t, chromium)
	octx, ocancel := context.WithTimeout(other, 60*time.Second)
	defer ocancel()
	if err := chromedp.Do(octx, slices.Concat(
		[]chromedp.Action[chromedp.Void]{chromedp.Navigate(loginURL("signIn"))},
		signInOnTheHostedPage(email, "a long enough passphrase 42"),
		[]chromedp.Action[chromedp.Void]{chromedp.WaitVisible(chromedp.ID("signed-in"))},
	)...); err != nil {
		t.Fatalf("sign in again: %v\npage:\n%s", err, currentPage(other))
	}
	_, refresh = exchangeCode(t, env, landedQuery(t, app).Get("code"), app.redirectURI(), "s", "n")
	if err := chromedp.Do(ctx,
		chromedp.Navigate(userURL),
		chromedp.WaitVisible(chromedp.CSS("#sessions tr[data-session]")),
		chromedp.Click(chromedp.ID("revoke-confirm")),
		chromedp.Click(chromedp.ID("revoke-sessions")),
		chromedp.WaitVisible(chromedp.ID("no-sessions")),
	); err != nil {
		fail("end every session", err)
	}
	if got := refreshStatus(t, env, refresh); got == http.StatusCreated {
		t.Error("a session the member ended still refreshes")
	}

	// A mistyped address deletes nothing; the address typed out deletes the user.
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("confirm_email"), "someone-else@example.com"),
		chromedp.Click(chromedp.ID("delete")),
		chromedp.WaitVisible(chromedp.ID("user-problem")),
	); err != nil {
		fail("delete with a mistyped address", err)
	}
	check.page(ctx, "user-delete-refused")
	if state, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("user-state"))); err != nil || state != "active" {
		t.Errorf("after a mistyped deletion the user's state reads %q (%v), want active", state, err)
	}
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("confirm_email"), strings.ToUpper(email)),
		chromedp.Click(chromedp.ID("delete")),
		chromedp.WaitVisible(chromedp.CSS(`p.ok[role="status"]`)),
		chromedp.WaitVisible(chromedp.ID("search")),
	); err != nil {
		fail("delete the user", err)
	}
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("q"), prefix),
		chromedp.Click(chromedp.ID("search")),
		chromedp.WaitVisible(chromedp.ID("no-users")),
	); err != nil {
		fail("search the deleted user", err)
	}
	check.page(ctx, "users-none")
	if got := meStatus(t, env, access); got == http.StatusOK {
		t.Error("the deleted user's token still reads the me route")
	}
}

// The user page's mail and second-factor actions end to end, each seen by its effect: "Send the
// verification mail again" mails a fresh link that verifies the address (the page then says so,
// and route 14 too); "Send a password reset" mails a link whose new password signs the user in
// (and the old one no longer does); with an authenticator enrolled on the account page the
// sign-in asks for a code until the member removes the second factors, after which the password
// alone signs in. Every page is checked with axe-core and photographed at 1280 and 390 px.
func TestConsoleUsersInChromiumResendsVerificationSendsAResetAndRemovesTheSecondFactors(t *testing.T) {
	chromium := ensureChromium(t)
	check := newConsoleCheck(t)
	app := newCallbackApp(t)
	env := stacktest.Start(t, "berth-browser-test", app.redirectURI())
	console := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(console, 240*time.Second)
	defer cancel()
	person := newBrowser(t, chromium)
	pctx, pcancel := context.WithTimeout(person, 240*time.Second)
	defer pcancel()
	step := func(browser context.Context, what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(browser, actions...); err != nil {
			t.Fatalf("%s: %v\npage:\n%s", what, err, currentPage(browser))
		}
	}
	email := "mailed-" + stacktest.RandomHex(4) + "@example.com"
	const password = "a long enough passphrase 42"
	signIn := func(pw string) []chromedp.Action[chromedp.Void] {
		return slices.Concat([]chromedp.Action[chromedp.Void]{chromedp.Navigate(hostedLogin(env, app, "signIn"))}, signInOnTheHostedPage(email, pw))
	}

	// The user signs up; the address is not verified yet.
	signUpAndLand(t, pctx, person, hostedLogin(env, app, "signUp"), email)
	landedQuery(t, app)
	if v := userVerified(t, env, email); v != false {
		t.Fatalf("email_verified after the sign-up = %v, want false", v)
	}

	// The member finds the user and opens their page.
	step(ctx, "open the user",
		chromedp.EmulateViewport(1280, 900),
		signInToConsole(env),
		chromedp.Navigate(env.Stack.BaseURL+"/console/apps/"+env.App.AppID+"/users?"+url.Values{"q": {email}}.Encode()),
		chromedp.WaitVisible(chromedp.CSS("#users tbody tr a")),
		chromedp.Click(chromedp.CSS("#users tbody tr a")),
		chromedp.WaitVisible(chromedp.ID("resend-verification")),
	)
	userURL, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	userURL, _, _ = strings.Cut(userURL, "?")
	verified := func() string {
		t.Helper()
		step(ctx, "reload the user", chromedp.Navigate(userURL), chromedp.WaitVisible(chromedp.ID("email-verified")))
		v, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("email-verified")))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(v)
	}
	if v := verified(); v != "no" {
		t.Fatalf("the user page shows the address verified %q before the mail, want no", v)
	}
	check.page(ctx, "user-unverified")

	// The verification mail again: a new mail whose link verifies the address.
	before := len(mailsTo(t, env, email))
	step(ctx, "resend the verification mail", chromedp.Click(chromedp.ID("resend-verification")), chromedp.WaitVisible(chromedp.CSS(`p.ok[role="status"]`)))
	check.page(ctx, "user-verification-sent")
	link := verifyLink.FindString(newMailTo(t, env, email, before).Text)
	if link == "" {
		t.Fatal("the resent mail has no verification link")
	}
	step(pctx, "follow the verification link",
		chromedp.Navigate(link),
		chromedp.WaitVisible(chromedp.CSS(`button[type="submit"]`)),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
	)
	testkit.Eventually(t, "route 14 says the address is verified", func() bool { return userVerified(t, env, email) == true })
	if v := verified(); v != "yes" {
		t.Errorf("after the link the user page shows the address verified %q, want yes", v)
	}
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#resend-verification").length`)); err != nil || n != 0 {
		t.Errorf("a verified user still offers the verification mail (%d, %v)", n, err)
	}

	// A password reset: its link sets a new password, which signs in; the old one no longer does.
	before = len(mailsTo(t, env, email))
	step(ctx, "send a reset", chromedp.Click(chromedp.ID("send-reset")), chromedp.WaitVisible(chromedp.CSS(`p.ok[role="status"]`)))
	check.page(ctx, "user-reset-sent")
	reset := mailedResetLink.FindString(newMailTo(t, env, email, before).Text)
	if reset == "" {
		t.Fatal("the reset mail has no link")
	}
	const newPassword = "a different passphrase 43"
	step(pctx, "set the new password",
		chromedp.Navigate(reset),
		chromedp.WaitVisible(chromedp.ID("password")),
		chromedp.SendKeys(chromedp.ID("password"), newPassword),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
		chromedp.WaitNotPresent(chromedp.ID("password")),
	)
	person = newBrowser(t, chromium) // a fresh profile: no session of the reset's sign-in
	pctx, pcancel = context.WithTimeout(person, 180*time.Second)
	defer pcancel()
	step(pctx, "the old password is refused", slices.Concat(signIn(password), []chromedp.Action[chromedp.Void]{chromedp.WaitVisible(chromedp.CSS(`p.alert`))})...)
	step(pctx, "sign in with the new password", slices.Concat(signIn(newPassword), []chromedp.Action[chromedp.Void]{chromedp.WaitVisible(chromedp.ID("signed-in"))})...)
	landedQuery(t, app)

	// An authenticator enrolled, the sign-in asks for its code ...
	enrolTOTPOnTheAccountPage(t, pctx, person, env, email, newPassword)
	person = newBrowser(t, chromium)
	pctx, pcancel = context.WithTimeout(person, 120*time.Second)
	defer pcancel()
	step(pctx, "the sign-in asks for a code", slices.Concat(signIn(newPassword), []chromedp.Action[chromedp.Void]{chromedp.WaitVisible(chromedp.ID("code"))})...)
	step(ctx, "see the factor", chromedp.Navigate(userURL), chromedp.WaitVisible(chromedp.CSS("#factors tbody tr")))
	check.page(ctx, "user-factors")

	// ... until the member removes the second factors: then the password alone lands on the app.
	step(ctx, "remove the second factors",
		chromedp.Click(chromedp.ID("factors-confirm")),
		chromedp.Click(chromedp.ID("reset-factors")),
		chromedp.WaitVisible(chromedp.ID("no-factors")),
	)
	check.page(ctx, "user-factors-removed")
	person = newBrowser(t, chromium)
	pctx, pcancel = context.WithTimeout(person, 60*time.Second)
	defer pcancel()
	step(pctx, "sign in without a code", slices.Concat(signIn(newPassword), []chromedp.Action[chromedp.Void]{chromedp.WaitVisible(chromedp.ID("signed-in"))})...)
	if q := landedQuery(t, app); q.Get("code") == "" {
		t.Errorf("the sign-in without a code landed with %v", q)
	}
}
