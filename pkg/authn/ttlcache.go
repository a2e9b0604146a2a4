package authn

import (
	"crypto/sha256"
	"sync"
	"time"
)

// ttlCache holds successful verifications of presented credentials for a bounded time. Entries
// are keyed by a SHA-256 of the whole presented credential, never by an id inside it, so a wrong
// secret carrying a valid id cannot hit the cache. Failures are never stored: they are cheap to
// recompute, and storing them would refuse a freshly created credential for a TTL.
type ttlCache[V any] struct {
	ttl time.Duration
	now func() time.Time

	mu      sync.Mutex
	entries map[[32]byte]ttlEntry[V]
}

type ttlEntry[V any] struct {
	v       V
	expires time.Time
}

func newTTLCache[V any](ttl time.Duration) *ttlCache[V] {
	return &ttlCache[V]{ttl: ttl, now: time.Now, entries: map[[32]byte]ttlEntry[V]{}}
}

// get returns the cached value for credential, or calls verify and caches its success until
// min(now+ttl, notAfter(v)) (notAfter may return the zero time for "no own expiry").
func (c *ttlCache[V]) get(credential string, verify func() (V, error), notAfter func(V) time.Time) (V, error) {
	h := sha256.Sum256([]byte(credential))
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[h]
	c.mu.Unlock()
	if ok && now.Before(e.expires) {
		return e.v, nil
	}
	v, err := verify()
	if err != nil {
		var zero V
		return zero, err
	}
	expires := now.Add(c.ttl)
	if na := notAfter(v); !na.IsZero() && na.Before(expires) {
		expires = na
	}
	c.mu.Lock()
	c.entries[h] = ttlEntry[V]{v: v, expires: expires}
	c.mu.Unlock()
	return v, nil
}

// forget drops every entry whose value matches.
func (c *ttlCache[V]) forget(match func(V) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for h, e := range c.entries {
		if match(e.v) {
			delete(c.entries, h)
		}
	}
}

func (c *ttlCache[V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}
