package token

import (
	"bytes"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/big"
	"unicode/utf8"

	"github.com/golang-jwt/jwt/v5"
)

// Use marks what a token is for; it is a claim of every token this package signs, so that an ID
// token (handed to the client for display) can never pass as an access token.
const (
	UseAccess = "access"
	UseID     = "id"
)

// Access is the access token's claim set. Field order is the JSON order.
type Access struct {
	Issuer   string   `json:"iss"`
	Subject  string   `json:"sub"` // user id
	Audience string   `json:"aud"` // app id
	TenantID string   `json:"tenantId"`
	Language string   `json:"lng"`
	ID       string   `json:"jti"`
	Nonce    string   `json:"nonce"`
	AuthTime int64    `json:"auth_time"`
	Scope    []string `json:"scope"`
	// PSC is reserved for payment-state claims of the tenant (the published server SDK reads the
	// array); Berth issues it empty until billing state is part of the token.
	PSC      []string `json:"psc"`
	IssuedAt int64    `json:"iat"`
	Expiry   int64    `json:"exp"`
	Use      string   `json:"token_use"`
	// Session is the refresh-token family the token was issued in (OpenID's sid): the session
	// routes mark it current, so a page can tell "this device" from the others.
	Session string `json:"sid"`
	// AMR are the sign-in's authentication methods (RFC 8176: pwd, otp, mfa).
	AMR []string `json:"amr"`
}

// ID is the ID token's claim set: the access claims minus psc, plus the OpenID profile claims.
type ID struct {
	Issuer   string   `json:"iss"`
	Subject  string   `json:"sub"`
	Audience string   `json:"aud"`
	TenantID string   `json:"tenantId"`
	Language string   `json:"lng"`
	ID       string   `json:"jti"`
	Nonce    string   `json:"nonce"`
	AuthTime int64    `json:"auth_time"`
	Scope    []string `json:"scope"`
	IssuedAt int64    `json:"iat"`
	Expiry   int64    `json:"exp"`
	Use      string   `json:"token_use"`
	Session  string   `json:"sid"`
	AMR      []string `json:"amr"`
	// ACR says whether the sign-in proved one factor or more (domain.ACR).
	ACR                 string `json:"acr"`
	Name                string `json:"name"`
	GivenName           string `json:"given_name"`
	FamilyName          string `json:"family_name"`
	MiddleName          string `json:"middle_name"`
	Nickname            string `json:"nickname"`
	PreferredUsername   string `json:"preferred_username"`
	Profile             string `json:"profile"`
	Picture             string `json:"picture"`
	Website             string `json:"website"`
	Email               string `json:"email"`
	EmailVerified       bool   `json:"email_verified"`
	Gender              string `json:"gender"`
	Birthdate           string `json:"birthdate"`
	Zoneinfo            string `json:"zoneinfo"`
	Locale              string `json:"locale"`
	PhoneNumber         string `json:"phone_number"`
	PhoneNumberVerified bool   `json:"phone_number_verified"`
	UpdatedAt           int64  `json:"updated_at"`
}

// header is the JOSE header; kid names the signing key (its RFC 7638 thumbprint) so that standard
// JWKS verifiers can pick it. The kid is base64url and may contain '-' and '_' itself: those are
// plain ASCII inside the JSON, which keeps the header segment free of them.
type header struct {
	Alg string `json:"alg"`
	Typ string `json:"typ"`
	Kid string `json:"kid,omitempty"`
}

// Sign returns the compact JWS of claims, signed RS256 with key; kid goes into the header.
func Sign(key *rsa.PrivateKey, kid string, claims any) (string, error) {
	h, err := ASCIIJSON(header{Alg: "RS256", Typ: "JWT", Kid: kid})
	if err != nil {
		return "", err
	}
	p, err := ASCIIJSON(claims)
	if err != nil {
		return "", err
	}
	input := b64(h) + "." + b64(p)
	sig, err := jwt.SigningMethodRS256.Sign(input, key)
	if err != nil {
		return "", fmt.Errorf("token: sign: %w", err)
	}
	return input + "." + b64(sig), nil
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// ASCIIJSON marshals v as JSON made only of printable ASCII: '>', '?', '~', DEL and every non-ASCII
// rune become \uXXXX escapes (UTF-16 surrogate pairs beyond the BMP). See the package comment.
func ASCIIJSON(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("token: encode claims: %w", err)
	}
	var out bytes.Buffer
	out.Grow(len(raw) + len(raw)/8)
	for i := 0; i < len(raw); {
		c := raw[i]
		// JSON syntax outside strings is ASCII without these characters, and json.Marshal's own
		// escape sequences use only letters and digits, so every such byte sits inside a string.
		switch {
		case c == '>' || c == '?' || c == '~' || c == 0x7f:
			fmt.Fprintf(&out, `\u%04x`, c)
			i++
		case c < utf8.RuneSelf:
			out.WriteByte(c)
			i++
		default:
			r, size := utf8.DecodeRune(raw[i:]) // json.Marshal has already replaced invalid UTF-8
			if r > 0xffff {
				r -= 0x10000
				fmt.Fprintf(&out, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			} else {
				fmt.Fprintf(&out, `\u%04x`, r)
			}
			i += size
		}
	}
	return out.Bytes(), nil
}

// JWK is an RSA public key as a JSON Web Key.
type JWK struct {
	Kty, Use, Alg, Kid, N, E string
}

// PublicJWK describes pub as a signing JWK whose kid is its thumbprint.
func PublicJWK(pub *rsa.PublicKey) JWK {
	n, e := rsaParams(pub)
	return JWK{Kty: "RSA", Use: "sig", Alg: "RS256", Kid: Thumbprint(pub), N: n, E: e}
}

func rsaParams(pub *rsa.PublicKey) (n, e string) {
	return b64(pub.N.Bytes()), b64(big.NewInt(int64(pub.E)).Bytes())
}

// Thumbprint is the RFC 7638 JWK thumbprint (SHA-256, base64url): a stable id of the key that
// anyone holding the public key can recompute.
func Thumbprint(pub *rsa.PublicKey) string {
	n, e := rsaParams(pub)
	// RFC 7638 fixes the members (required ones only), their lexicographic order and no whitespace.
	sum := sha256.Sum256([]byte(`{"e":"` + e + `","kty":"RSA","n":"` + n + `"}`))
	return b64(sum[:])
}
