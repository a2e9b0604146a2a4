package browser

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/berthhq/berth/cmd/berth/seed"
	"github.com/berthhq/berth/cmd/berth/stacktest"
)

// consoleCheck runs the accessibility check and takes the screenshots of the pages the console
// test visits.
type consoleCheck struct {
	t         *testing.T
	axe       string // axe-core's source
	artefacts string // where screenshots go
}

// newConsoleCheck installs axe-core (tests/browser/axe, pinned by its lock file) and picks the
// artefact directory: BERTH_TEST_ARTEFACTS, else a temporary one, logged either way.
func newConsoleCheck(t *testing.T) consoleCheck {
	t.Helper()
	dir := stacktest.NpmCI(t, "axe")
	src, err := os.ReadFile(filepath.Join(dir, "node_modules", "axe-core", "axe.min.js"))
	if err != nil {
		t.Fatalf("read axe-core: %v", err)
	}
	artefacts := os.Getenv("BERTH_TEST_ARTEFACTS")
	if artefacts == "" {
		if artefacts, err = os.MkdirTemp("", "berth-console-artefacts-"); err != nil {
			t.Fatal(err)
		}
	}
	artefacts = filepath.Join(artefacts, "console")
	if err := os.MkdirAll(artefacts, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Logf("console screenshots in %s", artefacts)
	return consoleCheck{t: t, axe: string(src), artefacts: artefacts}
}

// page checks the page the browser shows: axe-core finds no serious or critical violation, and
// screenshots at 1280 and 390 px wide are written as name-1280.png and name-390.png.
func (c consoleCheck) page(ctx context.Context, name string) {
	c.t.Helper()
	// DevTools evaluation is not subject to the page's policy, which allows no script but its own.
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[chromedp.Void](c.axe)); err != nil {
		c.t.Fatalf("%s: inject axe-core: %v", name, err)
	}
	violations, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`axe.run(document, {resultTypes: ["violations"]}).then(r =>
		r.violations.filter(v => v.impact === "serious" || v.impact === "critical")
			.map(v => v.impact + " " + v.id + ": " + v.nodes.map(n => n.target.join(" ")).join(", ")))`, chromedp.EvalAwaitPromise))
	if err != nil {
		c.t.Fatalf("%s: run axe-core: %v", name, err)
	}
	for _, v := range violations {
		c.t.Errorf("%s: accessibility: %s", name, v)
	}
	for _, width := range []int64{1280, 390} {
		if err := chromedp.Do(ctx, chromedp.EmulateViewport(width, 900)); err != nil {
			c.t.Fatalf("%s: viewport %d: %v", name, width, err)
		}
		shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			c.t.Fatalf("%s: screenshot at %d px: %v", name, width, err)
		}
		if err := os.WriteFile(filepath.Join(c.artefacts, fmt.Sprintf("%s-%d.png", name, width)), shot, 0o644); err != nil {
			c.t.Fatal(err)
		}
		if width == 390 {
			// Usable at 390 px: nothing wider than the screen makes the page scroll sideways.
			wide, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.documentElement.scrollWidth > window.innerWidth + 1`))
			if err != nil || wide {
				c.t.Errorf("%s: the page is wider than 390 px (%v)", name, err)
			}
		}
	}
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900)); err != nil {
		c.t.Fatal(err)
	}
}

// failWithPage returns a browser test's step failure: it ends the test with the step, the error and
// the page the browser shows.
func failWithPage(t *testing.T, browser context.Context) func(step string, err error) {
	return func(step string, err error) {
		t.Helper()
		t.Fatalf("%s: %v\npage:\n%s", step, err, currentPage(browser))
	}
}

// signInToConsole is the demo member's sign-in through the console's form, ending on the home
// page.
func signInToConsole(env stacktest.Env) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Navigate(env.App.Console.URL),
		chromedp.WaitVisible(chromedp.ID("sign-in")),
		submitConsoleSignIn(env),
		chromedp.WaitVisible(chromedp.ID("apps")),
	)
}

// submitConsoleSignIn fills the console's sign-in form, on screen, with the seeded member's
// email and password and submits it.
func submitConsoleSignIn(env stacktest.Env) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.SendKeys(chromedp.ID("email"), env.App.Console.Email),
		chromedp.SendKeys(chromedp.ID("password"), env.App.Console.Password),
		chromedp.Click(chromedp.ID("sign-in")),
	)
}

// publicKey reads route 15 with an API key, answering the status and the app's key.
func publicKey(t *testing.T, env stacktest.Env, key string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, env.Stack.BaseURL+"/v1/apps/"+env.App.AppID+"/public-keys", nil)
	req.Header.Set("X-API-KEY", key)
	req.Header.Set("X-API-KEY-TYPE", "read")
	req.Header.Set("X-CLIENT-ID", env.App.AppID)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	raw, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(raw)
}

// The console end to end, as make run's member uses it: sign in, the apps, an API key created in
// the console and used on route 15, the signing key rotated (route 15 then answers another key),
// a colleague invited and the invitation accepted in another browser, German, sign-out; every
// page checked with axe-core and photographed at 1280 and 390 px.
func TestConsoleInChromiumSignsInMakesAKeyThatWorksRotatesTheSigningKeyAndAcceptsAnInvitation(t *testing.T) {
	chromium := ensureChromium(t)
	check := newConsoleCheck(t)
	env := stacktest.Start(t, "berth-browser-test", "https://app.example.com/callback")
	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 180*time.Second)
	defer cancel()
	base := env.Stack.BaseURL
	fail := failWithPage(t, browser)

	// The printed console URL sends the browser to the sign-in page.
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(env.App.Console.URL), chromedp.WaitVisible(chromedp.ID("sign-in"))); err != nil {
		fail("open the console", err)
	}
	check.page(ctx, "sign-in")
	if err := chromedp.Do(ctx, submitConsoleSignIn(env), chromedp.WaitVisible(chromedp.ID("apps"))); err != nil {
		fail("sign in", err)
	}
	check.page(ctx, "home")
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll('#apps tr[data-app="`+env.App.AppID+`"]').length`)); err != nil || n != 1 {
		t.Errorf("the home page lists the demo app %d times (%v)", n, err)
	}

	// An API key made in the console works on route 15 with the secret shown once.
	keysURL := base + "/console/apps/" + env.App.AppID + "/keys"
	if err := chromedp.Do(ctx,
		chromedp.Navigate(keysURL),
		chromedp.WaitVisible(chromedp.ID("create-key")),
		chromedp.SendKeys(chromedp.ID("key-name"), "console key"),
		chromedp.Click(chromedp.ID("create-key")),
		chromedp.WaitVisible(chromedp.ID("new-secret")),
		chromedp.WaitVisible(chromedp.ID("copy")), // the script showed the copy button
	); err != nil {
		fail("create an API key", err)
	}
	secret, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("new-secret")))
	if err != nil || secret == "" {
		fail("read the new secret", err)
	}
	check.page(ctx, "keys-created")
	code, before := publicKey(t, env, strings.TrimSpace(secret))
	if code != http.StatusOK || !strings.Contains(before, "PUBLIC KEY") {
		t.Fatalf("route 15 with the console's key = %d %s", code, before)
	}

	// Rotating the signing key, behind its confirmation, changes the key route 15 answers.
	if err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/console/apps/"+env.App.AppID),
		chromedp.WaitVisible(chromedp.ID("rotate-warning")),
	); err != nil {
		fail("open the app page", err)
	}
	check.page(ctx, "app")
	if err := chromedp.Do(ctx,
		chromedp.Click(chromedp.ID("rotate-confirm")),
		chromedp.Click(chromedp.ID("rotate")),
		chromedp.WaitVisible(chromedp.CSS(`p.ok[role="status"]`)),
	); err != nil {
		fail("rotate the signing key", err)
	}
	if code, after := publicKey(t, env, strings.TrimSpace(secret)); code != http.StatusOK || after == before {
		t.Errorf("route 15 after the rotation = %d, the key changed: %v", code, after != before)
	}

	// A third identity provider configured in slot idpC from the app page, against the sandbox
	// provider that serves idpA: its row appears, with its secret stored and never shown.
	idpA, ok := env.App.Idp["idpA"]
	if !ok {
		t.Fatal("the demo app has no idpA to copy")
	}
	if err := chromedp.Do(ctx,
		chromedp.SetValue(chromedp.ID("slot"), "idpC"),
		chromedp.SendKeys(chromedp.ID("provider_name"), "Provider C"),
		chromedp.SendKeys(chromedp.ID("client_id"), idpA.ClientID),
		chromedp.SendKeys(chromedp.ID("client_secret"), "a secret typed in the console"),
		chromedp.SendKeys(chromedp.ID("discovery_url"), idpA.Issuer+"/.well-known/openid-configuration"),
		chromedp.Click(chromedp.ID("save-provider")),
		chromedp.WaitVisible(chromedp.ID("edit-idpC")),
	); err != nil {
		fail("configure idpC", err)
	}
	if providers, err := chromedp.Run(ctx, chromedp.Text(chromedp.ID("providers"))); err != nil || !strings.Contains(providers, "Provider C") ||
		strings.Contains(providers, "a secret typed in the console") {
		t.Errorf("the providers after configuring idpC (%v):\n%s", err, providers)
	}

	// The security page, and a colleague invited from the members page.
	if err := chromedp.Do(ctx, chromedp.Navigate(base+"/console/security"), chromedp.WaitVisible(chromedp.ID("mfa-state"))); err != nil {
		fail("open the security page", err)
	}
	check.page(ctx, "security")
	colleague := "colleague-" + stacktest.RandomHex(4) + "@example.com"
	if err := chromedp.Do(ctx,
		chromedp.Navigate(base+"/console/members"),
		chromedp.WaitVisible(chromedp.ID("invite")),
		chromedp.SendKeys(chromedp.ID("invite-email"), colleague),
		chromedp.SendKeys(chromedp.ID("invite-name"), "Colleague"),
		chromedp.Click(chromedp.ID("invite")),
		chromedp.WaitVisible(chromedp.CSS(`p.ok[role="status"]`)),
	); err != nil {
		fail("invite a colleague", err)
	}
	check.page(ctx, "members")

	// German, remembered for the next page.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("language-de")), chromedp.WaitVisible(chromedp.CSS(`html[lang="de"]`)),
		chromedp.Navigate(base+"/console"), chromedp.WaitVisible(chromedp.ID("apps"))); err != nil {
		fail("switch to German", err)
	}
	if heading, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("h1"))); err != nil || heading != "Deine Apps" {
		t.Errorf("the German home's heading = %q (%v)", heading, err)
	}
	check.page(ctx, "home-de")
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("sign-out")), chromedp.WaitVisible(chromedp.ID("sign-in"))); err != nil {
		fail("sign out", err)
	}

	// The colleague accepts the mailed invitation in a browser of their own and is signed in.
	var token string
	for _, m := range env.Stack.Mailbox.Messages() {
		if m.To == colleague {
			token = seed.InvitationToken(m.Text)
		}
	}
	if token == "" {
		t.Fatalf("no invitation mail to %s", colleague)
	}
	other := newBrowser(t, chromium)
	octx, ocancel := context.WithTimeout(other, 60*time.Second)
	defer ocancel()
	if err := chromedp.Do(octx, chromedp.EmulateViewport(1280, 900), chromedp.Navigate(base+"/console/invitation?token="+token), chromedp.WaitVisible(chromedp.ID("accept"))); err != nil {
		t.Fatalf("open the invitation: %v\npage:\n%s", err, currentPage(other))
	}
	check.page(octx, "invitation")
	if err := chromedp.Do(octx,
		chromedp.SendKeys(chromedp.ID("name"), "Colleague"),
		chromedp.SendKeys(chromedp.ID("password"), "a long enough passphrase 42"),
		chromedp.Click(chromedp.ID("accept")),
		chromedp.WaitVisible(chromedp.ID("apps")),
	); err != nil {
		t.Fatalf("accept the invitation: %v\npage:\n%s", err, currentPage(other))
	}
	if who, err := chromedp.Run(octx, chromedp.Text(chromedp.CSS(".who"))); err != nil || !strings.Contains(who, colleague) {
		t.Errorf("signed in as %q (%v), want %s", who, err, colleague)
	}
}
