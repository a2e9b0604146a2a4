package browser

import (
	"context"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/berthhq/berth/cmd/berth/stacktest"
)

// A user with a password links the sandbox's idpA on the account page under another address the
// provider does not vouch for, sees it listed, signs out, signs in to the app through idpA alone,
// and unlinks it again with the password; the page then offers the link again.
func TestAUserLinksAndUnlinksAProviderOnTheAccountPageInChromium(t *testing.T) {
	chromium := ensureChromium(t)
	app := newCallbackApp(t)
	env := stacktest.Start(t, "berth-browser-test", app.redirectURI())
	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 120*time.Second)
	defer cancel()
	const password = "a long enough passphrase 42"
	owner := "linker-" + stacktest.RandomHex(4) + "@example.com"
	atProvider := "elsewhere-" + stacktest.RandomHex(4) + "@idp.example"
	loginURL := func(typ string) string {
		return env.Stack.BaseURL + "/login?" + url.Values{"client_id": {env.App.AppID}, "state": {stacktest.RandomHex(16)}, "type": {typ},
			"redirect_uri": {app.redirectURI()}}.Encode()
	}
	accountURL := env.Stack.BaseURL + "/account?client_id=" + env.App.AppID
	step := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v\npage:\n%s", what, err, currentPage(browser))
		}
	}
	// allowAtProvider answers the sandbox provider's page as atProvider, not vouched for.
	allowAtProvider := func(what string) {
		t.Helper()
		step(what+": the provider's page", chromedp.WaitVisible(chromedp.ID("allow")), chromedp.SendKeys(chromedp.ID("email"), atProvider))
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("email_verified").checked = false`)); err != nil {
			t.Fatal(err)
		}
		step(what+": allow", chromedp.Click(chromedp.ID("allow")), chromedp.WaitNotPresent(chromedp.ID("allow")))
	}
	notice := func() string {
		t.Helper()
		text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`p[role="status"], p[role="alert"]`)))
		if err != nil {
			t.Fatalf("read the notice: %v", err)
		}
		return text
	}

	step("sign up with a password", slices.Concat([]chromedp.Action[chromedp.Void]{chromedp.Navigate(loginURL("signUp"))},
		signUpOnTheHostedPage("Linker", owner), []chromedp.Action[chromedp.Void]{chromedp.WaitVisible(chromedp.ID("signed-in"))})...)
	landedQuery(t, app)

	step("sign in to the account page", slices.Concat([]chromedp.Action[chromedp.Void]{chromedp.Navigate(accountURL)},
		signInOnTheHostedPage(owner, password), []chromedp.Action[chromedp.Void]{chromedp.WaitVisible(chromedp.ID("link-idpA"))})...)
	step("open the provider to link idpA", chromedp.Click(chromedp.ID("link-idpA")))
	allowAtProvider("link idpA")
	step("back on the account page, linked", chromedp.WaitVisible(chromedp.ID("unlink-idpA")))
	if got := notice(); !strings.Contains(got, "The provider account is linked") {
		t.Errorf("the notice after the link = %q", got)
	}
	listed, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`form.provider[data-slot="idpA"]`)))
	if err != nil || !strings.Contains(listed, "Sandbox A") || !strings.Contains(listed, atProvider) || !strings.Contains(listed, "UTC") {
		t.Errorf("the linked provider shows %q (%v), want its name, the address at the provider and when", listed, err)
	}

	step("sign out of the account page", chromedp.Click(chromedp.ID("sign-out")), chromedp.WaitNotPresent(chromedp.ID("sign-out")))
	step("open the app's sign-in through idpA", chromedp.Navigate(loginURL("signIn")),
		chromedp.WaitVisible(chromedp.CSS("a.provider")), chromedp.Click(chromedp.CSS("a.provider")))
	allowAtProvider("sign in through idpA")
	step("signed in to the app", chromedp.WaitVisible(chromedp.ID("signed-in")))
	if q := landedQuery(t, app); q.Get("code") == "" || q.Get("service") != "idpA" {
		t.Fatalf("the sign-in through the linked provider landed with %v, want a code and service=idpA", q)
	}

	step("unlink idpA with the password", slices.Concat([]chromedp.Action[chromedp.Void]{chromedp.Navigate(accountURL)},
		signInOnTheHostedPage(owner, password), []chromedp.Action[chromedp.Void]{
			chromedp.WaitVisible(chromedp.ID("unlink-idpA")),
			chromedp.SendKeys(chromedp.ID("unlink-password-idpA"), password),
			chromedp.Click(chromedp.ID("unlink-idpA")),
			chromedp.WaitVisible(chromedp.ID("link-idpA")),
		})...)
	if got := notice(); !strings.Contains(got, "The provider account is unlinked") {
		t.Errorf("the notice after the unlink = %q", got)
	}
}
