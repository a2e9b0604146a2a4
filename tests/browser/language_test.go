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
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// Chromium asks for English (its Accept-Language is en-US); the link's language=de wins, the app's
// branding colours the page, and signing up on the German page lands on the app like on the
// English one.
func TestTheGermanSignUpPageInChromiumShowsGermanInTheAppsColourAndLandsOnTheApp(t *testing.T) {
	chromium := ensureChromium(t)
	app := newCallbackApp(t)
	env := stacktest.Start(t, "berth-browser-test", app.redirectURI())
	admin, cancelAdmin := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancelAdmin()
	if _, err := env.Admin.Identity.SetAppBranding(admin, &identityv1.SetAppBrandingRequest{AppId: env.App.AppID,
		Branding: &identityv1.AppBranding{DisplayName: "Werft & Co", AccentColor: "#0a7f3e", DefaultLanguage: "en"}}); err != nil {
		t.Fatalf("SetAppBranding: %v", err)
	}

	state := stacktest.RandomHex(16)
	loginURL := env.Stack.BaseURL + "/login?" + url.Values{
		"client_id": {env.App.AppID}, "state": {state}, "type": {"signUp"},
		"redirect_uri": {app.redirectURI()}, "language": {"de"},
	}.Encode()
	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(loginURL), chromedp.WaitVisible(chromedp.ID("email"))); err != nil {
		t.Fatalf("open the sign-up page: %v\npage:\n%s", err, currentPage(browser))
	}
	type shown struct {
		Lang, Heading, Brand, EmailLabel, Button, ButtonColour string
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[shown](`({
		Lang: document.documentElement.lang,
		Heading: document.querySelector("h1").innerText,
		Brand: document.querySelector("header.brand").innerText,
		EmailLabel: document.querySelector('label[for="email"]').innerText,
		Button: document.querySelector('button[type="submit"]').innerText,
		ButtonColour: getComputedStyle(document.querySelector('button[type="submit"]')).backgroundColor,
	})`))
	if err != nil {
		t.Fatalf("read the page: %v", err)
	}
	want := shown{Lang: "de", Heading: "Konto erstellen", Brand: "Werft & Co", EmailLabel: "E-Mail-Adresse", Button: "Konto erstellen", ButtonColour: "rgb(10, 127, 62)"}
	if got != want {
		t.Errorf("the page shows %+v, want %+v\npage:\n%s", got, want, currentPage(browser))
	}

	err = chromedp.Do(ctx, slices.Concat(
		signUpOnTheHostedPage("Grete Test", "browser-de-"+stacktest.RandomHex(4)+"@example.com"),
		[]chromedp.Action[chromedp.Void]{chromedp.WaitVisible(chromedp.ID("signed-in"))},
	)...)
	if err != nil {
		t.Fatalf("sign up on the German page: %v\npage:\n%s", err, currentPage(browser))
	}
	landed, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil || !strings.HasPrefix(landed, app.redirectURI()+"?") {
		t.Fatalf("browser landed on %q (%v), want the app's redirect URI", landed, err)
	}
	select {
	case q := <-app.queries:
		if q.Get("state") != state || q.Get("code") == "" {
			t.Errorf("callback query = %v, want a code and state %s", q, state)
		}
	default:
		t.Error("the app's callback was never requested")
	}
}
