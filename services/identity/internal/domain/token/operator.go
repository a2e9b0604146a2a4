package token

import (
	"context"
	"crypto/rsa"
	"errors"
	"fmt"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/berthhq/berth/pkg/authn"
)

// OperatorAudience is the aud of every operator token. App tokens name an app id there, so neither
// kind of token can stand in for the other even if issuer and key were shared, and every service's
// policy tells the two apart by it on routes that accept both.
const OperatorAudience = authn.OperatorAudience

// OperatorIssuer is the iss of operator tokens for a deployment whose app tokens use issuer.
func OperatorIssuer(issuer string) string { return issuer + "/operators" }

// Operator is the operator token's claim set: sub is the project member's id; sid is the console
// session the token was issued in, absent in the tokens the admin tooling issues.
type Operator struct {
	Issuer    string `json:"iss"`
	Subject   string `json:"sub"`
	Audience  string `json:"aud"`
	ID        string `json:"jti"`
	IssuedAt  int64  `json:"iat"`
	Expiry    int64  `json:"exp"`
	SessionID string `json:"sid,omitempty"`
}

// VerifiedOperator is what a valid operator token states.
type VerifiedOperator struct {
	MemberID  string
	SessionID string // "" for a token issued outside a console session
}

// operatorClaims is the subset of Operator the verifier reads, in golang-jwt's terms.
type operatorClaims struct {
	jwt.RegisteredClaims
	Session string `json:"sid"`
}

// VerifyOperator checks raw as an operator token: RS256 only, signed by key, issued by issuer,
// for OperatorAudience, not expired (exp required, Leeway tolerated). It returns the member id and
// the session the token names; whether that session is live is the caller's check.
func VerifyOperator(raw, issuer string, key *rsa.PublicKey, now func() time.Time) (VerifiedOperator, error) {
	var c operatorClaims
	if err := verifier(issuer, key, now).Verify(context.Background(), raw, OperatorAudience, &c); err != nil {
		return VerifiedOperator{}, errors.Join(ErrInvalid, err)
	}
	if c.Subject == "" {
		return VerifiedOperator{}, fmt.Errorf("%w: no subject", ErrInvalid)
	}
	return VerifiedOperator{MemberID: c.Subject, SessionID: c.Session}, nil
}
