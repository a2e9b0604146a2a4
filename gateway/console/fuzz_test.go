package console

import (
	"net/url"
	"testing"
	"unicode/utf8"

	"github.com/berthhq/berth/pkg/text"
)

// FuzzConsoleForm feeds arbitrary bodies to every form parser of the console: none may panic, and
// whatever one accepts holds the text rule and its limits, so nothing broken reaches identity.
func FuzzConsoleForm(f *testing.F) {
	for _, seed := range []string{
		"email=owner%40example.com&password=secret",
		"challenge=c&code=123456",
		"token=t&name=Ada&password=pw",
		"project=5a1c8e0a-1111-4222-8333-944445555666",
		"email=a%40b.c&name=&language=de",
		"code=1&current_password=pw",
		"action=create&type=read&name=k&description=d",
		"action=rename&key=0b6c2a52-7d1e-4a55-9d0e-3f1f2c4b5a61&name=x",
		"action=revoke&key=0b6c2a52-7d1e-4a55-9d0e-3f1f2c4b5a61&confirm=yes",
		"action=branding&display_name=Shop&accent=%23aabbcc&logo_url=https%3A%2F%2Fx&default_language=en",
		"action=clearProvider&slot=idpA&confirm=yes",
		"action=addOrigin&origin=https%3A%2F%2Fapp.example",
		"name=%00&email=%ff",
		"action=create&url=https%3A%2F%2Fhooks.example%2Fin&events=user.created+tenant.updated&description=d",
		"action=update&url=http%3A%2F%2F127.0.0.1%3A8080&events=*",
		"action=delete&confirm=yes",
		"action=retry&delivery=8d4f2e3b-4444-4555-8666-c77778888999",
		"action=recover&since=2026-11-26T09%3A30",
		"action=replay&event=9e5a3f4c-5555-4666-8777-d88889999aaa",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, body string) {
		v, err := url.ParseQuery(body)
		if err != nil {
			return
		}
		var accepted []string
		if s, err := signInFrom(v); err == nil {
			accepted = append(accepted, s.Email, s.Password)
		}
		if s, err := secondFactorFrom(v); err == nil {
			accepted = append(accepted, s.Challenge, s.Code)
		}
		if s, err := acceptFrom(v); err == nil {
			accepted = append(accepted, s.Token, s.Name, s.Password)
		}
		if s, err := switchFrom(v); err == nil {
			accepted = append(accepted, s)
		}
		if s, err := inviteFrom(v); err == nil {
			accepted = append(accepted, s.Email, s.Name, s.Language)
		}
		if s, err := totpFrom(v); err == nil {
			accepted = append(accepted, s.Code, s.Password)
		}
		if s, err := keyFrom(v); err == nil {
			accepted = append(accepted, s.Action, s.KeyID, s.Type, s.Name, s.Description)
			if s.Action == keyRevoke && v.Get("confirm") != "yes" {
				t.Errorf("a revocation without its confirmation was accepted: %q", body)
			}
		}
		if s, err := appFrom(v); err == nil {
			accepted = append(accepted, s.Action, s.Origin, s.DisplayName, s.Accent, s.LogoURL, s.Language, s.Policy, s.Slot)
			if (s.Action == appRotate || s.Action == appDisable) && v.Get("confirm") != "yes" {
				t.Errorf("%s without its confirmation was accepted: %q", s.Action, body)
			}
		}
		for _, parse := range []func(url.Values) (endpointForm, error){eventsFrom, endpointFrom} {
			s, err := parse(v)
			if err != nil {
				continue
			}
			accepted = append(append(accepted, s.Action, s.URL, s.Description, s.DeliveryID, s.Since, s.EventID), s.Events...)
			if (s.Action == endpointDelete || s.Action == endpointRotate || s.Action == endpointDisable) && v.Get("confirm") != "yes" {
				t.Errorf("%s without its confirmation was accepted: %q", s.Action, body)
			}
		}
		for _, s := range accepted {
			if !utf8.ValidString(s) || !text.Valid(s) || len(s) > maxToken {
				t.Errorf("a parser accepted %q from %q", s, body)
			}
		}
	})
}
