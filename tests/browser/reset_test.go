package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/berthhq/berth/cmd/berth/allinone"
	"github.com/berthhq/berth/cmd/berth/stacktest"
)

// refreshStatus is route 1's status for a refresh as the published browser SDK sends it.
func refreshStatus(t *testing.T, env stacktest.Env, refreshToken string) int {
	t.Helper()
	body, _ := json.Marshal(map[string]string{
		"client_id": env.App.AppID, "grant_type": "authorization_code", "refresh_token": refreshToken, "nonce": stacktest.RandomHex(16),
	})
	res, err := http.Post(env.Stack.BaseURL+"/api/v1/tokens", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("POST /api/v1/tokens: %v", err)
	}
	_ = res.Body.Close()
	return res.StatusCode
}

// landedQuery waits for the app's callback and returns its query.
func landedQuery(t *testing.T, app *callbackApp) url.Values {
	t.Helper()
	select {
	case q := <-app.queries:
		return q
	case <-time.After(5 * time.Second):
		t.Fatal("the app's callback was never requested")
		return nil
	}
}

var mailedResetLink = regexp.MustCompile(`https?://\S+/login/recover\?\S+`)

func TestForgottenPasswordInChromiumIsResetByTheMailedLinkEndsTheOldSessionAndContinuesToTheApp(t *testing.T) {
	chromium := ensureChromium(t)
	for _, store := range []string{"memory", "postgres"} {
		t.Run(store, func(t *testing.T) { resetInChromium(t, chromium, store == "postgres", false) })
	}
}

// The same reset with the mail's 6-digit code typed on the "check your inbox" page instead of
// the link: the code opens the new-password form of the same flow.
func TestForgottenPasswordInChromiumIsResetByTheTypedCodeEndsTheOldSessionAndContinuesToTheApp(t *testing.T) {
	chromium := ensureChromium(t)
	resetInChromium(t, chromium, false, true)
}

// resetMailTo waits for the password-reset mail to email (the sign-up's verification mail may be
// the newest until it arrives).
func resetMailTo(t *testing.T, env stacktest.Env, email string) keptMail {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if m := mailTo(t, env, email); mailedResetLink.MatchString(m.Text) {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("no password-reset mail to %s", email)
		}
	}
}

func resetInChromium(t *testing.T, chromium string, postgres, byCode bool) {
	app := newCallbackApp(t)
	env := stacktest.StartWith(t, stacktest.Options{Issuer: "berth-browser-test", RedirectURI: app.redirectURI(), Postgres: postgres})
	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 90*time.Second)
	defer cancel()
	loginURL := func(typ, state, nonce string) string {
		return env.Stack.BaseURL + "/login?" + url.Values{
			"client_id": {env.App.AppID}, "state": {state}, "type": {typ}, "redirect_uri": {app.redirectURI()}, "nonce": {nonce},
		}.Encode()
	}
	run := func(step string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v\npage:\n%s", step, err, currentPage(browser))
		}
	}

	// A user signs up and the app holds the session's refresh token.
	email := "reset-" + stacktest.RandomHex(4) + "@example.com"
	state, nonce := stacktest.RandomHex(16), stacktest.RandomHex(16)
	run("sign up", slices.Concat(
		[]chromedp.Action[chromedp.Void]{chromedp.Navigate(loginURL("signUp", state, nonce))},
		signUpOnTheHostedPage("Reset Test", email),
		[]chromedp.Action[chromedp.Void]{chromedp.WaitVisible(chromedp.ID("signed-in"))},
	)...)
	_, oldRefresh := exchangeCode(t, env, landedQuery(t, app).Get("code"), app.redirectURI(), state, nonce)

	// Later, on the sign-in page: "Forgot your password?", the address, the same answer page.
	state, nonce = stacktest.RandomHex(16), stacktest.RandomHex(16)
	run("ask for a reset",
		chromedp.Navigate(loginURL("signIn", state, nonce)),
		chromedp.WaitVisible(chromedp.ID("password")),
		chromedp.Click(chromedp.CSS(`p.recover a`)),
		chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("email"), email),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.ID("code")),
	)
	answer, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("main")))
	if err != nil || !strings.Contains(answer, "If an account exists for "+email) {
		t.Fatalf("answer page = %q (%v)", answer, err)
	}

	newPassword := "a different passphrase 43"
	if byCode {
		// The code of the mail, typed on the answer page the browser still shows.
		m := verifyCode.FindStringSubmatch(resetMailTo(t, env, email).Text)
		if m == nil {
			t.Fatal("the reset mail has no 6-digit code")
		}
		run("type the code and set the new password",
			chromedp.SendKeys(chromedp.ID("code"), m[1]),
			chromedp.Submit(chromedp.ID("code")),
			chromedp.WaitVisible(chromedp.ID("password")),
			chromedp.SendKeys(chromedp.ID("password"), newPassword),
			chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.ID("signed-in")),
		)
	} else {
		// The mail arrives in the development mailbox (it is sent after the answer).
		var link string
		for deadline := time.Now().Add(10 * time.Second); link == "" && time.Now().Before(deadline); {
			run("open the mailbox", chromedp.Navigate(env.Stack.BaseURL+allinone.DevMailboxPath), chromedp.WaitVisible(chromedp.CSS("main")))
			text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("main")))
			if err != nil {
				t.Fatal(err)
			}
			if strings.Contains(text, "Reset your password for") {
				link = mailedResetLink.FindString(text)
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if link == "" {
			t.Fatalf("no reset mail with a link in the mailbox:\n%s", currentPage(browser))
		}

		// The link shows the new-password form; setting it lands on the app with a code for the
		// request the reset started from.
		run("set the new password",
			chromedp.Navigate(link),
			chromedp.WaitVisible(chromedp.ID("password")),
			chromedp.SendKeys(chromedp.ID("password"), newPassword),
			chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
			chromedp.WaitVisible(chromedp.ID("signed-in")),
		)
	}
	q := landedQuery(t, app)
	if q.Get("state") != state || q.Get("code") == "" {
		t.Fatalf("callback query = %v, want a code and the sign-in request's state", q)
	}
	exchangeCode(t, env, q.Get("code"), app.redirectURI(), state, nonce)
	if got := refreshStatus(t, env, oldRefresh); got < 400 || got >= 500 {
		t.Errorf("the refresh token from before the reset answers %d, want a refusal", got)
	}

	// The new password signs in.
	state, nonce = stacktest.RandomHex(16), stacktest.RandomHex(16)
	run("sign in with the new password",
		chromedp.Navigate(loginURL("signIn", state, nonce)),
		chromedp.WaitVisible(chromedp.ID("password")),
		chromedp.SendKeys(chromedp.ID("email"), email),
		chromedp.SendKeys(chromedp.ID("password"), newPassword),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.ID("signed-in")),
	)
	if q := landedQuery(t, app); q.Get("state") != state || q.Get("code") == "" {
		t.Errorf("sign-in callback query = %v", q)
	}
}
