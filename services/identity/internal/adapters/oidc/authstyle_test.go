package oidc

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// tokenEndpoint is a provider whose token endpoint fails every request, recording how each one
// carried the client secret.
type tokenEndpoint struct {
	mu     sync.Mutex
	styles []string // "basic" or "post"
}

func (e *tokenEndpoint) serve(t *testing.T, methods []string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	var srv *httptest.Server
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, _ *http.Request) {
		doc := map[string]any{"issuer": srv.URL, "authorization_endpoint": srv.URL + "/authorize",
			"token_endpoint": srv.URL + "/token", "jwks_uri": srv.URL + "/jwks"}
		if methods != nil {
			doc["token_endpoint_auth_methods_supported"] = methods
		}
		_ = json.NewEncoder(w).Encode(doc)
	})
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		style := "post"
		if _, _, ok := r.BasicAuth(); ok {
			style = "basic"
		}
		e.mu.Lock()
		e.styles = append(e.styles, style)
		e.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusBadRequest)
		_, _ = w.Write([]byte(`{"error":"invalid_grant"}`))
	})
	srv = httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// A failed code exchange is never repeated: a provider counts a second presentation of the code
// as a replay (and may revoke what it was redeemed for), so the client secret's style is taken
// from the discovery document instead of probed.
func TestACodeIsPresentedToTheProviderOnceInTheStyleItsDiscoveryNames(t *testing.T) {
	for _, tc := range []struct {
		name    string
		methods []string
		want    string
	}{
		{"no methods listed: HTTP Basic, the default", nil, "basic"},
		{"both listed", []string{"client_secret_post", "client_secret_basic"}, "basic"},
		{"only the form parameters", []string{"client_secret_post"}, "post"},
		{"only methods without a secret", []string{"private_key_jwt"}, "basic"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var e tokenEndpoint
			srv := e.serve(t, tc.methods)
			call := app.ProviderCall{
				Provider:     domain.IdentityProvider{AppID: "app", Slot: "idpA", DiscoveryURL: srv.URL + discoverySuffix, ClientID: "client", UpdatedAt: time.Unix(1, 0)},
				ClientSecret: "secret", RedirectURI: "https://berth.example/callback", Now: time.Now,
			}
			if _, err := New(time.Second).Exchange(context.Background(), call, "code", "verifier", "nonce"); err == nil {
				t.Fatal("a refused code was accepted")
			}
			e.mu.Lock()
			defer e.mu.Unlock()
			if len(e.styles) != 1 || e.styles[0] != tc.want {
				t.Fatalf("the token endpoint saw %v, want one request in the %s style", e.styles, tc.want)
			}
		})
	}
}
