package domain

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"slices"
	"strconv"
	"testing"

	"github.com/berthhq/berth/pkg/fault"
)

func TestNewAppValidatesRedirectURIs(t *testing.T) {
	cases := []struct {
		name  string
		uris  []string
		field string
	}{
		{"absolute https and http", []string{"https://app.test/cb", "http://localhost:3000/cb"}, ""},
		{"none", nil, ""},
		{"relative", []string{"/cb"}, "redirectUris[0]"},
		{"custom scheme", []string{"https://ok.test", "myapp://cb"}, "redirectUris[1]"},
		{"fragment", []string{"https://app.test/cb#x"}, "redirectUris[0]"},
		{"empty fragment", []string{"https://app.test/cb#"}, "redirectUris[0]"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			a, err := NewApp("p", "App", c.uris, now)
			if c.field == "" {
				if err != nil || !a.Enabled || len(a.RedirectURIs) != len(c.uris) {
					t.Fatalf("NewApp = %+v, %v", a, err)
				}
				return
			}
			if f, ok := fault.As(err); !ok || f.Kind() != fault.KindInvalid || f.Field() != c.field {
				t.Fatalf("error = %v, want a validation error on %q", err, c.field)
			}
		})
	}
}

func TestNamesAreRequired(t *testing.T) {
	if _, err := NewProject("  ", now); err == nil {
		t.Error("NewProject with a blank name: want error")
	}
	if _, err := NewApp("p", "", nil, now); err == nil {
		t.Error("NewApp with an empty name: want error")
	}
	if _, err := NewUserRole("a", "", now); err == nil {
		t.Error("NewUserRole with an empty name: want error")
	}
	if _, err := NewAPIKey("id", "a", KeyRead, "", "", nil, now); err == nil {
		t.Error("NewAPIKey with an empty name: want error")
	}
}

func TestParseKeyTypeAcceptsOnlyReadAndWrite(t *testing.T) {
	for in, ok := range map[string]bool{"read": true, "write": true, "READ": false, "admin": false, "": false} {
		if _, err := ParseKeyType(in); (err == nil) != ok {
			t.Errorf("ParseKeyType(%q) error = %v, want ok=%t", in, err, ok)
		}
	}
}

func TestGenerateKeyPairYieldsMatchingRSA2048Halves(t *testing.T) {
	kp, err := GenerateKeyPair()
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode([]byte(kp.PublicPEM))
	if block == nil || block.Type != "PUBLIC KEY" {
		t.Fatalf("public key is not an SPKI PEM: %q", kp.PublicPEM)
	}
	pub, err := x509.ParsePKIXPublicKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	priv, err := x509.ParsePKCS8PrivateKey(kp.PrivateDER)
	if err != nil {
		t.Fatal(err)
	}
	rsaPriv, ok := priv.(*rsa.PrivateKey)
	if !ok || rsaPriv.N.BitLen() != 2048 || !rsaPriv.PublicKey.Equal(pub) {
		t.Fatal("private key is not the RSA-2048 partner of the public key")
	}
}

func TestAppWebOriginsAreItsRedirectOriginsPlusOperatorOrigins(t *testing.T) {
	a := App{RedirectURIs: []string{"https://shop.example/cb", "https://shop.example/other", "HTTP://LOCALHOST:3000/cb"}}
	if got := a.WebOrigins(); !slicesEqual(got, []string{"http://localhost:3000", "https://shop.example"}) {
		t.Fatalf("WebOrigins = %q", got)
	}
	for _, raw := range []string{"https://WWW.shop.example:443", "https://www.shop.example"} {
		if _, err := a.AddOrigin(raw); err != nil {
			t.Fatal(err)
		}
	}
	if !slicesEqual(a.ExtraOrigins, []string{"https://www.shop.example"}) {
		t.Fatalf("ExtraOrigins = %q, want one normalised origin", a.ExtraOrigins)
	}
	if changed, _ := a.AddOrigin("https://www.shop.example"); changed {
		t.Error("adding an origin twice reported a change")
	}
	if got := a.WebOrigins(); !slicesEqual(got, []string{"http://localhost:3000", "https://shop.example", "https://www.shop.example"}) {
		t.Fatalf("WebOrigins = %q", got)
	}
}

func TestAppOriginsAreValidatedAndOnlyExtraOnesRemovable(t *testing.T) {
	a := App{RedirectURIs: []string{"https://shop.example/cb"}}
	for _, raw := range []string{"https://shop.example/", "shop.example", "ftp://shop.example", "https://*.shop.example", "https://u@shop.example"} {
		if _, err := a.AddOrigin(raw); !isInvalid(err, "origin") {
			t.Errorf("AddOrigin(%q) = %v, want invalid origin", raw, err)
		}
	}
	if err := a.RemoveOrigin("https://shop.example"); !isInvalid(err, "origin") {
		t.Errorf("removing a redirect URI's origin = %v, want invalid origin", err)
	}
	if f, ok := fault.As(a.RemoveOrigin("https://never.example")); !ok || f.Kind() != fault.KindNotFound {
		t.Errorf("removing an unknown origin did not answer not found")
	}
	if _, err := a.AddOrigin("https://www.shop.example"); err != nil {
		t.Fatal(err)
	}
	if err := a.RemoveOrigin("HTTPS://www.shop.example"); err != nil || len(a.ExtraOrigins) != 0 {
		t.Fatalf("RemoveOrigin = %v, origins left %q", err, a.ExtraOrigins)
	}
	for i := range MaxExtraOrigins {
		if _, err := a.AddOrigin(fmt.Sprintf("https://o%d.example", i)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := a.AddOrigin("https://one-too-many.example"); !isInvalid(err, "origin") {
		t.Errorf("origin beyond the limit = %v, want invalid", err)
	}
}

func isInvalid(err error, field string) bool {
	f, ok := fault.As(err)
	return ok && f.Kind() == fault.KindInvalid && f.Field() == field
}

func slicesEqual(a, b []string) bool { return slices.Equal(a, b) }

func TestRedirectURIsAreReplacedCheckedAndDeduplicated(t *testing.T) {
	for _, tc := range []struct {
		name    string
		uris    []string
		want    []string
		changed bool
		field   string
	}{
		{"the same list", []string{"https://shop.example/cb"}, []string{"https://shop.example/cb"}, false, ""},
		{"another list, a duplicate dropped", []string{"https://shop.example/new", "http://localhost:3000/cb", "https://shop.example/new"},
			[]string{"https://shop.example/new", "http://localhost:3000/cb"}, true, ""},
		{"none", nil, []string{}, true, ""},
		{"a fragment", []string{"https://shop.example/cb", "https://shop.example/cb#x"}, nil, false, "redirectUris[1]"},
		{"a relative path", []string{"/cb"}, nil, false, "redirectUris[0]"},
		{"another scheme", []string{"ftp://shop.example/cb"}, nil, false, "redirectUris[0]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := App{RedirectURIs: []string{"https://shop.example/cb"}}
			changed, err := a.SetRedirectURIs(tc.uris)
			if tc.field != "" {
				if fe, ok := fault.As(err); !ok || fe.Field() != tc.field || !slicesEqual(a.RedirectURIs, []string{"https://shop.example/cb"}) {
					t.Fatalf("err = %v, URIs %q; want %s refused and the URIs kept", err, a.RedirectURIs, tc.field)
				}
				return
			}
			if err != nil || changed != tc.changed || !slicesEqual(a.RedirectURIs, tc.want) {
				t.Fatalf("= %v, %v, URIs %q; want %v, %q", changed, err, a.RedirectURIs, tc.changed, tc.want)
			}
		})
	}
	many := make([]string, MaxRedirectURIs+1)
	for i := range many {
		many[i] = "https://shop.example/" + strconv.Itoa(i)
	}
	a := App{}
	if _, err := a.SetRedirectURIs(many); err == nil {
		t.Errorf("%d redirect URIs were accepted", len(many))
	}
}
