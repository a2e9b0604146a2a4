package domain

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"github.com/berthhq/berth/pkg/fault"
	"slices"
	"strings"
	"time"
)

// AuthCodeTTL is how long an authorization code may wait for its exchange. The browser follows the
// redirect at once; a minute covers slow networks, and a shorter life leaves less time to replay a
// code that leaked through a log or a referrer.
const AuthCodeTTL = 60 * time.Second

// AuthCode is an issued authorization code. Only the SHA-256 of the code is stored: the code
// itself travels once, in the redirect to the app.
type AuthCode struct {
	Hash        []byte
	AppID       string
	UserID      string
	RedirectURI string // as the authorization request sent it
	Nonce       string
	Scope       string // space-separated, as requested
	AuthTime    time.Time
	CreatedAt   time.Time
	ExpiresAt   time.Time
	// ClientIP and UserAgent describe the browser of the sign-in; the code hands them on to the
	// session (RefreshFamily) its exchange starts.
	ClientIP  string
	UserAgent string
	// AMR are the authentication methods of the sign-in (AMRPassword, ...), handed on to the
	// session and to every token issued in it.
	AMR []string
}

// Expired reports whether the code can no longer be exchanged at now. The 60th second is still
// valid: the code lives exactly AuthCodeTTL.
func (c AuthCode) Expired(now time.Time) bool { return now.After(c.ExpiresAt) }

// RefreshFamily is one sign-in's chain of refresh tokens: the user's session on the app. Every
// refresh replaces the token with a new one of the same family; showing a replaced token again
// means two parties hold the chain (one of them a thief), so the whole family is revoked.
type RefreshFamily struct {
	ID          string
	AppID       string
	UserID      string
	RedirectURI string // the redirect URI the first tokens were issued for
	Scope       string
	AuthTime    time.Time // the sign-in that started the family
	CreatedAt   time.Time
	Revoked     bool
	// LastUsedAt is the family's latest rotation (CreatedAt until the first) and ExpiresAt the
	// expiry of its newest token: past it nothing can continue the family. Both move with every
	// rotation, so a session list needs no look at the tokens.
	LastUsedAt time.Time
	ExpiresAt  time.Time
	// ClientIP and UserAgent describe the browser of the sign-in that started the family.
	ClientIP  string
	UserAgent string
	// AMR are the authentication methods of the sign-in that started the family.
	AMR []string
}

// Live reports whether the family can still refresh at now: it is a session the user has.
func (f RefreshFamily) Live(now time.Time) bool { return !f.Revoked && now.Before(f.ExpiresAt) }

// RefreshToken is one token of a family, stored by hash.
type RefreshToken struct {
	Hash      []byte
	FamilyID  string
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    *time.Time // set when the token was exchanged (rotated)
}

// Expired reports whether the token can no longer be used at now.
func (t RefreshToken) Expired(now time.Time) bool { return !now.Before(t.ExpiresAt) }

// ErrTokenSpent is returned by the refresh-token store when a token was already rotated or its
// family revoked.
var ErrTokenSpent = fault.Invalid("refresh_token", "refresh token already used or revoked")

// secretBytes is the entropy of codes and refresh tokens: 256 bits cannot be guessed, which is what
// lets them be stored as a plain (unsalted) SHA-256 and looked up by it.
const secretBytes = 32

// NewSecret returns a random secret (base64url without padding, 43 characters) and its hash.
func NewSecret() (secret string, hash []byte, err error) {
	b := make([]byte, secretBytes)
	if _, err := rand.Read(b); err != nil {
		return "", nil, fmt.Errorf("random secret: %w", err)
	}
	secret = base64.RawURLEncoding.EncodeToString(b)
	return secret, HashSecret(secret), nil
}

// HashSecret is the stored form of a code or refresh token.
func HashSecret(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// WellFormedSecret reports whether s looks like a secret NewSecret issues; anything else cannot
// match a stored hash and is refused without a lookup.
func WellFormedSecret(s string) bool {
	b, err := base64.RawURLEncoding.DecodeString(s)
	return err == nil && len(b) == secretBytes
}

// Scopes splits a space-separated scope string into its distinct scopes, in order.
func Scopes(scope string) []string {
	out := []string{}
	for _, s := range strings.Fields(scope) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

// NarrowScope is the scope to issue when a token request asks for requested out of granted (the
// scope of the authorization step): granted when the request names none, otherwise the scopes of
// requested that granted holds, in granted's order. A request can narrow the grant, never widen it.
func NarrowScope(granted, requested string) string {
	if strings.TrimSpace(requested) == "" {
		return strings.Join(Scopes(granted), " ")
	}
	asked := Scopes(requested)
	var out []string
	for _, s := range Scopes(granted) {
		if slices.Contains(asked, s) {
			out = append(out, s)
		}
	}
	return strings.Join(out, " ")
}

// Limits of the authorization-request values the service stores and echoes: generous for any
// real client (the SDKs send 32-64 characters), small enough that a code row stays small.
const (
	maxState = 512
	maxNonce = 512
	maxScope = 1024
)

// CheckAuthorizationParams validates the state, nonce and scope an authorization request carries
// through sign-in into the redirect and the tokens.
func CheckAuthorizationParams(state, nonce, scope string) error {
	for _, f := range []struct {
		name, value string
		limit       int
	}{{"state", state, maxState}, {"nonce", nonce, maxNonce}, {"scope", scope, maxScope}} {
		if err := checkText(f.name, f.value, f.limit); err != nil {
			return err
		}
	}
	return nil
}
