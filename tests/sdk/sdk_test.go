package sdk

import (
	"bytes"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/berthhq/berth/cmd/berth/stacktest"
)

// sdkIssuer is the issuer id the published SDK has built in: it rejects ID tokens with any other
// `iss`, so the stack under test issues tokens as this id.
const sdkIssuer = "f0af4569-4d5d-4c20-af95-5a80c74e30a6"

// redirectURI is the app's registered redirect URI. Nothing listens there: the test stops at the
// redirect and hands its URL to the SDK as the page location the browser would have reached.
const redirectURI = "http://localhost:3000/callback"

// summary is what sdk.mjs prints.
type summary struct {
	Exchanged            bool    `json:"exchanged"`
	AccessToken          bool    `json:"accessToken"`
	ExpiresIn            float64 `json:"expiresIn"`
	Refreshed            bool    `json:"refreshed"`
	RefreshedAccessToken bool    `json:"refreshedAccessToken"`
	RefreshedExpiresIn   float64 `json:"refreshedExpiresIn"`
	AccessTokenChanged   bool    `json:"accessTokenChanged"`
	RefreshTokenRotated  bool    `json:"refreshTokenRotated"`
	Requests             []struct {
		URL    string `json:"url"`
		Status int    `json:"status"`
		Body   string `json:"body"`
	} `json:"requests"`
	Failures []string `json:"failures"`
}

func TestPublishedWebSDKExchangesAndRefreshesTokens(t *testing.T) {
	dir := stacktest.NpmCI(t, ".")
	// The required policy, make run's default: the sign-up goes through the verification mail,
	// whose code continues the authorization request, and the SDK sees the callback it always saw.
	env := stacktest.StartWith(t, stacktest.Options{Issuer: sdkIssuer, RedirectURI: redirectURI, EmailVerification: "required"})

	state := stacktest.RandomHex(16)
	callback := signUpOnLoginPage(t, env, state)
	if got := callback.Query().Get("state"); got != state {
		t.Fatalf("redirect state = %q, want %q", got, state)
	}

	cmd := exec.Command("node", "sdk.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"BERTH_BASE_URL="+env.Stack.BaseURL,
		"BERTH_CLIENT_ID="+env.App.AppID,
		"BERTH_REDIRECT_URI="+redirectURI,
		"BERTH_CALLBACK_URL="+callback.String(),
	)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()

	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	var s summary
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &s); err != nil {
		t.Fatalf("node sdk.mjs printed no summary (%v): %v\nstdout:\n%s\nstderr:\n%s", runErr, err, stdout.String(), stderr.String())
	}
	if runErr != nil || len(s.Failures) > 0 {
		t.Fatalf("node sdk.mjs: %v\nfailures: %q\nrequests: %+v\nstderr:\n%s", runErr, s.Failures, s.Requests, stderr.String())
	}
	if !s.Exchanged || !s.AccessToken || s.ExpiresIn <= 0 {
		t.Errorf("code exchange through the SDK: %+v", s)
	}
	if !s.Refreshed || !s.RefreshedAccessToken || s.RefreshedExpiresIn <= 0 || !s.AccessTokenChanged || !s.RefreshTokenRotated {
		t.Errorf("refresh through the SDK: %+v", s)
	}
	if len(s.Requests) != 2 {
		t.Errorf("SDK made %d token requests, want 2 (exchange, refresh): %+v", len(s.Requests), s.Requests)
	}
	for _, r := range s.Requests {
		if r.Status != http.StatusCreated || r.URL != env.Stack.BaseURL+"/api/v1/tokens" {
			t.Errorf("token request %s answered %d, want 201: %s", r.URL, r.Status, r.Body)
		}
	}
}

var hiddenInput = regexp.MustCompile(`<input type="hidden" name="([a-z_]+)" value="([^"]*)">`)

// signUpOnLoginPage does what a browser does on the hosted page, over plain HTTP: open the sign-up
// link (which sets the CSRF cookie and renders the form), post the form with its hidden fields
// and new credentials, read the verification mail in the development mailbox, post its code on
// the "check your inbox" page, and stop at the continuation back to the app, whose URL it returns.
func signUpOnLoginPage(t *testing.T, env stacktest.Env, state string) *url.URL {
	t.Helper()
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	// The link the SDK's redirectTo({type: "signUp"}) builds: no nonce, because the SDK sends a
	// fresh one with each token request instead and checks that the ID token echoes it.
	link := env.Stack.BaseURL + "/login?" + url.Values{
		"client_id": {env.App.AppID}, "state": {state}, "type": {"signUp"}, "redirect_uri": {redirectURI},
	}.Encode()
	res, err := client.Get(link)
	if err != nil {
		t.Fatalf("GET /login: %v", err)
	}
	page := readAll(t, res)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("GET /login = %d:\n%s", res.StatusCode, page)
	}
	form := url.Values{}
	for _, m := range hiddenInput.FindAllStringSubmatch(page, -1) {
		form.Set(m[1], html.UnescapeString(m[2]))
	}
	if len(form) == 0 {
		t.Fatalf("login page has no form:\n%s", page)
	}
	email := "sdk-" + stacktest.RandomHex(4) + "@example.com"
	form.Set("name", "SDK Test")
	form.Set("email", email)
	form.Set("password", "a long enough passphrase 42")

	res, err = client.PostForm(env.Stack.BaseURL+"/login", form)
	if err != nil {
		t.Fatalf("POST /login: %v", err)
	}
	body := readAll(t, res)
	if res.StatusCode != http.StatusOK || !strings.Contains(body, "Check your inbox") {
		t.Fatalf("POST /login = %d, want the check-your-inbox page:\n%s", res.StatusCode, body)
	}
	codeForm := url.Values{}
	for _, m := range hiddenInput.FindAllStringSubmatch(body, -1) {
		if _, dup := codeForm[m[1]]; !dup { // the first form is the code form
			codeForm.Set(m[1], html.UnescapeString(m[2]))
		}
	}
	codeForm.Set("code", mailedCode(t, env, email))
	res, err = client.PostForm(env.Stack.BaseURL+"/login/verify", codeForm)
	if err != nil {
		t.Fatalf("POST /login/verify: %v", err)
	}
	body = readAll(t, res)
	m := continueLink.FindStringSubmatch(body)
	if res.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("POST /login/verify = %d, want the page continuing to the app:\n%s", res.StatusCode, body)
	}
	loc, err := url.Parse(html.UnescapeString(m[1]))
	if err != nil {
		t.Fatalf("the continuation is no URL: %v", err)
	}
	if !strings.HasPrefix(loc.String(), redirectURI+"?") || loc.Query().Get("code") == "" {
		t.Fatalf("redirect = %s, want %s with a code", loc, redirectURI)
	}
	return loc
}

var (
	continueLink = regexp.MustCompile(`<a href="([^"]*)">Continue</a>`)
	mailCode     = regexp.MustCompile(`(?m)^([0-9]{6})$`)
)

// mailedCode reads the code of the newest mail to email from the all-in-one's development mailbox.
func mailedCode(t *testing.T, env stacktest.Env, email string) string {
	t.Helper()
	res, err := http.Get(env.Stack.BaseURL + "/dev/mailbox?format=json")
	if err != nil {
		t.Fatal(err)
	}
	var kept []struct{ To, Text string }
	if err := json.Unmarshal([]byte(readAll(t, res)), &kept); err != nil {
		t.Fatal(err)
	}
	for _, m := range kept {
		if c := mailCode.FindStringSubmatch(m.Text); m.To == email && c != nil {
			return c[1]
		}
	}
	t.Fatalf("no verification mail to %s in the mailbox", email)
	return ""
}

func readAll(t *testing.T, res *http.Response) string {
	t.Helper()
	defer func() { _ = res.Body.Close() }()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatalf("read body: %v", err)
	}
	return string(b)
}
