package authn

import (
	"context"
	"time"

	eventsv1 "github.com/berthhq/berth/proto/events/v1"

	"github.com/berthhq/berth/pkg/events"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// TokenVerifier checks a tenant access token (the raw JWT, without "Bearer "). It returns an
// Unauthenticated error for an invalid, expired or unknown token and a PermissionDenied error when
// the token is valid but its user is frozen or deleted or its app is disabled.
type TokenVerifier interface {
	VerifyAccessToken(ctx context.Context, raw string) (Principal, error)
}

type remoteTokens struct {
	client identityv1.IdentityInternalServiceClient
}

// NewRemoteTokenVerifier verifies tokens by asking identity, which holds the apps' keys and knows
// whether the user may still act. The client's connection must send the service token.
func NewRemoteTokenVerifier(c identityv1.IdentityInternalServiceClient) TokenVerifier {
	return remoteTokens{client: c}
}

func (r remoteTokens) VerifyAccessToken(ctx context.Context, raw string) (Principal, error) {
	res, err := r.client.VerifyAccessToken(ctx, &identityv1.VerifyAccessTokenRequest{AccessToken: raw})
	if err != nil {
		return Principal{}, err
	}
	return Principal{
		Kind:     KindTenantToken,
		AppID:    res.GetAppId(),
		TenantID: res.GetTenantId(),
		UserID:   res.GetUserId(),
		// An app event (an operator changed its origins) evicts this entry like any other.
		WebOrigins: res.GetWebOrigins(),
		expiresAt:  time.Unix(res.GetExpiresAt(), 0),
	}, nil
}

// TokenCache remembers verified tokens briefly, like KeyCache does for keys: never past the
// token's own expiry, and evicted at once when identity reports that the user was frozen or
// deleted or the app changed (disabled, key rotated), so those take effect within an event's
// delivery time rather than a TTL.
type TokenCache struct {
	inner TokenVerifier
	cache *ttlCache[Principal]
}

// NewTokenCache wraps inner with a cache whose entries live ttl at most.
func NewTokenCache(inner TokenVerifier, ttl time.Duration) *TokenCache {
	return &TokenCache{inner: inner, cache: newTTLCache[Principal](ttl)}
}

// VerifyAccessToken implements TokenVerifier.
func (c *TokenCache) VerifyAccessToken(ctx context.Context, raw string) (Principal, error) {
	return c.cache.get(raw,
		func() (Principal, error) { return c.inner.VerifyAccessToken(ctx, raw) },
		func(p Principal) time.Time { return p.expiresAt })
}

// Forget drops cached tokens of one user, or of the whole app when userID is "".
func (c *TokenCache) Forget(appID, userID string) {
	c.cache.forget(func(p Principal) bool { return p.AppID == appID && (userID == "" || p.UserID == userID) })
}

// User and app event types that invalidate cached tokens.
const (
	EventUserFrozen  = identityv1.EventUserFrozen
	EventUserDeleted = identityv1.EventUserDeleted
)

// Watch subscribes to the identity events that end a token's validity early.
func (c *TokenCache) Watch(ctx context.Context, bus events.Bus) (stop func(), err error) {
	return bus.Subscribe(ctx, []eventsv1.Type{EventUserFrozen, EventUserDeleted, EventAppChanged}, func(ev events.Event) {
		switch ev.Type {
		case EventUserFrozen:
			var p identityv1.UserChanged
			if ev.Decode(&p) == nil && p.GetUserId() != "" {
				c.Forget(p.GetAppId(), p.GetUserId())
				return
			}
		case EventUserDeleted:
			var p identityv1.UserDeleted
			if ev.Decode(&p) == nil && p.GetUserId() != "" {
				c.Forget(p.GetAppId(), p.GetUserId())
				return
			}
		}
		c.Forget(ev.AppID, "")
	})
}
