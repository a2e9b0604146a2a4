package browser

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/berthhq/berth/cmd/berth/stacktest"
)

// The console's audit page end to end: a user changed through route 18 with the app's write key
// shows on the page, reached from the app page, once it is filtered by the user's id, with the
// write key as the actor and the changed field named; the member then shortens the retention and
// the page shows it; every state checked with axe-core and photographed at 1280 and 390 px.
func TestConsoleAuditInChromiumShowsAWriteKeysChangeOfAUserAndSetsTheRetention(t *testing.T) {
	chromium := ensureChromium(t)
	check := newConsoleCheck(t)
	env := stacktest.Start(t, "berth-browser-test", "https://app.example.com/callback")
	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 180*time.Second)
	defer cancel()
	fail := failWithPage(t, browser)

	user := env.App.UserIDs[0]
	changeNickname(t, env, user, "audited-in-chromium")
	if err := chromedp.Do(ctx,
		chromedp.EmulateViewport(1280, 900),
		signInToConsole(env),
		// The app page links to its audit log.
		chromedp.Navigate(env.Stack.BaseURL+"/console/apps/"+env.App.AppID),
		chromedp.Click(chromedp.ID("audit-link")),
		chromedp.WaitVisible(chromedp.ID("audit-filter")),
	); err != nil {
		fail("open the audit page", err)
	}
	check.page(ctx, "audit")

	// Filter by the changed user; analytics records the change from identity's event within moments.
	if err := chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.ID("target_id"), user),
		chromedp.SetValue(chromedp.ID("target_type"), "user"),
		chromedp.SendKeys(chromedp.ID("action"), "identity.user.updated"),
	); err != nil {
		fail("fill the filter", err)
	}
	var row string
	for deadline := time.Now().Add(60 * time.Second); ; {
		// The value attribute is the server's: it is there once the filtered page has loaded.
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("filter")), chromedp.WaitVisible(chromedp.CSS(`#target_id[value="`+user+`"]`))); err != nil {
			fail("filter the audit log", err)
		}
		n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#audit-entries tbody tr').length`))
		if err != nil {
			fail("count the entries", err)
		}
		if n > 0 {
			if row, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`#audit-entries tbody tr:first-child`))); err != nil {
				fail("read the newest entry", err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no audit entry of the user's change appeared\npage:\n%s", currentPage(browser))
		}
		time.Sleep(time.Second)
	}
	for _, want := range []string{"API key (write key)", "identity.user.updated", user, "nickname"} {
		if !strings.Contains(row, want) {
			t.Errorf("the newest entry %q lacks %q", row, want)
		}
	}
	if kinds, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#audit-entries td.audit-target')).map(c => c.textContent)`)); err != nil {
		fail("read the targets", err)
	} else {
		for _, k := range kinds {
			if !strings.Contains(k, user) {
				t.Errorf("the filtered table shows an entry about %q", k)
			}
		}
	}
	check.page(ctx, "audit-filtered")

	// Shorten the retention; the page says so and shows the new value.
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.ID("days"), "90"),
		chromedp.Click(chromedp.ID("set-retention")),
		chromedp.WaitVisible(chromedp.CSS(`p.ok[role="status"]`)),
	); err != nil {
		fail("set the retention", err)
	}
	if shown, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("retention"))); err != nil || !strings.Contains(shown, "90 days") {
		t.Errorf("the retention shown is %q (%v), want 90 days", shown, err)
	}
	check.page(ctx, "audit-retention")
}
