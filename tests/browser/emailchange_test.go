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
)

// A user who changed their email with their own token (route 18) opens the link mailed to the new
// address in Chromium, sees the address with a Confirm button, presses it, and only then is the
// address theirs, verified.
func TestTheEmailChangeLinkConfirmsTheNewAddressInChromium(t *testing.T) {
	chromium := ensureChromium(t)
	app := newCallbackApp(t)
	env := stacktest.Start(t, "berth-browser-test", app.redirectURI())
	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 90*time.Second)
	defer cancel()

	state, nonce := stacktest.RandomHex(16), stacktest.RandomHex(16)
	email := "changer-" + stacktest.RandomHex(4) + "@example.com"
	err := chromedp.Do(ctx, slices.Concat(
		[]chromedp.Action[chromedp.Void]{chromedp.Navigate(env.Stack.BaseURL + "/login?" + url.Values{
			"client_id": {env.App.AppID}, "state": {state}, "type": {"signUp"},
			"redirect_uri": {app.redirectURI()}, "nonce": {nonce},
		}.Encode())},
		signUpOnTheHostedPage("Changer", email),
		[]chromedp.Action[chromedp.Void]{chromedp.WaitVisible(chromedp.ID("signed-in"))},
	)...)
	if err != nil {
		t.Fatalf("sign up: %v\npage:\n%s", err, currentPage(browser))
	}
	access, _ := exchangeCode(t, env, (<-app.queries).Get("code"), app.redirectURI(), state, nonce)

	newEmail := "moved-" + stacktest.RandomHex(4) + "@example.com"
	if status, body := asUser(t, env, http.MethodPut, "/v1/users/me", access, `{"user":{"email":"`+newEmail+`"}}`); status != http.StatusOK {
		t.Fatalf("route 18: %d %v", status, body)
	}
	var link string
	for _, m := range env.Stack.Mailbox.Messages() {
		if m.To == newEmail {
			link = regexp.MustCompile(`https?://\S+/email-change\?token=\S+`).FindString(m.Text)
		}
	}
	if link == "" {
		t.Fatalf("no confirmation link was mailed to %s", newEmail)
	}
	if _, me := asUser(t, env, http.MethodGet, "/v1/users/me", access, ""); me["email"] != email {
		t.Fatalf("before confirmation the address is %v", me["email"])
	}

	if err := chromedp.Do(ctx, chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID("new-email"))); err != nil {
		t.Fatalf("open the link: %v\npage:\n%s", err, currentPage(browser))
	}
	shown, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("new-email")))
	if err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS(`p.ok`))); err != nil {
		t.Fatalf("confirm: %v\npage:\n%s", err, currentPage(browser))
	}
	done, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`h1`)))
	if err != nil {
		t.Fatal(err)
	}
	if shown != newEmail || done != "Email address confirmed" {
		t.Errorf("the page showed %q and then %q", shown, done)
	}
	if _, me := asUser(t, env, http.MethodGet, "/v1/users/me", access, ""); me["email"] != newEmail || me["email_verified"] != true {
		t.Errorf("after confirmation: email %v verified %v", me["email"], me["email_verified"])
	}
}

// asUser calls a /v1 route with the user's bearer token and returns the status and the
// envelope's data.
func asUser(t *testing.T, env stacktest.Env, method, path, token, body string) (int, map[string]any) {
	t.Helper()
	req, err := http.NewRequest(method, env.Stack.BaseURL+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	raw, _ := io.ReadAll(res.Body)
	var envelope struct {
		Data map[string]any `json:"data"`
	}
	if err := json.Unmarshal(raw, &envelope); err != nil {
		t.Fatalf("%s %s: %v\n%s", method, path, err, raw)
	}
	return res.StatusCode, envelope.Data
}
