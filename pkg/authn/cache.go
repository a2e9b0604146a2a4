package authn

import (
	"context"
	"time"

	eventsv1 "github.com/berthhq/berth/proto/events/v1"

	"github.com/berthhq/berth/pkg/events"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// KeyCache remembers successful API-key verifications for a short time, so that services other
// than identity do not make a gRPC round trip per request (see ttlCache for what is cached).
type KeyCache struct {
	inner KeyVerifier
	cache *ttlCache[VerifiedKey]
}

// NewKeyCache wraps inner with a cache whose entries live ttl at most. Key and app events
// (Watch) drop entries sooner.
func NewKeyCache(inner KeyVerifier, ttl time.Duration) *KeyCache {
	return &KeyCache{inner: inner, cache: newTTLCache[VerifiedKey](ttl)}
}

// VerifyAPIKey implements KeyVerifier.
func (c *KeyCache) VerifyAPIKey(ctx context.Context, apiKey, clientID string) (VerifiedKey, error) {
	return c.cache.get(apiKey+"\x00"+clientID,
		func() (VerifiedKey, error) { return c.inner.VerifyAPIKey(ctx, apiKey, clientID) },
		func(VerifiedKey) time.Time { return time.Time{} })
}

// Forget drops the cached verifications of one key, or of every key of the app when keyID is "".
func (c *KeyCache) Forget(appID, keyID string) {
	c.cache.forget(func(k VerifiedKey) bool { return k.AppID == appID && (keyID == "" || k.KeyID == keyID) })
}

// Key and app event types that invalidate cached verifications.
const (
	EventAppChanged    = identityv1.EventAppChanged
	EventAPIKeyChanged = identityv1.EventAPIKeyChanged
)

// Watch subscribes to identity's app and key events and forgets what they change. Every replica
// receives every event (an ephemeral subscription), since each holds its own cache.
func (c *KeyCache) Watch(ctx context.Context, bus events.Bus) (stop func(), err error) {
	return bus.Subscribe(ctx, []eventsv1.Type{EventAppChanged, EventAPIKeyChanged}, func(ev events.Event) {
		switch ev.Type {
		case EventAppChanged:
			var p identityv1.AppChanged
			if ev.Decode(&p) == nil {
				c.Forget(p.GetAppId(), "")
				return
			}
		case EventAPIKeyChanged:
			var p identityv1.ApiKeyChanged
			if ev.Decode(&p) == nil {
				c.Forget(p.GetAppId(), p.GetKeyId())
				return
			}
		}
		// An event we cannot read still says something changed for this app: forget it all.
		c.Forget(ev.AppID, "")
	})
}
