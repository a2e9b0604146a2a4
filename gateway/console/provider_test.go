package console

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

func TestTheAppPageConfiguresAProviderSlotAndKeepsAStoredSecretWhenNoneIsTyped(t *testing.T) {
	f := newFake()
	c, _ := newConsole(t, f)
	b := newBrowser(t, c)
	b.signIn()
	form := url.Values{"action": {"setProvider"}, "slot": {"idpC"}, "provider_name": {"Provider C"}, "client_id": {"berth-demo"},
		"client_secret": {" a secret with spaces "}, "discovery_url": {"https://idp.example/.well-known/openid-configuration"},
		"scopes": {"openid, email profile"}, "allowed_domains": {"example.com example.org"}}
	if rec := b.post(frame{}.AppURL(testApp), form); rec.Code != http.StatusSeeOther {
		t.Fatalf("set provider = %d:\n%s", rec.Code, rec.Body)
	}
	want := &identityv1.SetAppIdentityProviderRequest{AppId: testApp, ClientSecret: " a secret with spaces ", Provider: &identityv1.IdentityProvider{
		Slot: "idpC", DisplayName: "Provider C", ClientId: "berth-demo", DiscoveryUrl: "https://idp.example/.well-known/openid-configuration",
		Scopes: []string{"openid", "email", "profile"}, AllowedEmailDomains: []string{"example.com", "example.org"}}}
	if got := f.received("SetAppIdentityProvider")[0].req; !proto.Equal(got, want) {
		t.Errorf("SetAppIdentityProvider = %v, want %v", got, want)
	}
	form.Del("client_secret")
	b.post(frame{}.AppURL(testApp), form)
	if got := f.received("SetAppIdentityProvider")[1].req.(*identityv1.SetAppIdentityProviderRequest); got.GetClientSecret() != "" {
		t.Errorf("a form without a secret sent %q, want none so identity keeps the stored one", got.GetClientSecret())
	}
}

func TestAProviderFormMissingItsNameOrClientIDOrNamingNoSlotIsRefusedWithTheField(t *testing.T) {
	f := newFake()
	c, _ := newConsole(t, f)
	b := newBrowser(t, c)
	b.signIn()
	good := url.Values{"action": {"setProvider"}, "slot": {"idpB"}, "provider_name": {"B"}, "client_id": {"c"}}
	for field, value := range map[string]string{"slot": "idpE", "provider_name": "", "client_id": "", "discovery_url": "https://x\x00"} {
		form := url.Values{}
		for k, v := range good {
			form[k] = v
		}
		form.Set(field, value)
		rec := b.post(frame{}.AppURL(testApp), form)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "("+field+")") {
			t.Errorf("%s=%q: %d:\n%s", field, value, rec.Code, rec.Body)
		}
	}
	if n := len(f.received("SetAppIdentityProvider")); n != 0 {
		t.Errorf("%d refused forms reached identity", n)
	}
}

func TestEditingAConfiguredSlotStartsTheFormFromItsSettingsButNeverItsSecret(t *testing.T) {
	f := newFake()
	c, _ := newConsole(t, f)
	b := newBrowser(t, c)
	b.signIn()
	body := b.get(frame{}.AppURL(testApp) + "?edit=idpA").Body.String()
	for _, want := range []string{`<option value="idpA" selected>`, `name="provider_name" required maxlength="128" value="Provider A"`, `value="client-a"`, `id="edit-idpA"`} {
		if !strings.Contains(body, want) {
			t.Errorf("the form editing idpA lacks %q", want)
		}
	}
	if strings.Contains(body, `name="client_secret" type="password" maxlength="512" autocomplete="new-password" value=`) {
		t.Error("the form carries a client secret")
	}
}
