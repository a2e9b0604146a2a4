package browser

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/berthhq/berth/cmd/berth/stacktest"
)

// chromiumPath is where the Debian/Ubuntu chromium package puts the browser.
const chromiumPath = "/usr/bin/chromium"

// ensureChromium returns the browser's path, installing it first when it is missing and the test
// may install packages (root with apt-get). This is machine setup, not part of what is tested.
func ensureChromium(t *testing.T) string {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err == nil {
		return chromiumPath
	}
	if os.Geteuid() == 0 {
		if _, err := exec.LookPath("apt-get"); err == nil {
			install := func() error {
				out, err := exec.Command("apt-get", "install", "-y", "chromium").CombinedOutput()
				if err != nil {
					return fmt.Errorf("apt-get install chromium: %w\n%s", err, out)
				}
				return nil
			}
			// A fresh machine often has no package lists yet: update once, then retry.
			if err := install(); err != nil {
				t.Logf("%v; updating package lists", err)
				if out, err := exec.Command("apt-get", "update").CombinedOutput(); err != nil {
					t.Logf("apt-get update: %v\n%s", err, out)
				} else if err := install(); err != nil {
					t.Log(err)
				}
			}
		}
	}
	if _, err := os.Stat(chromiumPath); err != nil {
		stacktest.Unavailable(t, "chromium is not installed at %s and could not be installed", chromiumPath)
	}
	return chromiumPath
}

// newBrowser starts a headless Chromium with a fresh profile; it is stopped when the test ends.
func newBrowser(t *testing.T, execPath string) context.Context {
	t.Helper()
	profile := t.TempDir() // registered before the browser's cleanup, so removed after Chromium exits
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(execPath),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile),
	)
	t.Cleanup(cancelAlloc)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(cancel)
	return ctx
}

// signUpOnTheHostedPage fills in the hosted sign-up form the browser shows and submits it.
func signUpOnTheHostedPage(name, email string) []chromedp.Action[chromedp.Void] {
	return []chromedp.Action[chromedp.Void]{
		chromedp.WaitVisible(chromedp.ID("email")),
		chromedp.SendKeys(chromedp.ID("name"), name),
		chromedp.SendKeys(chromedp.ID("email"), email),
		chromedp.SendKeys(chromedp.ID("password"), "a long enough passphrase 42"),
		chromedp.Click(chromedp.CSS(`button[type="submit"]`)),
	}
}

// currentPage is the HTML the browser shows, to explain a failed step.
func currentPage(browser context.Context) string {
	ctx, cancel := context.WithTimeout(browser, 5*time.Second)
	defer cancel()
	page, err := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("html")))
	if err != nil {
		return fmt.Sprintf("(unavailable: %v)", err)
	}
	return page
}

// callbackApp stands in for the app behind the redirect URI: it records the query of every
// request to its callback path.
type callbackApp struct {
	*httptest.Server
	queries chan url.Values
}

const callbackPath = "/callback"

func newCallbackApp(t *testing.T) *callbackApp {
	t.Helper()
	app := &callbackApp{queries: make(chan url.Values, 1)}
	app.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != callbackPath {
			http.NotFound(w, r) // the browser also asks for /favicon.ico
			return
		}
		select {
		case app.queries <- r.URL.Query():
		default: // only the first landing counts; a second one fails the test below
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = io.WriteString(w, "<!doctype html><title>App</title><p id=signed-in>Signed in</p>")
	}))
	t.Cleanup(app.Close)
	return app
}

func (a *callbackApp) redirectURI() string { return a.URL + callbackPath }

func TestSignUpInChromiumRedirectsWithACodeThatExchangesForTokens(t *testing.T) {
	chromium := ensureChromium(t)
	app := newCallbackApp(t)
	env := stacktest.Start(t, "berth-browser-test", app.redirectURI())

	state, nonce := stacktest.RandomHex(16), stacktest.RandomHex(16)
	loginURL := env.Stack.BaseURL + "/login?" + url.Values{
		"client_id": {env.App.AppID}, "state": {state}, "type": {"signUp"},
		"redirect_uri": {app.redirectURI()}, "nonce": {nonce},
	}.Encode()

	browser := newBrowser(t, chromium)
	ctx, cancel := context.WithTimeout(browser, 60*time.Second)
	defer cancel()
	email := "browser-" + stacktest.RandomHex(4) + "@example.com"
	err := chromedp.Do(ctx, slices.Concat(
		[]chromedp.Action[chromedp.Void]{chromedp.Navigate(loginURL)},
		signUpOnTheHostedPage("Browser Test", email),
		[]chromedp.Action[chromedp.Void]{chromedp.WaitVisible(chromedp.ID("signed-in"))},
	)...)
	if err != nil {
		t.Fatalf("drive the login page: %v\npage:\n%s", err, currentPage(browser))
	}
	landed, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatalf("read the browser's location: %v", err)
	}
	if !strings.HasPrefix(landed, app.redirectURI()+"?") {
		t.Errorf("browser landed on %q, want the app's redirect URI", landed)
	}

	var q url.Values
	select {
	case q = <-app.queries:
	default:
		t.Fatal("the app's callback was never requested")
	}
	if q.Get("state") != state {
		t.Errorf("state = %q, want %q", q.Get("state"), state)
	}
	if q.Get("code") == "" || q.Get("service") != "email" || q.Get("client_id") != env.App.AppID {
		t.Errorf("callback query = %v, want code, service=email, client_id=%s", q, env.App.AppID)
	}

	exchangeCode(t, env, q.Get("code"), app.redirectURI(), state, nonce)
}

// exchangeCode redeems the code at route 1 as the app's backend would, checks the 201 tokens
// envelope and returns the access and refresh tokens.
func exchangeCode(t *testing.T, env stacktest.Env, code, redirectURI, state, nonce string) (accessToken, refreshToken string) {
	t.Helper()
	body, _ := json.Marshal(map[string]string{
		"client_id": env.App.AppID, "grant_type": "authorization_code", "code": code,
		"redirect_uri": redirectURI, "state": state, "nonce": nonce,
	})
	res, err := http.Post(env.Stack.BaseURL+"/api/v1/tokens", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatalf("POST /api/v1/tokens: %v", err)
	}
	defer func() { _ = res.Body.Close() }()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusCreated {
		t.Fatalf("POST /api/v1/tokens = %d, want 201: %s", res.StatusCode, raw)
	}
	var list struct {
		Kind        string `json:"kind"`
		TotalItems  int    `json:"totalItems"`
		ItemsLength int    `json:"itemsLength"`
		Items       []struct {
			AccessToken  string `json:"accessToken"`
			IDToken      string `json:"idToken"`
			ExpiresIn    string `json:"expiresIn"`
			TokenType    string `json:"tokenType"`
			RedirectURI  string `json:"redirectUri"`
			RefreshToken string `json:"refreshToken"`
		} `json:"items"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		t.Fatalf("tokens body is not the envelope: %v\n%s", err, raw)
	}
	if list.Kind != "tokens" || list.TotalItems != 1 || list.ItemsLength != 1 || len(list.Items) != 1 {
		t.Fatalf("tokens envelope = %s", raw)
	}
	tok := list.Items[0]
	if tok.AccessToken == "" || tok.IDToken == "" || tok.RefreshToken == "" || tok.TokenType != "Bearer" {
		t.Errorf("token item lacks tokens: %s", raw)
	}
	if tok.RedirectURI != redirectURI {
		t.Errorf("redirectUri = %q, want %q", tok.RedirectURI, redirectURI)
	}
	// expiresIn is the access token's expiry as Unix milliseconds, as text (docs/behaviour.md, "Token route").
	if ms, err := strconv.ParseInt(tok.ExpiresIn, 10, 64); err != nil || ms <= time.Now().UnixMilli() {
		t.Errorf("expiresIn = %q, want a future Unix time in milliseconds", tok.ExpiresIn)
	}
	return tok.AccessToken, tok.RefreshToken
}
