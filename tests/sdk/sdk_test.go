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
	env := stacktest.Start(t, sdkIssuer, redirectURI)

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
// and new credentials, and stop at the redirect back to the app, whose URL it returns.
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
	form.Set("name", "SDK Test")
	form.Set("email", "sdk-"+stacktest.RandomHex(4)+"@example.com")
	form.Set("password", "a long enough passphrase 42")

	res, err = client.PostForm(env.Stack.BaseURL+"/login", form)
	if err != nil {
		t.Fatalf("POST /login: %v", err)
	}
	body := readAll(t, res)
	if res.StatusCode != http.StatusSeeOther {
		t.Fatalf("POST /login = %d, want 303:\n%s", res.StatusCode, body)
	}
	loc, err := res.Location()
	if err != nil {
		t.Fatalf("POST /login redirect has no usable Location: %v", err)
	}
	if !strings.HasPrefix(loc.String(), redirectURI+"?") || loc.Query().Get("code") == "" {
		t.Fatalf("redirect = %s, want %s with a code", loc, redirectURI)
	}
	return loc
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
