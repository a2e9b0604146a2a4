package authn

import (
	"context"
	"crypto/sha256"
	"sync"
	"time"

	"github.com/berthhq/berth/pkg/events"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// KeyCache remembers successful verifications for a short time, so that services other than
// identity do not make a gRPC round trip per request. Entries are keyed by a hash of the whole
// presented key and client id — never by key id alone, or a wrong secret carrying a valid id would
// hit the cache. Failures are not cached: they are cheap to recompute and caching them would let a
// newly created key be refused for a TTL.
type KeyCache struct {
	inner KeyVerifier
	ttl   time.Duration
	now   func() time.Time

	mu      sync.Mutex
	entries map[[32]byte]cacheEntry
}

type cacheEntry struct {
	key     VerifiedKey
	expires time.Time
}

// NewKeyCache wraps inner with a cache whose entries live ttl at most. Key and app events
// (Watch) drop entries sooner.
func NewKeyCache(inner KeyVerifier, ttl time.Duration) *KeyCache {
	return &KeyCache{inner: inner, ttl: ttl, now: time.Now, entries: map[[32]byte]cacheEntry{}}
}

// VerifyAPIKey implements KeyVerifier.
func (c *KeyCache) VerifyAPIKey(ctx context.Context, apiKey, clientID string) (VerifiedKey, error) {
	h := sha256.Sum256([]byte(apiKey + "\x00" + clientID))
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[h]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.key, nil
	}
	vk, err := c.inner.VerifyAPIKey(ctx, apiKey, clientID)
	if err != nil {
		return VerifiedKey{}, err
	}
	c.mu.Lock()
	c.entries[h] = cacheEntry{key: vk, expires: now.Add(c.ttl)}
	c.mu.Unlock()
	return vk, nil
}

// Forget drops the cached verifications of one key, or of every key of the app when keyID is "".
func (c *KeyCache) Forget(appID, keyID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for h, e := range c.entries {
		if e.key.AppID == appID && (keyID == "" || e.key.KeyID == keyID) {
			delete(c.entries, h)
		}
	}
}

// Key and app event types that invalidate cached verifications.
const (
	EventAppChanged    = "identity.app.changed"
	EventAPIKeyChanged = "identity.apikey.changed"
)

// Watch subscribes to identity's app and key events and forgets what they change. Every replica
// receives every event (an ephemeral subscription), since each holds its own cache.
func (c *KeyCache) Watch(ctx context.Context, bus events.Bus) (stop func(), err error) {
	return bus.Subscribe(ctx, []string{EventAppChanged, EventAPIKeyChanged}, func(ev events.Event) {
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
