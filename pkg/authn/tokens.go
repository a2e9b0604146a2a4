package authn

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"

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
		Kind:      KindTenantToken,
		AppID:     res.GetAppId(),
		TenantID:  res.GetTenantId(),
		UserID:    res.GetUserId(),
		expiresAt: time.Unix(res.GetExpiresAt(), 0),
	}, nil
}

// TokenCache remembers verified tokens briefly, like KeyCache does for keys: never past the
// token's own expiry, and evicted at once when identity reports that the user was frozen or
// deleted or the app changed (disabled, key rotated), so those take effect within an event's
// delivery time rather than a TTL.
type TokenCache struct {
	inner TokenVerifier
	ttl   time.Duration
	now   func() time.Time

	mu      sync.Mutex
	entries map[[32]byte]tokenEntry
}

type tokenEntry struct {
	p       Principal
	expires time.Time
}

// NewTokenCache wraps inner with a cache whose entries live ttl at most.
func NewTokenCache(inner TokenVerifier, ttl time.Duration) *TokenCache {
	return &TokenCache{inner: inner, ttl: ttl, now: time.Now, entries: map[[32]byte]tokenEntry{}}
}

// VerifyAccessToken implements TokenVerifier. Failures are not cached.
func (c *TokenCache) VerifyAccessToken(ctx context.Context, raw string) (Principal, error) {
	h := sha256.Sum256([]byte(raw))
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[h]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.p, nil
	}
	p, err := c.inner.VerifyAccessToken(ctx, raw)
	if err != nil {
		return Principal{}, err
	}
	expires := now.Add(c.ttl)
	if !p.expiresAt.IsZero() && p.expiresAt.Before(expires) {
		expires = p.expiresAt
	}
	c.mu.Lock()
	c.entries[h] = tokenEntry{p: p, expires: expires}
	c.mu.Unlock()
	return p, nil
}

// Forget drops cached tokens of one user, or of the whole app when userID is "".
func (c *TokenCache) Forget(appID, userID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for h, e := range c.entries {
		if e.p.AppID == appID && (userID == "" || e.p.UserID == userID) {
			delete(c.entries, h)
		}
	}
}

// User and app event types that invalidate cached tokens.
const (
	EventUserFrozen  = "identity.user.frozen"
	EventUserDeleted = "identity.user.deleted"
)

// Watch subscribes to the identity events that end a token's validity early.
func (c *TokenCache) Watch(ctx context.Context, bus events.Bus) (stop func(), err error) {
	return bus.Subscribe(ctx, []string{EventUserFrozen, EventUserDeleted, EventAppChanged}, func(ev events.Event) {
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
