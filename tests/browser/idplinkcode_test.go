package browser

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/berthhq/berth/cmd/berth/stacktest"
)

// A user who signed up through idpA has no password. Signing in through idpB with the same
// address, vouched for, asks to prove the account is theirs: the confirmation offers no password,
// "Email me a code" mails one, and the code links idpB and lands on the app with a code and
// service=idpB, whose tokens say the provider signed in. From then on idpB alone signs in.
func TestAPasswordlessUserLinksIdpBByAnEmailedCodeInChromium(t *testing.T) {
	chromium := ensureChromium(t)
	app := newCallbackApp(t)
	env := stacktest.Start(t, "berth-browser-test", app.redirectURI())
	if got := env.App.Idp["idpB"]; got.Issuer != env.Stack.Sandboxes.IdpURL+"/idpB" {
		t.Fatalf("the demo's idpB = %+v, want the sandbox's idpB", got)
	}
	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 120*time.Second)
	defer cancel()
	email := "nopassword-" + stacktest.RandomHex(4) + "@example.com"
	step := func(what string, actions ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(ctx, actions...); err != nil {
			t.Fatalf("%s: %v\npage:\n%s", what, err, currentPage(browser))
		}
	}
	// through signs in through slot's button and answers the provider's page as email, vouched for.
	through := func(slot string) {
		t.Helper()
		step("through "+slot, chromedp.Navigate(hostedLogin(env, app, "signIn")),
			chromedp.WaitVisible(chromedp.CSS(`a.provider[href*="slot=`+slot+`"]`)),
			chromedp.Click(chromedp.CSS(`a.provider[href*="slot=`+slot+`"]`)),
			chromedp.WaitVisible(chromedp.ID("allow")), chromedp.SendKeys(chromedp.ID("email"), email))
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("email_verified").checked = true`)); err != nil {
			t.Fatal(err)
		}
		step(slot+": allow", chromedp.Click(chromedp.ID("allow")), chromedp.WaitNotPresent(chromedp.ID("allow")))
	}
	landedVia := func(what, slot string) url.Values {
		t.Helper()
		q := landedQuery(t, app)
		if q.Get("code") == "" || q.Get("service") != slot {
			t.Fatalf("%s landed with %v, want a code and service=%s", what, q, slot)
		}
		return q
	}

	through("idpA")
	step("signed up through idpA", chromedp.WaitVisible(chromedp.ID("signed-in")))
	landedVia("the sign-up through idpA", "idpA")

	through("idpB")
	step("the link confirmation", chromedp.WaitVisible(chromedp.ID("send-code-button")))
	if n, err := chromedp.Run(ctx, chromedp.Evaluate[int](`document.querySelectorAll("#password, #by-password").length`)); err != nil || n != 0 {
		t.Errorf("a password-less account is asked for a password (%d fields, %v)", n, err)
	}
	page, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("main")))
	if !strings.Contains(page, email) || !strings.Contains(page, "Sandbox B") {
		t.Errorf("the confirmation does not name the account and the provider:\n%s", page)
	}
	step("email me a code", chromedp.Click(chromedp.ID("send-code-button")), chromedp.WaitVisible(chromedp.ID("email_code")))
	m := mailTo(t, env, email)
	code := verifyCode.FindStringSubmatch(m.Text)
	if code == nil || !strings.Contains(m.Text, "Sandbox B") {
		t.Fatalf("the mail has no code or provider:\n%s", m.Text)
	}
	step("a wrong code is refused", chromedp.SendKeys(chromedp.ID("email_code"), wrongSix(code[1])),
		chromedp.Click(chromedp.CSS(`#by-email button[type="submit"]`)), chromedp.WaitVisible(chromedp.CSS(`p.alert`)))
	if alert, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS(`p.alert`))); !strings.Contains(alert, "This code is not correct") {
		t.Errorf("a wrong code is answered %q", alert)
	}
	step("the mailed code links idpB", chromedp.SendKeys(chromedp.ID("email_code"), code[1]),
		chromedp.Click(chromedp.CSS(`#by-email button[type="submit"]`)), chromedp.WaitVisible(chromedp.ID("signed-in")))
	q := landedVia("the confirmed link", "idpB")
	access, _ := exchangeCode(t, env, q.Get("code"), app.redirectURI(), "s", "n")
	if got := amrOf(t, access); !slices.Equal(got, []string{"fed"}) {
		t.Errorf("amr after the link by a mailed code = %v, want [fed]", got)
	}
	if status, me := asUser(t, env, http.MethodGet, "/v1/users/me", access, ""); status != http.StatusOK || me["email"] != email {
		t.Errorf("route 14 (me) = %d %v, want the account that signed up through idpA", status, me)
	}

	through("idpB")
	step("idpB alone signs in now", chromedp.WaitVisible(chromedp.ID("signed-in")))
	landedVia("the linked sign-in", "idpB")
}

// wrongSix is a six-digit code other than code.
func wrongSix(code string) string {
	if code == "000000" {
		return "111111"
	}
	return "000000"
}
