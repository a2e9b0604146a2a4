package app

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/berthhq/berth/pkg/fault"
)

// priceTTL bounds how long a provider price or tax rate is trusted: they are immutable at the
// provider except for being deactivated, which a checkout then learns within this time.
const priceTTL = 10 * time.Minute

// priceCache keeps pspx prices and tax rates read from the provider, per connection and key
// (test and live objects differ), so a checkout does not cost two extra provider reads.
type priceCache struct {
	mu     sync.Mutex
	now    func() time.Time
	prices map[string]cached[PspxPrice]
	rates  map[string]cached[PspxTaxRate]
}

type cached[T any] struct {
	value   T
	expires time.Time
}

func newPriceCache(now func() time.Time) *priceCache {
	return &priceCache{now: now, prices: map[string]cached[PspxPrice]{}, rates: map[string]cached[PspxTaxRate]{}}
}

func (c *priceCache) price(ctx context.Context, connectionID, key, id string, p Pspx) (PspxPrice, error) {
	return lookup(c, c.prices, connectionID+"/"+keyMode(key)+"/"+id, func() (PspxPrice, error) {
		v, err := p.Price(ctx, key, id)
		return v, notFoundAs(err, "price", "names no price at the provider", "read pspx price")
	})
}

func (c *priceCache) taxRate(ctx context.Context, connectionID, key, id string, p Pspx) (PspxTaxRate, error) {
	return lookup(c, c.rates, connectionID+"/"+keyMode(key)+"/"+id, func() (PspxTaxRate, error) {
		v, err := p.TaxRate(ctx, key, id)
		return v, notFoundAs(err, "taxRate", "names no tax rate at the provider", "read pspx tax rate")
	})
}

// lookup answers from the cache or loads and caches; failures are never cached.
func lookup[T any](c *priceCache, m map[string]cached[T], k string, load func() (T, error)) (T, error) {
	c.mu.Lock()
	e, ok := m[k]
	c.mu.Unlock()
	if ok && c.now().Before(e.expires) {
		return e.value, nil
	}
	v, err := load()
	if err != nil {
		return v, err
	}
	c.mu.Lock()
	m[k] = cached[T]{value: v, expires: c.now().Add(priceTTL)}
	c.mu.Unlock()
	return v, nil
}

// keyMode tells test from live objects without keeping the key itself in the cache's keys.
func keyMode(key string) string {
	if strings.HasPrefix(key, "sk_live_") {
		return "live"
	}
	return "test"
}

// notFoundAs answers a provider's 404 for an id the caller sent as that field's error.
func notFoundAs(err error, field, message, what string) error {
	var pe *ProviderError
	if errors.As(err, &pe) && pe.Status == 404 {
		return fault.InvalidField(field, "%s", message)
	}
	if err != nil {
		return providerFault(err, what)
	}
	return nil
}
