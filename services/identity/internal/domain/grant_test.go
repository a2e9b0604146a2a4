package domain

import (
	"github.com/berthhq/berth/pkg/fault"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestRegisteredRedirectIgnoresOneTrailingSlashOnly(t *testing.T) {
	a := App{RedirectURIs: []string{"https://app.test/cb", "https://app.test/", "https://app.test/q?x=1"}}
	cases := map[string]bool{
		"https://app.test/cb":      true,
		"https://app.test/cb/":     true,
		"https://app.test":         true,
		"https://app.test/":        true,
		"https://app.test/q?x=1":   true,
		"https://app.test/cb//":    false,
		"https://app.test/CB":      false,
		"https://app.test/q?x=2":   false,
		"http://app.test/cb":       false,
		"https://app.test.evil/cb": false,
		"":                         false,
	}
	for uri, want := range cases {
		if got := a.RegisteredRedirect(uri); got != want {
			t.Errorf("RegisteredRedirect(%q) = %t, want %t", uri, got, want)
		}
	}
}

func TestScopesSplitsOnWhitespaceWithoutDuplicates(t *testing.T) {
	cases := map[string][]string{
		"":                                {},
		"openid":                          {"openid"},
		" openid  profile\temail openid ": {"openid", "profile", "email"},
	}
	for in, want := range cases {
		if got := Scopes(in); !slices.Equal(got, want) || got == nil {
			t.Errorf("Scopes(%q) = %#v, want %#v", in, got, want)
		}
	}
}

func TestSecretsAreWellFormedAndHashedStably(t *testing.T) {
	secret, hash, err := NewSecret()
	if err != nil {
		t.Fatal(err)
	}
	other, _, _ := NewSecret()
	if len(secret) != 43 || !WellFormedSecret(secret) || secret == other || !slices.Equal(HashSecret(secret), hash) {
		t.Errorf("secret %q / hash %x", secret, hash)
	}
	for _, bad := range []string{"", "abc", secret + "A", strings.Repeat("*", 43), secret[:42] + "="} {
		if WellFormedSecret(bad) {
			t.Errorf("WellFormedSecret(%q) = true", bad)
		}
	}
}

func TestExpiryEdges(t *testing.T) {
	issued := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := AuthCode{ExpiresAt: issued.Add(AuthCodeTTL)}
	r := RefreshToken{ExpiresAt: issued.Add(time.Hour)}
	cases := []struct {
		name string
		got  bool
		want bool
	}{
		{"code at 59 s", c.Expired(issued.Add(59 * time.Second)), false},
		{"code at 60 s", c.Expired(issued.Add(60 * time.Second)), false},
		{"code at 61 s", c.Expired(issued.Add(61 * time.Second)), true},
		{"refresh a second before its end", r.Expired(issued.Add(time.Hour - time.Second)), false},
		{"refresh at its end", r.Expired(issued.Add(time.Hour)), true},
	}
	for _, c := range cases {
		if c.got != c.want {
			t.Errorf("%s: expired = %t, want %t", c.name, c.got, c.want)
		}
	}
}

func TestCheckAuthorizationParams(t *testing.T) {
	if err := CheckAuthorizationParams(strings.Repeat("s", 512), "n", "openid"); err != nil {
		t.Errorf("512-character state: %v", err)
	}
	for _, c := range []struct{ state, nonce, scope, field string }{
		{strings.Repeat("s", 513), "", "", "state"},
		{"", "a\nb", "", "nonce"},
		{"", "", strings.Repeat("x", 1025), "scope"},
	} {
		err := CheckAuthorizationParams(c.state, c.nonce, c.scope)
		if f, ok := fault.As(err); !ok || f.Kind() != fault.KindInvalid || f.Field() != c.field {
			t.Errorf("error = %v, want a validation error on %s", err, c.field)
		}
	}
}

func TestNarrowScopeIssuesTheIntersectionNeverMore(t *testing.T) {
	for _, c := range []struct{ granted, requested, want string }{
		{"openid email", "", "openid email"},
		{"openid email", "  ", "openid email"},
		{"openid email", "email", "email"},
		{"openid email", "email openid profile", "openid email"},
		{"openid email", "admin", ""},
		{"", "openid", ""},
		{"openid openid email", "email email", "email"},
	} {
		if got := NarrowScope(c.granted, c.requested); got != c.want {
			t.Errorf("NarrowScope(%q, %q) = %q, want %q", c.granted, c.requested, got, c.want)
		}
	}
}
