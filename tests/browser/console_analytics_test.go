package browser

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/berthhq/berth/cmd/berth/stacktest"
)

// todaysFigures reads today's row (the last, a UTC day) of a chart's data table on the analytics
// page the browser shows: the day, then one value per series.
func todaysFigures(t *testing.T, ctx context.Context, chart string) []string {
	t.Helper()
	cells, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`Array.from(document.querySelectorAll('#`+chart+
		` table.chart-data tbody tr:last-child > *')).map(c => c.textContent)`))
	if err != nil {
		t.Fatalf("read today's %s: %v", chart, err)
	}
	if today := time.Now().UTC().Format(time.DateOnly); len(cells) == 0 || cells[0] != today {
		t.Fatalf("the %s table's last row is %q, want today (%s)", chart, cells, today)
	}
	return cells
}

// figure is the number in cells[i].
func figure(t *testing.T, cells []string, i int) int {
	t.Helper()
	n, err := strconv.Atoi(cells[i])
	if err != nil {
		t.Fatalf("cell %d of %q is not a count: %v", i, cells, err)
	}
	return n
}

// The analytics page end to end: a user signs up and, in another browser, signs in through the
// hosted login; the console's sign-ins chart then counts both sign-ins and one more active and new
// user today, the range chooser works without script, the sign-ins CSV downloads as an attachment
// holding the same figures, and the page passes axe-core at 1280 and 390 px.
func TestConsoleAnalyticsInChromiumCountsTodaysSignInsAndDownloadsTheirCSV(t *testing.T) {
	chromium := ensureChromium(t)
	check := newConsoleCheck(t)
	app := newCallbackApp(t)
	env := stacktest.Start(t, "berth-browser-test", app.redirectURI())
	console := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(console, 240*time.Second)
	defer cancel()
	fail := failWithPage(t, console)

	// The member reaches the analytics page from the app page.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), signInToConsole(env),
		chromedp.Navigate(env.Stack.BaseURL+"/console/apps/"+env.App.AppID),
		chromedp.Click(chromedp.ID("analytics-link")),
		chromedp.WaitVisible(chromedp.ID("sign-ins")),
	); err != nil {
		fail("open the analytics page from the app page", err)
	}
	if current, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector('.ranges a[aria-current="page"]').id`)); err != nil || current != "range-30" {
		t.Errorf("the page opened on range %q (%v), want 30 days", current, err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("range-7")), chromedp.WaitVisible(chromedp.CSS(`#range-7[aria-current="page"]`))); err != nil {
		fail("choose 7 days", err)
	}
	if rows, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#sign-ins table.chart-data tbody tr').length`)); err != nil || rows != 7 {
		t.Errorf("the 7-day sign-ins table has %d rows (%v)", rows, err)
	}
	before := todaysFigures(t, ctx, "sign-ins")
	newBefore := todaysFigures(t, ctx, "growth")

	// A user signs up, and signs in again in a browser of their own.
	email := "analytics-" + stacktest.RandomHex(4) + "@example.com"
	user := newBrowser(t, chromium)
	uctx, ucancel := context.WithTimeout(user, 90*time.Second)
	defer ucancel()
	signUpAndLand(t, uctx, user, hostedLogin(env, app, "signUp"), email)
	again := newBrowser(t, chromium)
	actx, acancel := context.WithTimeout(again, 90*time.Second)
	defer acancel()
	if err := chromedp.Do(actx, slices.Concat(
		[]chromedp.Action[chromedp.Void]{chromedp.Navigate(hostedLogin(env, app, "signIn"))},
		signInOnTheHostedPage(email, "a long enough passphrase 42"),
		[]chromedp.Action[chromedp.Void]{chromedp.WaitVisible(chromedp.ID("signed-in"))},
	)...); err != nil {
		t.Fatalf("sign in: %v\npage:\n%s", err, currentPage(again))
	}

	// Analytics counts them from identity's events, so the page shows them within moments.
	var after []string
	for deadline := time.Now().Add(60 * time.Second); ; {
		if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.ID("sign-ins"))); err != nil {
			fail("reload the analytics page", err)
		}
		after = todaysFigures(t, ctx, "sign-ins")
		if figure(t, after, 1) >= figure(t, before, 1)+2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("today's sign-ins stayed at %q after a sign-up and a sign-in (before: %q)", after, before)
		}
		time.Sleep(time.Second)
	}
	if got, want := figure(t, after, 2), figure(t, before, 2)+1; got != want {
		t.Errorf("today's active users = %d, want %d: one more user signed in (twice)", got, want)
	}
	if got, want := figure(t, todaysFigures(t, ctx, "growth"), 1), figure(t, newBefore, 1)+1; got < want {
		t.Errorf("today's new users = %d, want at least %d", got, want)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#sign-ins summary`)), chromedp.WaitVisible(chromedp.CSS(`#sign-ins table.chart-data`))); err != nil {
		fail("open the sign-ins table", err)
	}
	check.page(ctx, "analytics")

	// The CSV link downloads the same figures as an attachment.
	dir := t.TempDir()
	begins := chromedp.Events(ctx, browser.DownloadWillBegin)
	progress := chromedp.Events(ctx, browser.DownloadProgress)
	if err := chromedp.Do(ctx,
		chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
			events := true
			_, err := chromedp.Call(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
				Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: &events,
			})
			return err
		}),
		chromedp.Click(chromedp.ID("csv-sign-ins")),
	); err != nil {
		fail("download the sign-ins CSV", err)
	}
	var name string
	for ev, err := range begins {
		if err != nil {
			t.Fatalf("wait for the download: %v", err)
		}
		name = ev.SuggestedFilename
		break
	}
	today := time.Now().UTC()
	if want := "sign-ins-" + today.AddDate(0, 0, -6).Format(time.DateOnly) + "-" + today.Format(time.DateOnly) + ".csv"; name != want {
		t.Errorf("the download is named %q, want %q", name, want)
	}
	var file string
	for ev, err := range progress {
		if err != nil {
			t.Fatalf("wait for the download: %v", err)
		}
		if ev.State == browser.DownloadProgressStateCanceled {
			t.Fatal("the download was cancelled")
		}
		if ev.State == browser.DownloadProgressStateCompleted {
			file = filepath.Join(dir, ev.GUID)
			break
		}
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(string(raw), "\r\n"), "\r\n")
	if len(lines) != 8 || lines[0] != "Day,Sign-ins,Active users" || lines[7] != strings.Join(after, ",") {
		t.Errorf("the CSV =\n%s\nwant a header and 7 days, today's row %q", raw, strings.Join(after, ","))
	}
}
