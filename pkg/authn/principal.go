package authn

import (
	"context"
	"time"
)

// Kind says how a caller authenticated.
type Kind int

// The kinds of caller, each with the credential it authenticated with.
const (
	KindAPIKey      Kind = iota + 1 // an app's API key; KeyType says whether read or write
	KindTenantToken                 // a tenant access token issued to one of the app's users
	KindAdmin                       // the deployment's admin token
	KindService                     // the service token another Berth process calls with
	KindOperator                    // a platform operator (project member) with an operator JWT; UserID is the member id
)

// Principal is the authenticated caller, available to handlers through FromContext.
type Principal struct {
	Kind      Kind
	AppID     string // app of the API key or token
	ProjectID string
	KeyID     string
	KeyType   string // "read" | "write": always the stored type, never the claimed one
	TenantID  string // tenant access tokens
	UserID    string // tenant access tokens
	// SessionID is a tenant access token's session (its sid: the refresh family it was issued in),
	// as identity's own verification reads it; "" elsewhere.
	SessionID string
	// WebOrigins are the browser origins (normalised) the token's app allows; they come with the
	// token's verification, so a cached verification also answers CORS (tenant access tokens).
	WebOrigins []string

	expiresAt time.Time // token expiry, bounds how long a verification may be cached
}

type principalKey struct{}

// NewContext returns ctx carrying p.
func NewContext(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
}

// FromContext returns the caller that the policy admitted.
func FromContext(ctx context.Context) (Principal, bool) {
	p, ok := ctx.Value(principalKey{}).(Principal)
	return p, ok
}
