package authn

import (
	"context"
	"crypto/rsa"
	"errors"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// PublicKeys finds the RSA key that signed a token, e.g. an app's current key by audience or a
// platform key by kid. It is given the parsed but unverified token.
type PublicKeys func(ctx context.Context, token *jwt.Token) (*rsa.PublicKey, error)

// JWTVerifier checks RS256 tokens: signature, a required expiry, issuer and audience. Only RS256 is
// accepted, which shuts out both `alg: none` and the HS256-signed-with-the-public-key confusion.
type JWTVerifier struct {
	Issuer string
	Keys   PublicKeys
	Leeway time.Duration    // clock skew tolerated on exp/nbf/iat
	Now    func() time.Time // nil = time.Now
}

// ErrInvalidToken is returned for every rejected token; the cause is wrapped for logs only.
var ErrInvalidToken = errors.New("invalid token")

// Verify parses raw into claims and checks it for audience.
func (v JWTVerifier) Verify(ctx context.Context, raw, audience string, claims jwt.Claims) error {
	opts := []jwt.ParserOption{
		jwt.WithValidMethods([]string{jwt.SigningMethodRS256.Alg()}),
		jwt.WithExpirationRequired(),
		jwt.WithIssuer(v.Issuer),
		jwt.WithAudience(audience),
		jwt.WithLeeway(v.Leeway),
	}
	if v.Now != nil {
		opts = append(opts, jwt.WithTimeFunc(v.Now))
	}
	_, err := jwt.NewParser(opts...).ParseWithClaims(raw, claims, func(t *jwt.Token) (any, error) {
		return v.Keys(ctx, t)
	})
	if err != nil {
		return errors.Join(ErrInvalidToken, err)
	}
	return nil
}
