package token

import (
	"crypto/rand"
	"crypto/rsa"
	"testing"

	"github.com/golang-jwt/jwt/v5"
)

// BenchmarkSignAccessToken prices the browser-SDK-safe encoding: the baseline signs the same
// claims with golang-jwt's standard JSON encoding; the ascii-safe variant is what the token route
// issues. RSA signing dominates both, so the ratio should stay close to 1.
func BenchmarkSignAccessToken(b *testing.B) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		b.Fatal(err)
	}
	claims := jwt.MapClaims{
		"iss": "f0af4569-4d5d-4c20-af95-5a80c74e30a6", "sub": "0b8e7a39-1f1c-4c39-9a7e-5d4b1d7f2c11",
		"aud": "a7c1e0d2-3b4f-4e5a-8c6d-7e8f9a0b1c2d", "tenantId": "3c2b1a09-8f7e-4d6c-5b4a-39281706f5e4",
		"lng": "de", "jti": "9f8e7d6c-5b4a-3928-1706-f5e4d3c2b1a0", "nonce": "nonce-ÄÖÜ-<>?~",
		"auth_time": 1795000000, "scope": []string{"openid", "profile", "email"}, "psc": []string{}, "exp": 1795000900,
	}
	b.Run("baseline", func(b *testing.B) {
		for b.Loop() {
			if _, err := jwt.NewWithClaims(jwt.SigningMethodRS256, claims).SignedString(key); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("ascii-safe", func(b *testing.B) {
		for b.Loop() {
			if _, err := Sign(key, "kid", claims); err != nil {
				b.Fatal(err)
			}
		}
	})
}
