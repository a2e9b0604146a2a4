package authn

import (
	"crypto/sha256"
	"sync"
	"time"
)

// maxCacheEntries caps a cache's live entries. An entry is a hash and a small verified answer
// (about 200 bytes), so the cap bounds a cache near 2 MB however many distinct valid credentials
// arrive (every token refresh mints a new one), while holding far more than the credentials a
// service sees within one TTL in normal use.
const maxCacheEntries = 10_000

// ttlCache holds successful verifications of presented credentials for a bounded time. Entries
// are keyed by a SHA-256 of the whole presented credential, never by an id inside it, so a wrong
// secret carrying a valid id cannot hit the cache. Failures are never stored: they are cheap to
// recompute, and storing them would refuse a freshly created credential for a TTL.
//
// Memory is bounded twice: an expired entry is dropped when it is looked up, and every TTL a
// store sweeps out all expired entries (credentials presented once are never looked up again);
// and a store into a full cache evicts an arbitrary entry, since under a flood the cap, not the
// TTL, is what holds.
//
// A verification answers for the moment it was asked. When forget runs while one is in flight
// (a user frozen as identity answers), storing that answer afterwards would undo the forget for a
// TTL. So forget advances a generation, and an answer is stored only if no forget ran since its
// verification began. Any forget voids every in-flight store, not only the matching ones: that
// costs at most one extra round trip per concurrent request, and forgets are rare.
type ttlCache[V any] struct {
	ttl        time.Duration
	now        func() time.Time
	maxEntries int

	mu        sync.Mutex
	entries   map[[32]byte]ttlEntry[V]
	nextSweep time.Time
	gen       uint64 // advanced by every forget
}

type ttlEntry[V any] struct {
	v       V
	expires time.Time
}

func newTTLCache[V any](ttl time.Duration) *ttlCache[V] {
	return &ttlCache[V]{ttl: ttl, now: time.Now, maxEntries: maxCacheEntries, entries: map[[32]byte]ttlEntry[V]{}}
}

// get returns the cached value for credential, or calls verify and caches its success until
// min(now+ttl, notAfter(v)) (notAfter may return the zero time for "no own expiry").
func (c *ttlCache[V]) get(credential string, verify func() (V, error), notAfter func(V) time.Time) (V, error) {
	h := sha256.Sum256([]byte(credential))
	now := c.now()
	c.mu.Lock()
	e, ok := c.entries[h]
	if ok && !now.Before(e.expires) {
		delete(c.entries, h)
		ok = false
	}
	gen := c.gen
	c.mu.Unlock()
	if ok {
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
	if c.gen == gen {
		c.store(h, ttlEntry[V]{v: v, expires: expires}, now)
	}
	c.mu.Unlock()
	return v, nil
}

// store adds e, sweeping expired entries once per TTL and evicting when the cache is full. The
// caller holds mu.
func (c *ttlCache[V]) store(h [32]byte, e ttlEntry[V], now time.Time) {
	if !now.Before(c.nextSweep) {
		for k, old := range c.entries {
			if !now.Before(old.expires) {
				delete(c.entries, k)
			}
		}
		c.nextSweep = now.Add(c.ttl)
	}
	if _, replacing := c.entries[h]; !replacing {
		// Map iteration starts at a random place, so this evicts an arbitrary entry in O(1):
		// no bookkeeping for an exact LRU, which a flood of single-use credentials would defeat
		// anyway.
		for k := range c.entries {
			if len(c.entries) < c.maxEntries {
				break
			}
			delete(c.entries, k)
		}
	}
	c.entries[h] = e
}

// forget drops every entry whose value matches, and keeps verifications in flight from storing
// what they learnt before it.
func (c *ttlCache[V]) forget(match func(V) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
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
