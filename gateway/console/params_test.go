package console

import (
	"net/url"
	"strings"
	"testing"
)

func TestFormParsersRefuseBadFieldsNamingThem(t *testing.T) {
	long := strings.Repeat("x", 129)
	for _, tc := range []struct {
		name  string
		parse func(url.Values) error
		form  url.Values
		field string // "" = accepted
	}{
		{"sign-in", signIn, url.Values{"email": {"owner@example.com"}, "password": {"pw"}}, ""},
		{"sign-in with a display-name address", signIn, url.Values{"email": {"Ada <ada@example.com>"}, "password": {"pw"}}, "email"},
		{"sign-in without password", signIn, url.Values{"email": {"owner@example.com"}}, "password"},
		{"sign-in with a control character", signIn, url.Values{"email": {"owner@example.com"}, "password": {"p\x00w"}}, "password"},
		{"sign-in with broken UTF-8", signIn, url.Values{"email": {"owner@example.com\xff"}, "password": {"pw"}}, "email"},
		{"invite", invite, url.Values{"email": {"a@example.com"}, "language": {"de"}}, ""},
		{"invite in French", invite, url.Values{"email": {"a@example.com"}, "language": {"fr"}}, "language"},
		{"invite with a long name", invite, url.Values{"email": {"a@example.com"}, "name": {long}, "language": {"en"}}, "name"},
		{"switch to a non-id", switchTo, url.Values{"project": {"../admin"}}, "project"},
		{"create a key", key, url.Values{"action": {"create"}, "type": {"read"}, "name": {"n"}}, ""},
		{"create an admin key", key, url.Values{"action": {"create"}, "type": {"admin"}, "name": {"n"}}, "type"},
		{"create a key without a name", key, url.Values{"action": {"create"}, "type": {"read"}}, "name"},
		{"rename a non-id", key, url.Values{"action": {"rename"}, "key": {"1"}, "name": {"n"}}, "key"},
		{"revoke unconfirmed", key, url.Values{"action": {"revoke"}, "key": {keyID}}, "confirm"},
		{"unknown key action", key, url.Values{"action": {"delete"}}, "action"},
		{"rotate unconfirmed", app, url.Values{"action": {"rotate"}}, "confirm"},
		{"rotate confirmed", app, url.Values{"action": {"rotate"}, "confirm": {"yes"}}, ""},
		{"mfa policy", app, url.Values{"action": {"mfa"}, "policy": {"sometimes"}}, "policy"},
		{"clear a fifth slot", app, url.Values{"action": {"clearProvider"}, "slot": {"idpE"}, "confirm": {"yes"}}, "slot"},
		{"a branding accent too long", app, url.Values{"action": {"branding"}, "accent": {"#aabbccdd"}}, "accent"},
		{"passkeys", app, url.Values{"action": {"passkeys"}, "enabled": {"maybe"}}, "enabled"},
		{"search every tenant", searchTenants, url.Values{}, ""},
		{"a cursor with a control character", searchTenants, url.Values{"q": {"acme"}, "after": {"c\x00d"}}, "after"},
		{"freeze confirmed", tenantAction, url.Values{"action": {"freeze"}, "confirm": {"yes"}}, ""},
		{"freeze unconfirmed", tenantAction, url.Values{"action": {"freeze"}}, "confirm"},
		{"unfreeze needs no confirmation", tenantAction, url.Values{"action": {"unfreeze"}}, ""},
		{"delete a tenant", tenantAction, url.Values{"action": {"delete"}, "confirm": {"yes"}}, "action"},
		{"invoices in test mode", invoiceMode, url.Values{"mode": {"test"}}, ""},
		{"invoices in a made-up mode", invoiceMode, url.Values{"mode": {"TEST"}}, "mode"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.parse(tc.form)
			if got := refused(err); got != tc.field || (tc.field != "" && err == nil) {
				t.Errorf("refused field %q (%v), want %q", got, err, tc.field)
			}
		})
	}
}

func signIn(v url.Values) error        { _, err := signInFrom(v); return err }
func invite(v url.Values) error        { _, err := inviteFrom(v); return err }
func switchTo(v url.Values) error      { _, err := switchFrom(v); return err }
func key(v url.Values) error           { _, err := keyFrom(v); return err }
func app(v url.Values) error           { _, err := appFrom(v); return err }
func searchTenants(v url.Values) error { _, err := tenantSearchFrom(v); return err }
func tenantAction(v url.Values) error  { _, err := tenantFrom(v); return err }
func invoiceMode(v url.Values) error   { _, err := invoiceModeFrom(v); return err }
