package browser

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/berthhq/berth/cmd/berth/stacktest"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// startRequired starts the stack with the demo app under the required policy, make run's default.
func startRequired(t *testing.T, app *callbackApp) stacktest.Env {
	t.Helper()
	return stacktest.StartWith(t, stacktest.Options{Issuer: "berth-browser-test", RedirectURI: app.redirectURI(), EmailVerification: "required"})
}

type keptMail struct {
	To, Subject, Text, HTML string
}

// mailsTo are the mails to email in the all-in-one's development mailbox (its JSON view), newest
// first.
func mailsTo(t *testing.T, env stacktest.Env, email string) []keptMail {
	t.Helper()
	res, err := http.Get(env.Stack.BaseURL + "/dev/mailbox?format=json")
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	var kept []keptMail
	if err := json.Unmarshal(raw, &kept); err != nil {
		t.Fatalf("mailbox JSON: %v\n%s", err, raw)
	}
	var out []keptMail
	for _, m := range kept {
		if m.To == email {
			out = append(out, m)
		}
	}
	return out
}

// mailTo waits for the newest mail to email in the development mailbox.
func mailTo(t *testing.T, env stacktest.Env, email string) keptMail {
	t.Helper()
	return newMailTo(t, env, email, 0)
}

// newMailTo waits until email has more than seen mails in the development mailbox and answers the
// newest: the mail an action sent, when seen counted the mails before it.
func newMailTo(t *testing.T, env stacktest.Env, email string, seen int) keptMail {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if kept := mailsTo(t, env, email); len(kept) > seen {
			return kept[0]
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new mail to %s in the mailbox after the %d before", email, seen)
		}
	}
}

var (
	verifyLink = regexp.MustCompile(`http://[^\s]+/login/verify\?token=[A-Za-z0-9_-]+`)
	verifyCode = regexp.MustCompile(`(?m)^([0-9]{6})$`)
)

// signUpUntilInbox opens the sign-up page, submits it and waits for "Check your inbox"; it returns
// the page's HTML.
func signUpUntilInbox(t *testing.T, browser context.Context, env stacktest.Env, app *callbackApp, email, state, nonce string) string {
	t.Helper()
	loginURL := env.Stack.BaseURL + "/login?" + url.Values{
		"client_id": {env.App.AppID}, "state": {state}, "type": {"signUp"},
		"redirect_uri": {app.redirectURI()}, "nonce": {nonce},
	}.Encode()
	var page string
	err := chromedp.Do(browser, slices.Concat(
		[]chromedp.Action[chromedp.Void]{chromedp.Navigate(loginURL)},
		signUpOnTheHostedPage("Verify Test", email),
		[]chromedp.Action[chromedp.Void]{chromedp.WaitVisible(chromedp.ID("code"))},
	)...)
	if err == nil {
		page, err = chromedp.Run(browser, chromedp.OuterHTML(chromedp.CSS("main")))
	}
	if err != nil {
		t.Fatalf("sign up: %v\npage:\n%s", err, currentPage(browser))
	}
	if !strings.Contains(page, "Check your inbox") {
		t.Fatalf("sign-up under the required policy did not show check-your-inbox:\n%s", page)
	}
	return page
}

// landedOnApp waits for the app's callback and checks it carries the state and a code.
func landedOnApp(t *testing.T, browser context.Context, env stacktest.Env, app *callbackApp, state string) string {
	t.Helper()
	if err := chromedp.Do(browser, chromedp.WaitVisible(chromedp.ID("signed-in"))); err != nil {
		t.Fatalf("the browser did not land on the app: %v\npage:\n%s", err, currentPage(browser))
	}
	q := <-app.queries
	if q.Get("state") != state || q.Get("code") == "" || q.Get("client_id") != env.App.AppID {
		t.Fatalf("callback query = %v", q)
	}
	return q.Get("code")
}

// userVerified reads route 14 with the read key and returns the user's email_verified.
func userVerified(t *testing.T, env stacktest.Env, email string) any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, env.Stack.BaseURL+"/v1/users/"+url.PathEscape(email), nil)
	req.Header.Set("X-API-KEY", env.App.ReadKey)
	req.Header.Set("X-API-KEY-TYPE", "read")
	req.Header.Set("X-CLIENT-ID", env.App.AppID)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	raw, _ := io.ReadAll(res.Body)
	var body struct {
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(raw, &body); err != nil || res.StatusCode != http.StatusOK || body.Data == nil {
		t.Fatalf("route 14 = %d: %s", res.StatusCode, raw)
	}
	return body.Data["email_verified"]
}

func TestSignUpUnderRequiredVerificationContinuesToTheAppByTheMailedLink(t *testing.T) {
	chromium := ensureChromium(t)
	app := newCallbackApp(t)
	env := startRequired(t, app)
	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 90*time.Second)
	defer cancel()
	state, nonce := stacktest.RandomHex(16), stacktest.RandomHex(16)
	email := "link-" + stacktest.RandomHex(4) + "@example.com"

	signUpUntilInbox(t, ctx, env, app, email, state, nonce)
	if v := userVerified(t, env, email); v != false {
		t.Fatalf("emailVerified before the link = %v", v)
	}
	link := verifyLink.FindString(mailTo(t, env, email).Text)
	if link == "" {
		t.Fatal("the verification mail has no link")
	}
	// The link shows a button (mail scanners fetch links); clicking it verifies and continues.
	err := chromedp.Do(ctx,
		chromedp.Navigate(link),
		chromedp.WaitVisible(chromedp.CSS(`button[type="submit"]`)),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
	)
	if err != nil {
		t.Fatalf("confirm: %v\npage:\n%s", err, currentPage(browser))
	}
	code := landedOnApp(t, ctx, env, app, state)
	exchangeCode(t, env, code, app.redirectURI(), state, nonce)
	if v := userVerified(t, env, email); v != true {
		t.Fatalf("route 14 emailVerified after the link = %v, want true", v)
	}
}

func TestSignUpUnderRequiredVerificationContinuesToTheAppByTheTypedCode(t *testing.T) {
	chromium := ensureChromium(t)
	app := newCallbackApp(t)
	env := startRequired(t, app)
	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 90*time.Second)
	defer cancel()
	state, nonce := stacktest.RandomHex(16), stacktest.RandomHex(16)
	email := "code-" + stacktest.RandomHex(4) + "@example.com"

	signUpUntilInbox(t, ctx, env, app, email, state, nonce)
	m := verifyCode.FindStringSubmatch(mailTo(t, env, email).Text)
	if m == nil {
		t.Fatal("the verification mail has no code")
	}
	if err := chromedp.Do(ctx, chromedp.SendKeys(chromedp.ID("code"), m[1]), chromedp.Submit(chromedp.ID("code"))); err != nil {
		t.Fatalf("type the code: %v", err)
	}
	code := landedOnApp(t, ctx, env, app, state)
	exchangeCode(t, env, code, app.redirectURI(), state, nonce)
	if v := userVerified(t, env, email); v != true {
		t.Fatalf("route 14 emailVerified after the code = %v, want true", v)
	}
}

// A sign-up with a registered address shows the page a new address gets, identical but for the
// per-request values (the verification id and the CSRF token), and mails the owner a notice.
func TestSignUpWithARegisteredAddressShowsTheIdenticalPage(t *testing.T) {
	chromium := ensureChromium(t)
	app := newCallbackApp(t)
	env := startRequired(t, app)
	state, nonce := stacktest.RandomHex(16), stacktest.RandomHex(16)
	email := "twice-" + stacktest.RandomHex(4) + "@example.com"

	pages := make([]string, 2)
	for i := range pages {
		browser := newBrowser(t, chromium) // a fresh profile: a new visitor each time
		ctx, cancel := context.WithTimeout(browser, 90*time.Second)
		pages[i] = signUpUntilInbox(t, ctx, env, app, email, state, nonce)
		cancel()
	}
	random := regexp.MustCompile(`name="(verification|csrf_token)" value="[^"]*"`)
	first, second := random.ReplaceAllString(pages[0], "$1"), random.ReplaceAllString(pages[1], "$1")
	if first != second {
		t.Fatalf("the registered address's page differs from the new address's:\n%s\n---\n%s", first, second)
	}
	if m := mailTo(t, env, email); !strings.Contains(m.Subject, "Sign-up attempt") || verifyLink.MatchString(m.Text) {
		t.Fatalf("the owner's newest mail is not the notice: %q\n%s", m.Subject, m.Text)
	}
}

// The mail's link names no app, yet the page it opens wears the app's look (identity names the
// link's app); so does the payment card of a link naming the app, whatever went wrong with it.
func TestTheVerificationLinkAndThePaymentCardInChromiumWearTheAppsBranding(t *testing.T) {
	chromium := ensureChromium(t)
	app := newCallbackApp(t)
	env := startRequired(t, app)
	admin, cancelAdmin := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancelAdmin()
	if _, err := env.Admin.Identity.SetAppBranding(admin, &identityv1.SetAppBrandingRequest{AppId: env.App.AppID,
		Branding: &identityv1.AppBranding{DisplayName: "Werft & Co", AccentColor: "#0a7f3e"}}); err != nil {
		t.Fatalf("SetAppBranding: %v", err)
	}
	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 90*time.Second)
	defer cancel()
	email := "brand-" + stacktest.RandomHex(4) + "@example.com"
	signUpUntilInbox(t, ctx, env, app, email, stacktest.RandomHex(16), stacktest.RandomHex(16))
	link := verifyLink.FindString(mailTo(t, env, email).Text)
	if link == "" {
		t.Fatal("the verification mail has no link")
	}
	type look struct{ Brand, ButtonColour string }
	read := `({
		Brand: (document.querySelector("header.brand") || {innerText: ""}).innerText,
		ButtonColour: getComputedStyle(document.documentElement).getPropertyValue("--accent").trim(),
	})`
	if err := chromedp.Do(ctx, chromedp.Navigate(link), chromedp.WaitVisible(chromedp.CSS(`button[type="submit"]`))); err != nil {
		t.Fatalf("open the link: %v\npage:\n%s", err, currentPage(browser))
	}
	want := look{Brand: "Werft & Co", ButtonColour: "#0a7f3e"}
	if got, err := chromedp.Run(ctx, chromedp.Evaluate[look](read)); err != nil || got != want {
		t.Errorf("the link's page shows %+v (%v), want %+v\npage:\n%s", got, err, want, currentPage(browser))
	}

	// A payment link of the app with a session billing does not know: the refusal in the app's look.
	pay := env.Stack.BaseURL + "/pay?" + url.Values{
		"client_id": {env.App.AppID}, "type": {"payment"}, "session_id": {"7d1f4a52-2c63-4d0e-8a8e-9c0b1a2d3e4f"},
		"hash": {strings.Repeat("a", 64)}, "state": {strings.Repeat("s", 64)},
	}.Encode()
	if err := chromedp.Do(ctx, chromedp.Navigate(pay), chromedp.WaitVisible(chromedp.CSS(`p.alert`))); err != nil {
		t.Fatalf("open the payment link: %v\npage:\n%s", err, currentPage(browser))
	}
	if got, err := chromedp.Run(ctx, chromedp.Evaluate[look](read)); err != nil || got != want {
		t.Errorf("the payment card shows %+v (%v), want %+v\npage:\n%s", got, err, want, currentPage(browser))
	}
}
