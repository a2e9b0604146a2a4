package browser

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/berthhq/berth/cmd/berth/allinone"
	"github.com/berthhq/berth/cmd/berth/stacktest"
)

// TestTheExampleAppSignsAUserUpWithThePublishedSDKAndShowsTheUserAndTenant drives the page the
// all-in-one serves at /dev/example as a person would: it offers sign-up, the hosted page takes the
// new user's details and sends the browser back, and the page (through the unmodified SDK
// installed from npm) exchanges the code and shows the user's email and tenant.
func TestTheExampleAppSignsAUserUpWithThePublishedSDKAndShowsTheUserAndTenant(t *testing.T) {
	chromium := ensureChromium(t)
	dir := stacktest.NpmCI(t, filepath.Join("..", "..", "examples", "webapp"))
	// Tokens must carry the issuer id the SDK has built in, as under make run. The app's own
	// redirect URI is never used here: ExampleDir adds the example's page to its redirect URIs.
	env := stacktest.StartWith(t, stacktest.Options{Issuer: allinone.DefaultIssuer, RedirectURI: "http://127.0.0.1:1/unused", ExampleDir: dir})

	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 60*time.Second)
	defer cancel()
	email := "example-" + stacktest.RandomHex(4) + "@example.com"
	err := chromedp.Do(ctx, slices.Concat(
		[]chromedp.Action[chromedp.Void]{
			chromedp.Navigate(env.Stack.BaseURL + allinone.ExamplePath),
			chromedp.WaitVisible(chromedp.ID("sign-up")),
			chromedp.Click(chromedp.ID("sign-up")),
		},
		signUpOnTheHostedPage("Example User", email),
		[]chromedp.Action[chromedp.Void]{chromedp.WaitVisible(chromedp.ID("who"))},
	)...)
	if err != nil {
		t.Fatalf("sign up through the example app: %v\npage:\n%s", err, currentPage(browser))
	}
	text := func(id string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID(id)))
		if err != nil {
			t.Fatalf("read #%s: %v", id, err)
		}
		return v
	}
	shown, tenantName, status := text("user-email"), text("tenant-name"), text("status")
	if shown != email {
		t.Errorf("the page shows user %q, want %q", shown, email)
	}
	if strings.TrimSpace(tenantName) == "" {
		t.Errorf("the page shows no tenant:\n%s", currentPage(browser))
	}
	if status != "Signed in." {
		t.Errorf("status = %q, want %q", status, "Signed in.")
	}
	// The single-use code leaves the address bar once exchanged, so a reload does not resend it.
	landed, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatalf("read the browser's location: %v", err)
	}
	if landed != env.Stack.BaseURL+allinone.ExamplePath {
		t.Errorf("the page stays at %q, want %q", landed, env.Stack.BaseURL+allinone.ExamplePath)
	}
}
