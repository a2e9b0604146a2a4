package console

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

func TestTheAppPageReplacesTheRedirectURIsOnePerLineAndSetsTheTokenLifetimes(t *testing.T) {
	f := newFake()
	c, _ := newConsole(t, f)
	b := newBrowser(t, c)
	b.signIn()
	if body := b.get(frame{}.AppURL(testApp)).Body.String(); !strings.Contains(body, `id="redirects-form"`) || !strings.Contains(body, `id="lifetimes-form"`) {
		t.Fatalf("the app page lacks the sign-in forms:\n%s", body)
	}
	for _, tc := range []struct {
		form   url.Values
		method string
		want   proto.Message
	}{
		{url.Values{"action": {"redirectUris"}, "redirect_uris": {"https://app.example/cb\r\n\n  http://localhost:3000/cb  \n"}}, "SetAppRedirectUris",
			&identityv1.SetAppRedirectUrisRequest{AppId: testApp, RedirectUris: []string{"https://app.example/cb", "http://localhost:3000/cb"}}},
		{url.Values{"action": {"redirectUris"}, "redirect_uris": {""}}, "SetAppRedirectUris",
			&identityv1.SetAppRedirectUrisRequest{AppId: testApp, RedirectUris: []string{}}},
		{url.Values{"action": {"tokenLifetimes"}, "access_ttl": {"300"}, "refresh_ttl": {"604800"}}, "SetAppTokenLifetimes",
			&identityv1.SetAppTokenLifetimesRequest{AppId: testApp, AccessTokenTtlSeconds: 300, RefreshTokenTtlSeconds: 604800}},
	} {
		if rec := b.post(frame{}.AppURL(testApp), tc.form); rec.Code != http.StatusSeeOther {
			t.Fatalf("%s = %d:\n%s", tc.method, rec.Code, rec.Body)
		}
		calls := f.received(tc.method)
		if got := calls[len(calls)-1].req; !proto.Equal(got, tc.want) {
			t.Errorf("%s = %v, want %v", tc.method, got, tc.want)
		}
	}
}

func TestBrokenSignInSettingsAreRefusedWithTheirField(t *testing.T) {
	f := newFake()
	c, _ := newConsole(t, f)
	b := newBrowser(t, c)
	b.signIn()
	for _, tc := range []struct {
		form  url.Values
		field string
	}{
		{url.Values{"action": {"tokenLifetimes"}, "access_ttl": {"-1"}, "refresh_ttl": {"600"}}, "access_ttl"},
		{url.Values{"action": {"tokenLifetimes"}, "access_ttl": {"300"}, "refresh_ttl": {"4294967296"}}, "refresh_ttl"},
		{url.Values{"action": {"tokenLifetimes"}, "access_ttl": {"+300"}, "refresh_ttl": {"600"}}, "access_ttl"},
		{url.Values{"action": {"redirectUris"}, "redirect_uris": {"https://app.example/\x00"}}, "redirect_uris"},
		{url.Values{"action": {"redirectUris"}, "redirect_uris": {strings.Repeat("https://app.example/cb\n", maxRedirectURIs+1)}}, "redirect_uris"},
	} {
		rec := b.post(frame{}.AppURL(testApp), tc.form)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "("+tc.field+")") {
			t.Errorf("%v: %d, want 400 naming %s", tc.form, rec.Code, tc.field)
		}
	}
	if n := len(f.received("SetAppRedirectUris")) + len(f.received("SetAppTokenLifetimes")); n != 0 {
		t.Errorf("%d refused forms reached identity", n)
	}
}
