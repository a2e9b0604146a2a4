package contract

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/pquerna/otp/totp"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

var (
	flowField   = regexp.MustCompile(`name="flow" value="([^"]+)"`)
	totpSecret  = regexp.MustCompile(`id="totp-secret">([A-Z2-7]+)<`)
	recoveryRow = regexp.MustCompile(`<li><code>([a-z2-9]{5}-[a-z2-9]{5})</code></li>`)
)

// setMFA sets the demo app's MFA policy through the admin API.
func (e *env) setMFA(t *testing.T, policy string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := e.admin.Identity.SetAppMfa(ctx, &identityv1.SetAppMfaRequest{AppId: e.demo.AppID, Policy: policy}); err != nil {
		t.Fatalf("SetAppMfa(%s): %v", policy, err)
	}
}

// hostedSignIn signs email in on the hosted page as a browser does.
func (e *env) hostedSignIn(t *testing.T, email string) (*http.Client, *http.Response, string) {
	t.Helper()
	return e.hostedSubmit(t, "signIn", email, sessionsPassword)
}

// enrolAtSignIn signs email in under the required policy, enrols the authenticator the page shows
// and returns the app's code and the recovery codes.
func (e *env) enrolAtSignIn(t *testing.T, email string) (code string, recovery []string) {
	t.Helper()
	client, res, page := e.hostedSignIn(t, email)
	flow, secret, csrf := flowField.FindStringSubmatch(page), totpSecret.FindStringSubmatch(page), csrfField.FindStringSubmatch(page)
	if res.StatusCode != 200 || flow == nil || secret == nil || csrf == nil {
		t.Fatalf("sign-in under the required policy: %d\n%s", res.StatusCode, page)
	}
	now, err := totp.GenerateCode(secret[1], time.Now())
	if err != nil {
		t.Fatal(err)
	}
	form := url.Values{"csrf_token": {csrf[1]}, "flow": {flow[1]}, "enrol": {"1"}, "code": {now},
		"client_id": {e.demo.AppID}, "redirect_uri": {e.demo.RedirectURI}, "state": {strings.Repeat("s", 64)}}
	res, err = client.PostForm(e.stack.BaseURL+"/login/second-factor", form)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for _, m := range recoveryRow.FindAllStringSubmatch(string(raw), -1) {
		recovery = append(recovery, m[1])
	}
	cont := regexp.MustCompile(`id="continue" href="([^"]+)"`).FindStringSubmatch(string(raw))
	if res.StatusCode != 200 || len(recovery) != 10 || cont == nil {
		t.Fatalf("enrolment at sign-in: %d\n%s", res.StatusCode, raw)
	}
	loc, err := url.Parse(strings.ReplaceAll(cont[1], "&amp;", "&"))
	if err != nil || loc.Query().Get("code") == "" {
		t.Fatalf("the way on to the app: %q", cont[1])
	}
	return loc.Query().Get("code"), recovery
}

// Removing a user's second factors through the REST edge: only a write key of the user's app may,
// in the /v1 envelopes; it ends the user's sessions, and the next sign-in asks for the password
// alone.
func TestRemovingSecondFactorsTakesAWriteKeyEndsTheSessionsAndSignInAsksThePasswordAlone(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			e.t = t
			const email = "second.factor@example.com"
			first := e.pageSession(t, "signUp", email)
			userID := e.do("GET", "/v1/users/me", bearer(first.access), "").ok(t, 200).(map[string]any)["id"].(string)

			e.setMFA(t, "required")
			code, _ := e.enrolAtSignIn(t, email)
			enrolled := e.exchange(t, map[string]string{"client_id": e.demo.AppID, "grant_type": "authorization_code",
				"code": code, "redirect_uri": e.demo.RedirectURI})
			e.setMFA(t, "optional")
			if _, res, _ := e.hostedSignIn(t, email); res.StatusCode != 200 {
				t.Fatalf("sign-in of a user with a factor = %d, want the second step (200)", res.StatusCode)
			}

			path := "/v1/users/" + userID + "/second-factors"
			e.do("DELETE", path, e.read(), "").fails(t, 403)                                             // a read key
			e.do("DELETE", path, nil, "").fails(t, 401)                                                  // no credential
			e.do("DELETE", path, bearer(enrolled.access), "").fails(t, 401)                              // the user's own token
			e.do("DELETE", path, e.otherWrite(), "").fails(t, 400)                                       // another app's key: no such user
			e.do("DELETE", "/v1/users/"+uuid.NewString()+"/second-factors", e.write(), "").fails(t, 400) // unknown user
			e.do("DELETE", "/v1/users/not-a-uuid/second-factors", e.write(), "").fails(t, 400)
			if _, res, _ := e.hostedSignIn(t, email); res.StatusCode != 200 {
				t.Fatalf("refused removals removed the factor: sign-in = %d", res.StatusCode)
			}

			r := e.do("DELETE", path, e.write(), "")
			if data := r.ok(t, 200); data != nil {
				t.Errorf("data = %v, want null", data)
			}
			if r.body.(map[string]any)["message"] != "Second factors removed" {
				t.Errorf("message = %v", r.body)
			}
			e.refreshFails(t, enrolled.refresh)
			e.refreshFails(t, first.refresh)
			if _, res, _ := e.hostedSignIn(t, email); res.StatusCode != 303 {
				t.Errorf("sign-in after the removal = %d, want straight to the app (303)", res.StatusCode)
			}
			// A user without factors is no error.
			e.do("DELETE", path, e.write(), "").ok(t, 200)
		})
	}
}
