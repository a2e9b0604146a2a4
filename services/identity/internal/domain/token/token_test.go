package token

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"errors"
	"math/big"
	mrand "math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

var (
	testKey, otherKey = mustKey(), mustKey()
	now               = time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
)

func mustKey() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
}

func clock() time.Time { return now }

func accessClaims() Access {
	return Access{
		Issuer: "iss-1", Subject: "user-1", Audience: "app-1", TenantID: "tenant-1", Language: "de",
		ID: "jti-1", Nonce: "n", AuthTime: now.Unix(), Scope: []string{"openid"}, PSC: []string{},
		IssuedAt: now.Unix(), Expiry: now.Add(15 * time.Minute).Unix(), Use: UseAccess,
	}
}

// randomText mixes the characters that matter for base64url: '>', '?', '~', DEL, multi-byte runes,
// astral runes, quotes, backslashes and controls.
func randomText(r *mrand.Rand) string {
	alphabet := []rune{'a', 'Z', '0', '>', '?', '~', 0x7f, '<', '&', '"', '\\', '\n', 0, 'é', 'ß', '€', '中', 'ÿ', 0xfffd, 0x2028, '😀', 0x10ffff, '/', '+', '='}
	n := r.IntN(40)
	var b strings.Builder
	for range n {
		if r.IntN(4) == 0 {
			b.WriteRune(rune(r.IntN(0x10ffff)))
		} else {
			b.WriteRune(alphabet[r.IntN(len(alphabet))])
		}
	}
	return b.String()
}

func TestSignedSegmentsAreAtobSafeForAnyClaims(t *testing.T) {
	r := mrand.New(mrand.NewPCG(1, 2))
	kid := Thumbprint(&testKey.PublicKey)
	for i := range 800 {
		c := ID{
			Issuer: randomText(r), Subject: randomText(r), Audience: randomText(r), Nonce: randomText(r),
			Name: randomText(r), GivenName: randomText(r), Email: randomText(r), Picture: randomText(r),
			Scope: []string{randomText(r), randomText(r)}, Expiry: r.Int64(), Use: UseID,
		}
		raw, err := Sign(testKey, kid, c)
		if err != nil {
			t.Fatal(err)
		}
		parts := strings.Split(raw, ".")
		for _, seg := range parts[:2] {
			if strings.ContainsAny(seg, "-_") {
				t.Fatalf("case %d: segment %q contains '-' or '_'", i, seg)
			}
			// atob decodes standard base64; without '-'/'_' the segment is standard base64.
			plain, err := base64.RawStdEncoding.DecodeString(seg)
			if err != nil {
				t.Fatalf("case %d: %v", i, err)
			}
			for _, b := range plain {
				if b >= 0x7f || b == '>' || b == '?' || b == '~' {
					t.Fatalf("case %d: byte %#x left unescaped in %s", i, b, plain)
				}
			}
		}
		// The escaped JSON decodes to exactly the claims that went in (after JSON's own UTF-8
		// sanitising, which json.Marshal applies to invalid strings anyway).
		payload, _ := base64.RawStdEncoding.DecodeString(parts[1])
		var back ID
		if err := json.Unmarshal(payload, &back); err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if back.Name != sanitize(c.Name) || back.Nonce != sanitize(c.Nonce) || back.Scope[1] != sanitize(c.Scope[1]) || back.Expiry != c.Expiry {
			t.Fatalf("case %d: claims changed in transit: %q -> %q", i, c.Name, back.Name)
		}
	}
}

// sanitize is what json.Marshal makes of a string: invalid UTF-8 becomes U+FFFD.
func sanitize(s string) string { return strings.ToValidUTF8(s, "\uFFFD") }

func TestHeaderIsExactlyRS256JWTWithKid(t *testing.T) {
	kid := Thumbprint(&testKey.PublicKey)
	raw, err := Sign(testKey, kid, accessClaims())
	if err != nil {
		t.Fatal(err)
	}
	h, _ := base64.RawURLEncoding.DecodeString(strings.Split(raw, ".")[0])
	if want := `{"alg":"RS256","typ":"JWT","kid":"` + kid + `"}`; string(h) != want {
		t.Errorf("header = %s, want %s", h, want)
	}
}

func TestASCIIJSONEscapesExactlyTheUnsafeCharacters(t *testing.T) {
	cases := map[string]string{
		"plain":   `"plain"`,
		"a>b?c~d": `"a\u003eb\u003fc\u007ed"`,
		"\x7f":    `"\u007f"`,
		"é":       `"\u00e9"`,
		"😀":       `"\ud83d\ude00"`,
		"<&":      `"\u003c\u0026"`,
	}
	for in, want := range cases {
		got, err := ASCIIJSON(in)
		if err != nil || string(got) != want {
			t.Errorf("ASCIIJSON(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
}

func TestVerifyAccessRejectsAttacks(t *testing.T) {
	kid := Thumbprint(&testKey.PublicKey)
	sign := func(c any) string {
		raw, err := Sign(testKey, kid, c)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	with := func(f func(*Access)) string { c := accessClaims(); f(&c); return sign(c) }
	jwtSigned := func(m jwt.SigningMethod, key any) string {
		c := accessClaims()
		raw, err := jwt.NewWithClaims(m, jwt.MapClaims{"iss": c.Issuer, "sub": c.Subject, "aud": c.Audience, "exp": c.Expiry, "token_use": UseAccess}).SignedString(key)
		if err != nil {
			t.Fatal(err)
		}
		return raw
	}
	good := sign(accessClaims())
	parts := strings.Split(good, ".")
	tamperedPayload, _ := ASCIIJSON(func() Access { c := accessClaims(); c.Subject = "admin"; return c }())
	idClaims := ID{Issuer: "iss-1", Subject: "user-1", Audience: "app-1", Expiry: now.Add(time.Hour).Unix(), Use: UseID}

	cases := []struct {
		name string
		raw  string
		ok   bool
	}{
		{"valid", good, true},
		{"expired within leeway", with(func(c *Access) { c.Expiry = now.Add(-Leeway + time.Second).Unix() }), true},
		{"expired just beyond leeway", with(func(c *Access) { c.Expiry = now.Add(-Leeway - time.Second).Unix() }), false},
		{"no expiry", with(func(c *Access) { c.Expiry = 0 }), false},
		{"alg none", jwtSigned(jwt.SigningMethodNone, jwt.UnsafeAllowNoneSignatureType), false},
		{"HS256 keyed with the public key", jwtSigned(jwt.SigningMethodHS256, testKey.PublicKey.N.Bytes()), false},
		{"wrong audience", with(func(c *Access) { c.Audience = "app-2" }), false},
		{"wrong issuer", with(func(c *Access) { c.Issuer = "other" }), false},
		{"another key", func() string { raw, _ := Sign(otherKey, kid, accessClaims()); return raw }(), false},
		{"ID token as access token", sign(idClaims), false},
		{"unmarked token", with(func(c *Access) { c.Use = "" }), false},
		{"tampered payload", parts[0] + "." + b64(tamperedPayload) + "." + parts[2], false},
		{"no subject", with(func(c *Access) { c.Subject = "" }), false},
		{"garbage", "a.b.c", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v, err := VerifyAccess(c.raw, "iss-1", "app-1", &testKey.PublicKey, clock)
			if c.ok {
				if err != nil {
					t.Fatal(err)
				}
				if v.UserID != "user-1" || v.TenantID != "tenant-1" || v.TokenID != "jti-1" || v.AppID != "app-1" {
					t.Errorf("Verified = %+v", v)
				}
				return
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error = %v, want ErrInvalid", err)
			}
		})
	}
}

func TestAudienceReadsTheOneAppWithoutVerifying(t *testing.T) {
	raw, _ := Sign(otherKey, "", accessClaims())
	if aud, err := Audience(raw); err != nil || aud != "app-1" {
		t.Errorf("Audience = %q, %v", aud, err)
	}
	twoAud, _ := Sign(testKey, "", map[string]any{"aud": []string{"a", "b"}})
	for _, raw := range []string{"x", twoAud} {
		if _, err := Audience(raw); !errors.Is(err, ErrInvalid) {
			t.Errorf("Audience(%q) error = %v, want ErrInvalid", raw, err)
		}
	}
}

// TestJWKVerifiesIssuedTokens checks the JWK the way a standard JWKS client does: rebuild the RSA
// key from n and e, and verify with golang-jwt's own parser.
func TestJWKVerifiesIssuedTokens(t *testing.T) {
	jwk := PublicJWK(&testKey.PublicKey)
	if jwk.Kty != "RSA" || jwk.Use != "sig" || jwk.Alg != "RS256" || jwk.Kid != Thumbprint(&testKey.PublicKey) || jwk.E != "AQAB" {
		t.Fatalf("JWK = %+v", jwk)
	}
	n, err := base64.RawURLEncoding.DecodeString(jwk.N)
	if err != nil {
		t.Fatal(err)
	}
	e, _ := base64.RawURLEncoding.DecodeString(jwk.E)
	pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
	raw, _ := Sign(testKey, jwk.Kid, accessClaims())
	tok, err := jwt.NewParser(jwt.WithValidMethods([]string{"RS256"}), jwt.WithTimeFunc(clock)).Parse(raw, func(tk *jwt.Token) (any, error) {
		if tk.Header["kid"] != jwk.Kid {
			return nil, errors.New("unknown kid")
		}
		return pub, nil
	})
	if err != nil || !tok.Valid {
		t.Fatalf("standard verification failed: %v", err)
	}
	if Thumbprint(&otherKey.PublicKey) == jwk.Kid {
		t.Error("two keys share a thumbprint")
	}
}

func TestThumbprintMatchesRFC7638Example(t *testing.T) {
	// RFC 7638 section 3.1.
	n, _ := base64.RawURLEncoding.DecodeString("0vx7agoebGcQSuuPiLJXZptN9nndrQmbXEps2aiAFbWhM78LhWx4cbbfAAtVT86zwu1RK7aPFFxuhDR1L6tSoc_BJECPebWKRXjBZCiFV4n3oknjhMstn64tZ_2W-5JsGY4Hc5n9yBXArwl93lqt7_RN5w6Cf0h4QyQ5v-65YGjQR0_FDW2QvzqY368QQMicAtaSqzs8KJZgnYb9c7d0zgdAZHzu6qMQvRL5hajrn1n91CbOpbISD08qNLyrdkt-bFTWhAI4vMQFh6WeZu0fM4lFd2NcRwr3XPksINHaQ-G_xBniIqbw0Ls1jF44-csFCur-kEgU8awapJzKnqDKgw")
	pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: 65537}
	if got := Thumbprint(pub); got != "NzbLsXh8uDCcd-6MNwXF4W_7noWXFZAfHkxZsRGC9Xs" {
		t.Errorf("Thumbprint = %s", got)
	}
}
