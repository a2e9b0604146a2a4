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

// Operator is the operator token's claim set: sub is the project member's id.
type Operator struct {
	Issuer   string `json:"iss"`
	Subject  string `json:"sub"`
	Audience string `json:"aud"`
	ID       string `json:"jti"`
	IssuedAt int64  `json:"iat"`
	Expiry   int64  `json:"exp"`
}

// VerifyOperator checks raw as an operator token: RS256 only, signed by key, issued by issuer,
// for OperatorAudience, not expired (exp required, Leeway tolerated). It returns the member id.
func VerifyOperator(raw, issuer string, key *rsa.PublicKey, now func() time.Time) (string, error) {
	var c jwt.RegisteredClaims
	if err := verifier(issuer, key, now).Verify(context.Background(), raw, OperatorAudience, &c); err != nil {
		return "", errors.Join(ErrInvalid, err)
	}
	if c.Subject == "" {
		return "", fmt.Errorf("%w: no subject", ErrInvalid)
	}
	return c.Subject, nil
}
