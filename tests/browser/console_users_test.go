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
	fail := func(step string, err error) {
		t.Helper()
		t.Fatalf("%s: %v\npage:\n%s", step, err, currentPage(browser))
	}
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
