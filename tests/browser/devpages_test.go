package browser

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/berthhq/berth/cmd/berth/allinone"
	"github.com/berthhq/berth/cmd/berth/stacktest"
)

// startDemo runs the stack as make run does: the demo apps sign in to and return to the run's own
// development pages.
func startDemo(t *testing.T) stacktest.Env {
	t.Helper()
	return stacktest.StartWith(t, stacktest.Options{Issuer: "berth-browser-test"})
}

func TestTheLandingPageShowsTheDemoAndEveryLinkOpensAPage(t *testing.T) {
	chromium := ensureChromium(t)
	env := startDemo(t)
	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 60*time.Second)
	defer cancel()
	if err := chromedp.Do(ctx, chromedp.Navigate(env.Stack.BaseURL+allinone.DevLandingPath), chromedp.WaitVisible(chromedp.ID("signup"))); err != nil {
		t.Fatalf("open the landing page: %v\npage:\n%s", err, currentPage(browser))
	}
	links, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll("a")).map(a => a.href)`))
	if err != nil {
		t.Fatal(err)
	}
	viewport, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.querySelector('meta[name="viewport"]') !== null`))
	if err != nil || !viewport {
		t.Errorf("the landing page has no viewport meta (%v)", err)
	}
	text, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("main")))
	if err != nil {
		t.Fatal(err)
	}
	for _, fact := range []string{env.App.AppID, env.App.ReadKey, env.App.WriteKey, env.App.TenantID, env.App.State, env.App.PspyApp.AppID} {
		if !strings.Contains(text, fact) {
			t.Errorf("the landing page does not show %q:\n%s", fact, text)
		}
	}
	if len(links) < 5 {
		t.Fatalf("want links to the sign-up, the API reference, the mailbox and both sandboxes; got %q", links)
	}
	for _, link := range links {
		res, err := http.Get(link)
		if err != nil {
			t.Fatalf("%s: %v", link, err)
		}
		_ = res.Body.Close()
		if res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/html") {
			t.Errorf("%s answers %d %q, want a 200 page", link, res.StatusCode, res.Header.Get("Content-Type"))
		}
	}
}

func TestPayingInTheSandboxLandsOnThePaidPageWithTheTenantsBillingState(t *testing.T) {
	chromium := ensureChromium(t)
	env := startDemo(t)
	px := env.App.Pspx
	payURL := checkout(t, env, env.App.AppID, env.App.WriteKey, env.App.TenantID, subscriptionBody(px.Prices.Monthly, px.TaxRate))

	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 60*time.Second)
	defer cancel()
	err := chromedp.Do(ctx,
		chromedp.Navigate(payURL),
		chromedp.WaitVisible(chromedp.ID("card_number")),
		chromedp.SendKeys(chromedp.ID("card_number"), "4242 4242 4242 4242"),
		chromedp.SendKeys(chromedp.ID("card_expiry"), "12 / 34"),
		chromedp.SendKeys(chromedp.ID("card_cvc"), "123"),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.ID("paid")),
	)
	if err != nil {
		t.Fatalf("pay in the browser: %v\npage:\n%s", err, currentPage(browser))
	}
	landed, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil || !strings.HasPrefix(landed, env.Stack.BaseURL+allinone.DevPaidPath+"?") {
		t.Fatalf("the browser landed on %q (%v), want the paid page", landed, err)
	}
	page, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("main")))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"completed", "The state came back as sent", "mode", "subscription", "paidUntil", px.Prices.Monthly} {
		if !strings.Contains(page, want) {
			t.Errorf("the paid page lacks %q:\n%s", want, page)
		}
	}
}
