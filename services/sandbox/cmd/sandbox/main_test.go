package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/berthhq/berth/pkg/testkit/sandboxproc"
)

func TestMain(m *testing.M) { sandboxproc.Main(m) }

// TestTheProcessServesTheIdentityProvidersBesideThePaymentSandboxes runs the built binary and
// walks a provider from discovery to its authorize page, as a relying party and a browser would.
func TestTheProcessServesTheIdentityProvidersBesideThePaymentSandboxes(t *testing.T) {
	sb := sandboxproc.Parallel(t)
	issuer := sb.IdpURL + "/idpA-" + sb.Account() // a provider of its own
	resp, err := http.Get(issuer + "/.well-known/openid-configuration")
	if err != nil {
		t.Fatal(err)
	}
	var meta map[string]any
	err = json.NewDecoder(resp.Body).Decode(&meta)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || meta["issuer"] != issuer || meta["authorization_endpoint"] != issuer+"/authorize" {
		t.Fatalf("discovery: %d %v %v", resp.StatusCode, meta, err)
	}
	resp, err = http.Post(issuer+"/clients", "application/json", strings.NewReader(`{"clientId": "app", "redirectUris": ["http://127.0.0.1:1/cb"]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("registering a client: %d", resp.StatusCode)
	}
	resp, err = http.Get(issuer + "/authorize?" + url.Values{"client_id": {"app"}, "redirect_uri": {"http://127.0.0.1:1/cb"}, "response_type": {"code"},
		"scope": {"openid"}, "code_challenge": {"E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"}, "code_challenge_method": {"S256"}}.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Fatalf("the authorize page: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
}
