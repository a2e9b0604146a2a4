package browser

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/berthhq/berth/cmd/berth/stacktest"
)

// A new user signs in through the sandbox's OpenID Connect provider in Chromium: "Continue with
// Sandbox A" on the demo app's hosted page, the provider's page (a typed address it vouches for), back on the
// app with a code and service=idpA, which route 1 exchanges; the tenant read then lists the user
// with idpA_email_verified.
func TestANewUserSignsInThroughTheSandboxProviderInChromiumAndLandsOnTheAppWithServiceIdpA(t *testing.T) {
	chromium := ensureChromium(t)
	app := newCallbackApp(t)
	env := stacktest.Start(t, "berth-browser-test", app.redirectURI())
	// The demo app comes with idpA and idpB configured against the sandbox's providers, as make
	// run's does.
	if got := env.App.Idp["idpA"]; got.Issuer != env.Stack.Sandboxes.IdpURL+"/idpA" || got.DisplayName != "Sandbox A" {
		t.Fatalf("the demo's idpA = %+v, want the sandbox's idpA", got)
	}

	state, nonce := stacktest.RandomHex(16), stacktest.RandomHex(16)
	loginURL := env.Stack.BaseURL + "/login?" + url.Values{
		"client_id": {env.App.AppID}, "state": {state}, "type": {"signIn"}, "redirect_uri": {app.redirectURI()}, "nonce": {nonce},
	}.Encode()
	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 60*time.Second)
	defer cancel()
	email := "federated-" + stacktest.RandomHex(4) + "@example.com"
	if err := chromedp.Do(ctx, chromedp.Navigate(loginURL), chromedp.WaitVisible(chromedp.CSS("a.provider"))); err != nil {
		t.Fatalf("open the sign-in page: %v\npage:\n%s", err, currentPage(browser))
	}
	button, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("a.provider").innerText`))
	if err != nil {
		t.Fatalf("read the button: %v", err)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS("a.provider")),
		chromedp.WaitVisible(chromedp.ID("allow")),
		chromedp.SendKeys(chromedp.ID("email"), email),
		chromedp.SendKeys(chromedp.ID("name"), "Fed Erated"),
	)
	if err != nil {
		t.Fatalf("open the provider's page: %v\npage:\n%s", err, currentPage(browser))
	}
	// The provider vouches for the address (its page's box, ticked whatever its default).
	if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`document.getElementById("email_verified").checked = true`)); err != nil {
		t.Fatalf("tick email_verified: %v", err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("allow")), chromedp.WaitVisible(chromedp.ID("signed-in"))); err != nil {
		t.Fatalf("sign in through the provider: %v\npage:\n%s", err, currentPage(browser))
	}
	if !strings.HasPrefix(button, "Continue with Sandbox A") {
		t.Errorf("the button says %q", button)
	}
	var q url.Values
	select {
	case q = <-app.queries:
	default:
		t.Fatal("the app's callback was never requested")
	}
	if q.Get("state") != state || q.Get("code") == "" || q.Get("service") != "idpA" || q.Get("client_id") != env.App.AppID {
		t.Fatalf("callback query = %v, want the app's state, a code, service=idpA and client_id", q)
	}

	access, _ := exchangeCode(t, env, q.Get("code"), app.redirectURI(), state, nonce)
	if status, me := asUser(t, env, http.MethodGet, "/v1/users/me", access, ""); status != http.StatusOK || me["email"] != email || me["name"] != "Fed Erated" {
		t.Fatalf("route 14 (me) = %d %v, want the new user with the provider's email and name", status, me)
	}
	tenantID := tokenClaim(t, access, "tenantId")
	deadline := time.Now().Add(10 * time.Second)
	for {
		var tenant struct {
			Users []map[string]any `json:"users"`
		}
		callAPI(t, env, http.MethodGet, "/v1/tenants/"+tenantID, env.App.AppID, env.App.ReadKey, "read", "", &tenant)
		if len(tenant.Users) == 1 && tenant.Users[0]["idpA_email_verified"] == true && tenant.Users[0]["idpB_email_verified"] == false {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the tenant's users = %v, want the user with idpA_email_verified true", tenant.Users)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// tokenClaim reads one string claim of a JWT's payload (the signature is route 1's business).
func tokenClaim(t *testing.T, jwt, claim string) string {
	t.Helper()
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		t.Fatalf("not a JWT: %q", jwt)
	}
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var claims map[string]any
	if err := json.Unmarshal(raw, &claims); err != nil {
		t.Fatal(err)
	}
	v, _ := claims[claim].(string)
	if v == "" {
		t.Fatalf("the token has no %s claim: %s", claim, raw)
	}
	return v
}

// An existing account is linked only with its password, and only when the provider vouches for
// the address; an unverified provider address of an existing account is refused on the error
// card, which says how to sign in instead.
func TestAProviderLinksToAnExistingAccountOnlyWithItsPasswordAndAVerifiedAddressInChromium(t *testing.T) {
	chromium := ensureChromium(t)
	app := newCallbackApp(t)
	env := stacktest.Start(t, "berth-browser-test", app.redirectURI())
	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 90*time.Second)
	defer cancel()
	loginURL := func(typ string) string {
		return env.Stack.BaseURL + "/login?" + url.Values{"client_id": {env.App.AppID}, "state": {stacktest.RandomHex(16)}, "type": {typ},
			"redirect_uri": {app.redirectURI()}}.Encode()
	}
	landedWith := func(what, service string) {
		t.Helper()
		select {
		case q := <-app.queries:
			if q.Get("code") == "" || q.Get("service") != service {
				t.Fatalf("%s: the app got %v, want a code and service=%s", what, q, service)
			}
		default:
			t.Fatalf("%s: the app's callback was never requested", what)
		}
	}
	// through the provider's page as email, vouched for or not, up to the page Berth answers.
	throughProvider := func(email string, verified bool) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.Navigate(loginURL("signIn")), chromedp.WaitVisible(chromedp.CSS("a.provider")),
			chromedp.Click(chromedp.CSS("a.provider")), chromedp.WaitVisible(chromedp.ID("allow")),
			chromedp.SendKeys(chromedp.ID("email"), email)); err != nil {
			t.Fatalf("open the provider's page: %v\npage:\n%s", err, currentPage(browser))
		}
		js := `document.getElementById("email_verified").checked = false`
		if verified {
			js = `document.getElementById("email_verified").checked = true`
		}
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](js)); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.Click(chromedp.ID("allow")), chromedp.WaitNotPresent(chromedp.ID("allow")), chromedp.WaitVisible(chromedp.CSS("body"))); err != nil {
			t.Fatalf("allow at the provider: %v\npage:\n%s", err, currentPage(browser))
		}
	}

	owner := "owner-" + stacktest.RandomHex(4) + "@example.com"
	if err := chromedp.Do(ctx, slices.Concat([]chromedp.Action[chromedp.Void]{chromedp.Navigate(loginURL("signUp"))},
		signUpOnTheHostedPage("Owner", owner), []chromedp.Action[chromedp.Void]{chromedp.WaitVisible(chromedp.ID("signed-in"))})...); err != nil {
		t.Fatalf("sign up with a password: %v\npage:\n%s", err, currentPage(browser))
	}
	landedWith("the sign-up", "email")

	// Unverified at the provider: refused, never linked.
	throughProvider(owner, false)
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("p.ref"))); err != nil {
		t.Fatalf("wait for the error card: %v\npage:\n%s", err, currentPage(browser))
	}
	card, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector("main").innerText`))
	if err != nil || !strings.Contains(card, "An account with this email address already exists") || !strings.Contains(card, "Sign in with your email address and password instead") {
		t.Fatalf("an unverified provider address of an account shows %q (%v), want the refusal", card, err)
	}

	// Vouched for: the confirmation page asks for the account's password, then the app gets the code.
	throughProvider(owner, true)
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("password")),
		chromedp.SendKeys(chromedp.ID("password"), "a long enough passphrase 42"),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)), chromedp.WaitVisible(chromedp.ID("signed-in"))); err != nil {
		t.Fatalf("confirm the link with the password: %v\npage:\n%s", err, currentPage(browser))
	}
	landedWith("the confirmed link", "idpA")

	// Linked: the provider alone signs the account in from now on.
	throughProvider(owner, true)
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.ID("signed-in"))); err != nil {
		t.Fatalf("sign in through the linked provider: %v\npage:\n%s", err, currentPage(browser))
	}
	landedWith("the linked sign-in", "idpA")
}
