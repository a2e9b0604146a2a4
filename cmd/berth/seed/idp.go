package seed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// demoClientID is the demo app's client id at each sandbox identity provider.
const demoClientID = "berth-demo"

// providerCallbackPath is where the sandbox providers send the browser back: the hosted login's
// callback on the edge, which every client registers as its redirect URI.
const providerCallbackPath = "/login/idp/callback"

// seedIdp registers the app as a client of the sandbox's identity providers idpA and idpB (a fresh
// secret each time) and configures the app's slots of the same names against them. Without an
// identity-provider sandbox it configures nothing.
func seedIdp(ctx context.Context, a Admin, appID string, o Options) (map[string]IdpDemo, error) {
	if o.Sandbox.Idp == "" {
		return nil, nil
	}
	out := map[string]IdpDemo{}
	for _, s := range DemoIdpSlots {
		issuer := o.Sandbox.Idp + "/" + s.Slot
		secret := randomAlnum(32)
		if err := registerClient(ctx, issuer, secret, o.BaseURL+providerCallbackPath); err != nil {
			return nil, err
		}
		if _, err := a.Identity.SetAppIdentityProvider(ctx, &identityv1.SetAppIdentityProviderRequest{AppId: appID, ClientSecret: secret,
			Provider: &identityv1.IdentityProvider{Slot: s.Slot, DisplayName: s.DisplayName, ClientId: demoClientID,
				DiscoveryUrl: issuer + "/.well-known/openid-configuration"}}); err != nil {
			return nil, fmt.Errorf("identity provider %s: %w", s.Slot, err)
		}
		out[s.Slot] = IdpDemo{DisplayName: s.DisplayName, Issuer: issuer, ClientID: demoClientID}
	}
	return out, nil
}

// registerClient registers (or replaces) the demo client at the sandbox provider of issuer.
func registerClient(ctx context.Context, issuer, secret, redirectURI string) error {
	body, _ := json.Marshal(map[string]any{"clientId": demoClientID, "clientSecret": secret, "redirectUris": []string{redirectURI}})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, issuer+"/clients", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("identity provider %s: %w", issuer, err)
	}
	defer func() { _ = resp.Body.Close() }()
	answer, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK && resp.StatusCode != http.StatusCreated {
		return fmt.Errorf("identity provider %s: register the demo client: status %d: %s", issuer, resp.StatusCode, answer)
	}
	return nil
}
