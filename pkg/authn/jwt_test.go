package authn

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

func TestJWTVerifierRejectsForgedAndMisdirectedTokens(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	other, _ := rsa.GenerateKey(rand.Reader, 2048)
	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	v := JWTVerifier{
		Issuer: "berth-test",
		Keys:   func(context.Context, *jwt.Token) (*rsa.PublicKey, error) { return &key.PublicKey, nil },
		Leeway: 5 * time.Second,
		Now:    func() time.Time { return now },
	}
	good := jwt.RegisteredClaims{Issuer: "berth-test", Audience: jwt.ClaimStrings{"app-1"}, ExpiresAt: jwt.NewNumericDate(now.Add(time.Minute))}
	sign := func(m jwt.SigningMethod, k any, c jwt.Claims) string {
		s, err := jwt.NewWithClaims(m, c).SignedString(k)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	with := func(f func(*jwt.RegisteredClaims)) jwt.RegisteredClaims { c := good; f(&c); return c }
	pubDER := key.PublicKey.N.Bytes()

	cases := []struct {
		name  string
		token string
		ok    bool
	}{
		{"valid RS256 token", sign(jwt.SigningMethodRS256, key, good), true},
		{"within leeway after expiry", sign(jwt.SigningMethodRS256, key, with(func(c *jwt.RegisteredClaims) { c.ExpiresAt = jwt.NewNumericDate(now.Add(-3 * time.Second)) })), true},
		{"alg none", sign(jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType, good), false},
		{"HS256 keyed with public key material", sign(jwt.SigningMethodHS256, pubDER, good), false},
		{"signed by another key", sign(jwt.SigningMethodRS256, other, good), false},
		{"wrong audience", sign(jwt.SigningMethodRS256, key, with(func(c *jwt.RegisteredClaims) { c.Audience = jwt.ClaimStrings{"app-2"} })), false},
		{"wrong issuer", sign(jwt.SigningMethodRS256, key, with(func(c *jwt.RegisteredClaims) { c.Issuer = "elsewhere" })), false},
		{"expired beyond leeway", sign(jwt.SigningMethodRS256, key, with(func(c *jwt.RegisteredClaims) { c.ExpiresAt = jwt.NewNumericDate(now.Add(-time.Minute)) })), false},
		{"no expiry", sign(jwt.SigningMethodRS256, key, with(func(c *jwt.RegisteredClaims) { c.ExpiresAt = nil })), false},
		{"garbage", "not.a.token", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := v.Verify(context.Background(), tc.token, "app-1", &jwt.RegisteredClaims{})
			if tc.ok && err != nil {
				t.Fatalf("rejected a valid token: %v", err)
			}
			if !tc.ok && !errors.Is(err, ErrInvalidToken) {
				t.Fatalf("accepted or misreported: %v", err)
			}
		})
	}
}
