package domain

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/berthhq/berth/pkg/fault"
)

func TestAProviderSlotTakesADiscoveryURLOrAllEndpointsAndNormalisesScopesAndDomains(t *testing.T) {
	disc := "https://idp.example.test/.well-known/openid-configuration"
	ok := func(s ProviderSettings) ProviderSettings {
		if s.DisplayName == "" {
			s.DisplayName = "Provider"
		}
		if s.ClientID == "" {
			s.ClientID = "client"
		}
		return s
	}
	for _, tc := range []struct {
		name      string
		slot      string
		in        ProviderSettings
		wantField string // "" = accepted
	}{
		{"discovery", "idpA", ok(ProviderSettings{DiscoveryURL: disc}), ""},
		{"explicit endpoints", "idpD", ok(ProviderSettings{Issuer: "https://o.test", AuthURL: "https://o.test/a", TokenURL: "https://o.test/t", JWKSURL: "https://o.test/k"}), ""},
		{"http on loopback (a sandbox)", "idpB", ok(ProviderSettings{DiscoveryURL: "http://127.0.0.1:4010/idp/.well-known/openid-configuration"}), ""},
		{"http elsewhere", "idpB", ok(ProviderSettings{DiscoveryURL: "http://idp.example.test/d"}), "provider.discoveryUrl"},
		{"credentials in the URL", "idpB", ok(ProviderSettings{DiscoveryURL: "https://u:p@idp.example.test/d"}), "provider.discoveryUrl"},
		{"both discovery and endpoints", "idpA", ok(ProviderSettings{DiscoveryURL: disc, Issuer: "https://o.test"}), "provider.discoveryUrl"},
		{"endpoints without JWKS", "idpA", ok(ProviderSettings{Issuer: "https://o.test", AuthURL: "https://o.test/a", TokenURL: "https://o.test/t"}), "provider.discoveryUrl"},
		{"unknown slot", "idpE", ok(ProviderSettings{DiscoveryURL: disc}), "slot"},
		{"lower-case slot", "idpa", ok(ProviderSettings{DiscoveryURL: disc}), "slot"},
		{"no display name", "idpA", ProviderSettings{DiscoveryURL: disc, ClientID: "c"}, "provider.displayName"},
		{"no client id", "idpA", ProviderSettings{DiscoveryURL: disc, DisplayName: "P"}, "provider.clientId"},
		{"control character in the name", "idpA", ok(ProviderSettings{DiscoveryURL: disc, DisplayName: "P\x1b[31m"}), "provider.displayName"},
		{"scope with a space", "idpA", ok(ProviderSettings{DiscoveryURL: disc, Scopes: []string{"a b"}}), "provider.scopes"},
		{"domain with a path", "idpA", ok(ProviderSettings{DiscoveryURL: disc, AllowedDomains: []string{"example.test/x"}}), "provider.allowedEmailDomains"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewIdentityProvider("app", tc.slot, tc.in, time.Time{})
			if tc.wantField == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var f *fault.Fault
			if !errors.As(err, &f) || f.Field() != tc.wantField {
				t.Errorf("error = %v, want a refusal of %s", err, tc.wantField)
			}
		})
	}

	p, err := NewIdentityProvider("app", "idpA", ok(ProviderSettings{DiscoveryURL: disc, Scopes: []string{"email", "openid", "email"},
		AllowedDomains: []string{" Example.TEST", "b.test", "example.test"}}), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"openid", "email"}; !slices.Equal(p.Scopes, want) {
		t.Errorf("scopes = %v, want %v (openid first, once each)", p.Scopes, want)
	}
	if want := []string{"b.test", "example.test"}; !slices.Equal(p.AllowedDomains, want) {
		t.Errorf("domains = %v, want %v", p.AllowedDomains, want)
	}
	for email, want := range map[string]bool{"ada@example.test": true, "ada@EXAMPLE.test": true, "ada@sub.example.test": false, "ada@other.test": false} {
		if got := p.AllowsEmail(email); got != want {
			t.Errorf("AllowsEmail(%q) = %v, want %v", email, got, want)
		}
	}
}
