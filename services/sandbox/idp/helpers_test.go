package idp_test

import (
	"context"
	"encoding/json"
	"errors"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/berthhq/berth/services/sandbox/clock"
	"github.com/berthhq/berth/services/sandbox/idp"
)

const (
	redirectURI = "https://app.example/callback"
	secret      = "s3cret-of-the-relying-party"
)

// env is a sandbox served over HTTP with one provider and one registered client.
type env struct {
	t        *testing.T
	clock    *clock.Clock
	sb       *idp.Server
	srv      *httptest.Server
	issuer   string
	clientID string
	browser  *http.Client // follows no redirects, so a test sees where the provider sends it
}

func newEnv(t *testing.T) *env {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	c := clock.New()
	sb := idp.New(idp.Config{Clock: c, BaseURL: "http://" + srv.Listener.Addr().String() + "/"})
	srv.Config.Handler = sb
	srv.Start()
	t.Cleanup(srv.Close)
	e := &env{t: t, clock: c, sb: sb, srv: srv, issuer: sb.Issuer("idpA"), clientID: "app-1",
		browser: &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	if _, err := sb.RegisterClient("idpA", idp.Client{ClientID: e.clientID, ClientSecret: secret, RedirectURIs: []string{redirectURI}}); err != nil {
		t.Fatal(err)
	}
	return e
}

// do sends a request to the sandbox and answers the status and body.
func (e *env) do(method, path, contentType, body string) (int, string) {
	e.t.Helper()
	req, err := http.NewRequest(method, e.srv.URL+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := e.browser.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// rp is a relying party set up as one would be: discovery through go-oidc, the flow through
// x/oauth2.
type rp struct {
	provider *oidc.Provider
	config   oauth2.Config
	verifier *oidc.IDTokenVerifier
}

func (e *env) rp(style oauth2.AuthStyle, scopes ...string) *rp {
	e.t.Helper()
	p, err := oidc.NewProvider(context.Background(), e.issuer)
	if err != nil {
		e.t.Fatal(err)
	}
	ep := p.Endpoint()
	ep.AuthStyle = style
	return &rp{provider: p, config: oauth2.Config{ClientID: e.clientID, ClientSecret: secret, Endpoint: ep, RedirectURL: redirectURI, Scopes: scopes},
		verifier: p.Verifier(&oidc.Config{ClientID: e.clientID})}
}

var requestField = regexp.MustCompile(`name="request" value="([^"]+)"`)

// openPage follows an authorization URL to the hosted page and answers the request id its form
// carries; the page must answer 200.
func (e *env) openPage(authURL string) string {
	e.t.Helper()
	resp, err := e.browser.Get(authURL)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := requestField.FindSubmatch(b)
	if resp.StatusCode != http.StatusOK || m == nil {
		e.t.Fatalf("authorize page: %d %s (Location %q)", resp.StatusCode, b, resp.Header.Get("Location"))
	}
	return html.UnescapeString(string(m[1]))
}

// answer posts the page's form and answers where the provider sends the browser.
func (e *env) answer(authURL string, form url.Values) *url.URL {
	e.t.Helper()
	resp, err := e.browser.PostForm(authURL, form)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusSeeOther {
		e.t.Fatalf("answering the page: %d %s", resp.StatusCode, b)
	}
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil {
		e.t.Fatal(err)
	}
	return loc
}

// signIn runs the browser's part of the flow: the page, the tester allowing as email (verified or
// not), and the redirect back, whose query it answers.
func (e *env) signIn(authURL, email, name string, verified bool) url.Values {
	e.t.Helper()
	form := url.Values{"request": {e.openPage(authURL)}, "action": {"allow"}, "email": {email}, "name": {name}}
	if verified {
		form.Set("email_verified", "true")
	}
	loc := e.answer(authURL, form)
	if got := loc.Scheme + "://" + loc.Host + loc.Path; got != redirectURI {
		e.t.Fatalf("sent to %s, want the redirect URI", loc)
	}
	return loc.Query()
}

// code runs the browser's part of a flow for the rp's client with the given verifier and
// answers the code.
func (e *env) code(r *rp, verifier string) string {
	e.t.Helper()
	q := e.signIn(r.config.AuthCodeURL("st", oidc.Nonce("n-1"), oauth2.S256ChallengeOption(verifier)), "ada@example.com", "Ada", true)
	if q.Get("code") == "" {
		e.t.Fatalf("no code: %v", q)
	}
	return q.Get("code")
}

// postJSON sends a control request and decodes the JSON answer.
func (e *env) postJSON(method, path, body string) (int, map[string]any) {
	e.t.Helper()
	code, b := e.do(method, path, "application/json", body)
	var out map[string]any
	if b != "" {
		if err := json.Unmarshal([]byte(b), &out); err != nil {
			e.t.Fatalf("%s %s: %d %q is not a JSON object", method, path, code, b)
		}
	}
	return code, out
}

// oauthErrorCode is the OAuth error code of a failed exchange, or "".
func oauthErrorCode(err error) string {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	return ""
}
