package idp_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/services/sandbox/idp"
)

const challenge = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"

func TestAnAuthorizationRequestTheProviderCannotTrustGetsItsPageAndNeverARedirect(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	for _, c := range []struct{ name, query, says string }{
		{"an unknown client", "client_id=nobody&redirect_uri=" + url.QueryEscape(redirectURI), "not a registered client"},
		{"no client", "redirect_uri=" + url.QueryEscape(redirectURI), "not a registered client"},
		{"an unregistered redirect URI", "client_id=app-1&redirect_uri=" + url.QueryEscape("https://evil.example/callback"), "redirect_uri is not one the client registered"},
		{"a redirect URI that only starts like the registered one", "client_id=app-1&redirect_uri=" + url.QueryEscape(redirectURI+"/more"), "redirect_uri is not one"},
		{"no redirect URI", "client_id=app-1", "redirect_uri is not one"},
		{"a broken query", "client_id=app-1&redirect_uri=%zz", "not valid URL encoding"},
	} {
		code, body := e.do("GET", "/idpA/authorize?response_type=code&scope=openid&code_challenge_method=S256&code_challenge="+challenge+"&"+c.query, "", "")
		if code != 400 || !strings.Contains(body, c.says) || !strings.Contains(body, `<meta name="viewport"`) {
			t.Errorf("%s: %d %s", c.name, code, body)
		}
	}
}

func TestAMistakenAuthorizationRequestGoesBackToTheClientAsAnOAuthError(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	valid := url.Values{"response_type": {"code"}, "client_id": {"app-1"}, "redirect_uri": {redirectURI}, "scope": {"openid email"},
		"state": {"st-1"}, "nonce": {"n"}, "code_challenge": {challenge}, "code_challenge_method": {"S256"}}
	for _, c := range []struct {
		name, error string
		change      func(url.Values)
	}{
		{"the implicit flow", "unsupported_response_type", func(v url.Values) { v.Set("response_type", "id_token") }},
		{"no PKCE", "invalid_request", func(v url.Values) { v.Del("code_challenge"); v.Del("code_challenge_method") }},
		{"PKCE plain", "invalid_request", func(v url.Values) { v.Set("code_challenge_method", "plain") }},
		{"a challenge of the wrong shape", "invalid_request", func(v url.Values) { v.Set("code_challenge", "short") }},
		{"no scope", "invalid_scope", func(v url.Values) { v.Del("scope") }},
		{"an unknown scope", "invalid_scope", func(v url.Values) { v.Set("scope", "openid admin") }},
		{"a control character in the nonce", "invalid_request", func(v url.Values) { v.Set("nonce", "a\x00b") }},
		{"a state too long", "invalid_request", func(v url.Values) { v.Set("state", strings.Repeat("s", 1025)) }},
		{"a parameter twice", "invalid_request", func(v url.Values) { v.Add("scope", "email") }},
		{"prompt=none", "login_required", func(v url.Values) { v.Set("prompt", "none") }},
	} {
		v := url.Values{}
		for k, vs := range valid {
			v[k] = append([]string(nil), vs...)
		}
		c.change(v)
		resp, err := e.browser.Get(e.srv.URL + "/idpA/authorize?" + v.Encode())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, _ := url.Parse(resp.Header.Get("Location"))
		q := loc.Query()
		wantState := v.Get("state")
		if resp.StatusCode != 302 || !strings.HasPrefix(loc.String(), redirectURI+"?") || q.Get("error") != c.error || q.Get("state") != wantState || q.Get("iss") != e.issuer || q.Has("code") {
			t.Errorf("%s: %d to %s, want %s", c.name, resp.StatusCode, loc, c.error)
		}
	}
}

func TestThePageRefusesAnIdentityItCannotVouchForAndKeepsWhatWasTyped(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	authURL := e.srv.URL + "/idpA/authorize?" + url.Values{"response_type": {"code"}, "client_id": {"app-1"}, "redirect_uri": {redirectURI},
		"scope": {"openid"}, "code_challenge": {challenge}, "code_challenge_method": {"S256"}, "login_hint": {"hint@example.com"}}.Encode()
	id := e.openPage(authURL)
	if _, body := e.do("GET", strings.TrimPrefix(authURL, e.srv.URL), "", ""); !strings.Contains(body, `value="hint@example.com"`) || !strings.Contains(body, "tester@example.com") {
		t.Fatalf("the page neither fills in the login hint nor offers the presets:\n%s", body)
	}
	for _, c := range []struct {
		name string
		form url.Values
		says string
	}{
		{"no email", url.Values{"email": {""}}, "Enter the email address"},
		{"not an email", url.Values{"email": {"not-an-address"}, "name": {"Kept Name"}}, "like someone@example.com"},
		{"a display name with the email", url.Values{"email": {"Someone <a@example.com>"}}, "like someone@example.com"},
		{"an email too long", url.Values{"email": {strings.Repeat("a", 250) + "@example.com"}}, "at most 254"},
		{"a control character in the name", url.Values{"email": {"a@example.com"}, "name": {"a\x07b"}}, "control characters"},
		{"a name too long", url.Values{"email": {"a@example.com"}, "name": {strings.Repeat("n", 201)}}, "at most 200"},
		{"invalid UTF-8 in the name", url.Values{"email": {"a@example.com"}, "name": {"\xff"}}, "control characters"},
		{"a subject of the wrong shape", url.Values{"email": {"a@example.com"}, "sub": {"has space"}}, "The subject"},
	} {
		c.form.Set("request", id)
		c.form.Set("action", "allow")
		code, body := e.do("POST", strings.TrimPrefix(authURL, e.srv.URL), "application/x-www-form-urlencoded", c.form.Encode())
		if code != 422 || !strings.Contains(body, c.says) {
			t.Errorf("%s: %d, want 422 saying %q:\n%s", c.name, code, c.says, body)
		}
		if c.form.Get("name") == "Kept Name" && !strings.Contains(body, `value="Kept Name"`) {
			t.Errorf("%s: the typed name is gone", c.name)
		}
	}
	// The request survives the mistakes: a valid answer still completes it.
	q := e.answer(authURL, url.Values{"request": {id}, "action": {"allow"}, "email": {"ok@example.com"}}).Query()
	if q.Get("code") == "" {
		t.Fatalf("after the mistakes: %v", q)
	}
}

func TestAPageLeftOpenTooLongCannotBeAnswered(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	authURL := e.srv.URL + "/idpA/authorize?" + url.Values{"response_type": {"code"}, "client_id": {"app-1"}, "redirect_uri": {redirectURI},
		"scope": {"openid"}, "code_challenge": {challenge}, "code_challenge_method": {"S256"}}.Encode()
	id := e.openPage(authURL)
	e.clock.Advance(context.Background(), 31*time.Minute)
	code, body := e.do("POST", strings.TrimPrefix(authURL, e.srv.URL), "application/x-www-form-urlencoded",
		url.Values{"request": {id}, "action": {"allow"}, "email": {"late@example.com"}}.Encode())
	if code != 400 || !strings.Contains(body, "expired") {
		t.Fatalf("%d %s", code, body)
	}
}

func TestClientRegistrationChecksTheClientAndNeverShowsTheSecretAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	code, out := e.postJSON("POST", "/idpB/clients", `{"redirectUris": ["http://127.0.0.1:8080/cb"]}`)
	id, _ := out["clientId"].(string)
	sec, _ := out["clientSecret"].(string)
	if code != 201 || id == "" || len(sec) < 32 {
		t.Fatalf("a generated client: %d %v", code, out)
	}
	if code, out := e.postJSON("POST", "/idpB/clients", `{"clientId": "`+id+`", "clientSecret": "another-secret-1234", "redirectUris": ["https://x.example/cb"]}`); code != 200 || out["clientSecret"] != "another-secret-1234" {
		t.Fatalf("replacing it: %d %v", code, out)
	}
	code, out = e.postJSON("GET", "/idpB/clients/"+id, "")
	if code != 200 || out["clientSecret"] != nil || out["redirectUris"].([]any)[0] != "https://x.example/cb" {
		t.Fatalf("reading it: %d %v", code, out)
	}
	for _, c := range []struct{ body, field string }{
		{`{"redirectUris": []}`, "redirectUris"},
		{`{"redirectUris": ["/relative"]}`, "redirectUris[0]"},
		{`{"redirectUris": ["https://a.example/cb", "https://a.example/cb#frag"]}`, "redirectUris[1]"},
		{`{"redirectUris": ["javascript:alert(1)"]}`, "redirectUris[0]"},
		{`{"redirectUris": ["https://a.example/\u0007"]}`, "redirectUris[0]"},
		{`{"clientId": "has space", "redirectUris": ["https://a.example/cb"]}`, "clientId"},
		{`{"clientSecret": "short", "redirectUris": ["https://a.example/cb"]}`, "clientSecret"},
		{`{"redirect_uris": ["https://a.example/cb"]}`, "redirect_uris"},
		{`{"redirectUris": "https://a.example/cb"}`, "redirectUris"},
	} {
		if code, out := e.postJSON("POST", "/idpB/clients", c.body); code != 400 || out["field"] != c.field {
			t.Errorf("%s: %d %v, want 400 naming %s", c.body, code, out, c.field)
		}
	}
	if code, _ := e.do("DELETE", "/idpB/clients/"+id, "", ""); code != 204 {
		t.Fatalf("deleting: %d", code)
	}
	if code, _ := e.postJSON("GET", "/idpB/clients/"+id, ""); code != 404 {
		t.Fatalf("after deleting: %d", code)
	}
	if _, err := e.sb.RegisterClient("idpB", idp.Client{RedirectURIs: []string{"ftp://x.example/"}}); err == nil {
		t.Fatal("RegisterClient took an ftp redirect URI")
	}
}

func TestProvidersAreIndependentAndNamedByTheirPath(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	code, out := e.postJSON("GET", "/idpC/.well-known/openid-configuration", "")
	if code != 200 || out["issuer"] != e.sb.Issuer("idpC") || out["token_endpoint"] != e.sb.Issuer("idpC")+"/token" {
		t.Fatalf("idpC's discovery: %d %v", code, out)
	}
	// app-1 is idpA's client only.
	if code, body := e.do("GET", "/idpC/authorize?client_id=app-1&redirect_uri="+url.QueryEscape(redirectURI), "", ""); code != 400 || !strings.Contains(body, "not a registered client") {
		t.Fatalf("idpA's client at idpC: %d", code)
	}
	for _, path := range []string{"/bad.name/jwks", "/" + strings.Repeat("a", 41) + "/jwks", "/idpA/nothing"} {
		if code, out := e.postJSON("GET", path, ""); code != 404 || out["error"] == nil {
			t.Errorf("%s: %d %v", path, code, out)
		}
	}
}
