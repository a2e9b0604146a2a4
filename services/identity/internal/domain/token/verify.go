package token

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"github.com/berthhq/berth/pkg/fault"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/berthhq/berth/pkg/authn"
)

// ErrInvalid is matched (errors.Is) by every verification failure.
var ErrInvalid = fault.Unauthenticated("invalid access token")

// Leeway is the clock skew tolerated on exp: the signing and verifying services run on different
// hosts, and a few seconds of drift must not log users out early.
const Leeway = 10 * time.Second

// Audience returns the single aud claim of raw WITHOUT verifying anything. It only tells the
// verifier which app's key to check the signature with; every claim is checked afterwards.
func Audience(raw string) (string, error) {
	var c jwt.RegisteredClaims
	if _, _, err := jwt.NewParser().ParseUnverified(raw, &c); err != nil {
		return "", errors.Join(ErrInvalid, err)
	}
	if len(c.Audience) != 1 || c.Audience[0] == "" {
		return "", fmt.Errorf("%w: audience must name one app", ErrInvalid)
	}
	return c.Audience[0], nil
}

// verifier is the shared RS256 check (pkg/authn) with one known key: signature, required expiry
// within Leeway, issuer and audience.
func verifier(issuer string, key *rsa.PublicKey, now func() time.Time) authn.JWTVerifier {
	return authn.JWTVerifier{
		Issuer: issuer,
		Keys:   func(context.Context, *jwt.Token) (*rsa.PublicKey, error) { return key, nil },
		Leeway: Leeway,
		Now:    now,
	}
}

// Verified is what a valid access token states.
type Verified struct {
	AppID, TenantID, UserID, TokenID string
	// SessionID is the token's sid: its refresh family ("" in tokens issued before tokens named it).
	SessionID string
	ExpiresAt time.Time
}

// claims is the subset of Access the verifier reads, in golang-jwt's terms.
type claims struct {
	jwt.RegisteredClaims
	TenantID string `json:"tenantId"`
	Use      string `json:"token_use"`
	Session  string `json:"sid"`
}

// VerifyAccess checks raw as an access token of appID: RS256 only (no "none", no HMAC keyed with
// the public key), signed by key, issued by issuer, for appID, not expired (exp required, Leeway
// tolerated) and marked as an access token.
func VerifyAccess(raw, issuer, appID string, key *rsa.PublicKey, now func() time.Time) (Verified, error) {
	var c claims
	if err := verifier(issuer, key, now).Verify(context.Background(), raw, appID, &c); err != nil {
		return Verified{}, errors.Join(ErrInvalid, err)
	}
	if c.Use != UseAccess {
		return Verified{}, fmt.Errorf("%w: not an access token", ErrInvalid)
	}
	if c.Subject == "" {
		return Verified{}, fmt.Errorf("%w: no subject", ErrInvalid)
	}
	return Verified{AppID: appID, TenantID: c.TenantID, UserID: c.Subject, TokenID: c.ID, SessionID: c.Session, ExpiresAt: c.ExpiresAt.Time}, nil
}
