package grpcapi_test

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// Over the wire: an operator sets, lists and clears a slot; the client secret goes in once and
// never comes back out, and an update without a secret keeps the stored one.
func TestIdentityProviderSlotsAreOperatorOnlyAndNeverReturnTheirSecret(t *testing.T) {
	e := newEnv(t)
	a := e.provision(t)
	const secret = "s3cret-of-the-slot"
	set := &identityv1.SetAppIdentityProviderRequest{AppId: a.app.GetId(), ClientSecret: secret, Provider: &identityv1.IdentityProvider{
		Slot: "idpB", DisplayName: "Provider B", DiscoveryUrl: "https://idp.example.test/.well-known/openid-configuration",
		ClientId: "berth-app", AllowedEmailDomains: []string{"Example.TEST"},
	}}
	got, err := e.admin.SetAppIdentityProvider(asAdmin(t), set)
	if err != nil {
		t.Fatal(err)
	}
	want := &identityv1.AppIdentityProviders{AppId: a.app.GetId(), Items: []*identityv1.IdentityProvider{{
		Slot: "idpB", DisplayName: "Provider B", DiscoveryUrl: "https://idp.example.test/.well-known/openid-configuration",
		ClientId: "berth-app", HasClientSecret: true, Scopes: []string{"openid", "email", "profile"}, AllowedEmailDomains: []string{"example.test"},
	}}}
	if !proto.Equal(got, want) {
		t.Errorf("SetAppIdentityProvider =\n %v\nwant\n %v", got, want)
	}
	if strings.Contains(got.String(), secret) {
		t.Error("the answer carries the client secret")
	}

	set.ClientSecret, set.Provider.DisplayName = "", "Renamed"
	got, err = e.admin.SetAppIdentityProvider(asAdmin(t), set)
	if err != nil || !got.GetItems()[0].GetHasClientSecret() || got.GetItems()[0].GetDisplayName() != "Renamed" {
		t.Errorf("update without a secret = %v, %v; want the stored secret kept", got, err)
	}
	list, err := e.admin.ListAppIdentityProviders(asAdmin(t), &identityv1.ListAppIdentityProvidersRequest{AppId: a.app.GetId()})
	if err != nil || len(list.GetItems()) != 1 || list.GetItems()[0].GetSlot() != "idpB" {
		t.Errorf("ListAppIdentityProviders = %v, %v", list, err)
	}

	for name, bad := range map[string]*identityv1.SetAppIdentityProviderRequest{
		"unknown slot":            {AppId: a.app.GetId(), Provider: &identityv1.IdentityProvider{Slot: "idpE", DisplayName: "E", DiscoveryUrl: "https://e.test/d", ClientId: "c"}},
		"plain http off loopback": {AppId: a.app.GetId(), Provider: &identityv1.IdentityProvider{Slot: "idpA", DisplayName: "A", DiscoveryUrl: "http://idp.example.test/d", ClientId: "c"}},
		"no endpoints":            {AppId: a.app.GetId(), Provider: &identityv1.IdentityProvider{Slot: "idpA", DisplayName: "A", ClientId: "c"}},
		"secret with a newline":   {AppId: a.app.GetId(), ClientSecret: "a\nb", Provider: &identityv1.IdentityProvider{Slot: "idpA", DisplayName: "A", DiscoveryUrl: "https://a.test/d", ClientId: "c"}},
	} {
		_, err := e.admin.SetAppIdentityProvider(asAdmin(t), bad)
		wantCode(t, name, err, codes.InvalidArgument)
	}
	_, err = e.admin.SetAppIdentityProvider(a.ctx(t, "write"), set)
	wantCode(t, "a slot set with an API key", err, codes.Unauthenticated)
	_, err = e.admin.ListAppIdentityProviders(ctxWith(t), &identityv1.ListAppIdentityProvidersRequest{AppId: a.app.GetId()})
	wantCode(t, "slots listed without the admin token", err, codes.Unauthenticated)

	cleared, err := e.admin.ClearAppIdentityProvider(asAdmin(t), &identityv1.ClearAppIdentityProviderRequest{AppId: a.app.GetId(), Slot: "idpB"})
	if err != nil || len(cleared.GetItems()) != 0 {
		t.Errorf("ClearAppIdentityProvider = %v, %v", cleared, err)
	}
}
