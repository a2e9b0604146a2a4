package domain

import (
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"github.com/berthhq/berth/pkg/fault"
	"testing"
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
