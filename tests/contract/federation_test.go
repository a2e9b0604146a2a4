package contract

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/cmd/berth/stacktest"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/sandbox/idp"
)

var idpRequestField = regexp.MustCompile(`name="request" value="([^"]+)"`)

// Route 1 takes the code of a sign-in through an identity provider with service=idpA, as the
// published SDKs send back what the redirect carried, and refuses a service no sign-in names.
// The sign-in runs over the real edge: the hosted page's provider link, the sandbox provider's
// form, the edge's callback.
func TestRouteOneExchangesTheCodeOfAProviderSignInWithServiceIdpA(t *testing.T) {
	e := start(t, "memory")
	provider := "idpA-" + stacktest.RandomHex(6)
	const secret = "a-client-secret-for-the-contract"
	if _, err := e.stack.Sandboxes.Idp.RegisterClient(provider, idp.Client{ClientID: "berth-contract", ClientSecret: secret,
		RedirectURIs: []string{e.stack.BaseURL + "/login/idp/callback"}}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := e.admin.Identity.SetAppIdentityProvider(ctx, &identityv1.SetAppIdentityProviderRequest{AppId: e.demo.AppID, ClientSecret: secret,
		Provider: &identityv1.IdentityProvider{Slot: "idpA", DisplayName: "Sandbox A", ClientId: "berth-contract",
			DiscoveryUrl: e.stack.Sandboxes.Idp.Issuer(provider) + "/.well-known/openid-configuration"}}); err != nil {
		t.Fatal(err)
	}

	jar, _ := cookiejar.New(nil)
	client := &http.Client{Jar: jar, Timeout: 10 * time.Second, CheckRedirect: func(r *http.Request, _ []*http.Request) error {
		if strings.HasPrefix(r.URL.String(), e.demo.RedirectURI) {
			return http.ErrUseLastResponse // the app's page: nothing listens there
		}
		return nil
	}}
	start := e.stack.BaseURL + "/login/idp?" + url.Values{"client_id": {e.demo.AppID}, "redirect_uri": {e.demo.RedirectURI},
		"state": {"contract-state"}, "nonce": {"n"}, "slot": {"idpA"}}.Encode()
	res, err := client.Get(start)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	m := idpRequestField.FindSubmatch(page)
	if res.StatusCode != http.StatusOK || m == nil {
		t.Fatalf("the provider link led to %s (%d), not the provider's page:\n%s", res.Request.URL, res.StatusCode, page)
	}
	res, err = client.PostForm(res.Request.URL.String(), url.Values{"request": {string(m[1])}, "action": {"allow"},
		"email": {"contract-" + stacktest.RandomHex(4) + "@example.com"}, "email_verified": {"true"}})
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	landed, err := url.Parse(res.Header.Get("Location"))
	if err != nil || res.StatusCode != http.StatusSeeOther || landed.Query().Get("service") != "idpA" || landed.Query().Get("state") != "contract-state" {
		t.Fatalf("the callback answered %d to %q, want a 303 to the app with service=idpA", res.StatusCode, res.Header.Get("Location"))
	}

	body := map[string]string{"client_id": e.demo.AppID, "grant_type": "authorization_code", "code": landed.Query().Get("code"),
		"redirect_uri": e.demo.RedirectURI, "nonce": "n", "state": "contract-state", "service": "idpE"}
	raw, _ := json.Marshal(body)
	e.apiFails(t, e.do("POST", "/api/v1/tokens", nil, string(raw)), 400, "[E4000]")
	body["service"] = "idpA"
	if tok := e.exchange(t, body); tok.access == "" {
		t.Fatal("no access token")
	}
}
