package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"strings"
	"time"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/sealbox"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// Source is the producer name on every event this service emits. The event types are declared
// beside their payloads in proto/billing/v1/events.proto (billingv1.Event*).
const Source = "billing"

// Service runs the billing use cases. It is safe for concurrent use.
type Service struct {
	store     Store
	users     Users
	tenants   Tenants
	pspx      Pspx
	pspy      Pspy
	prices    *priceCache
	box       *sealbox.Box
	clock     func() time.Time
	newID     func() string
	publicURL string // the REST edge's public base URL, without a trailing slash
	host      string // its host, the metadata that tells this deployment's provider objects apart
}

// Config holds what the use cases depend on.
type Config struct {
	// Store keeps billing's data; required.
	Store Store
	// Users, Tenants, Pspx and Pspy are the other contexts and the providers, as the use cases
	// that call them need them.
	Users   Users
	Tenants Tenants
	Pspx    Pspx
	Pspy    Pspy
	// Box seals provider secrets; required.
	Box *sealbox.Box
	// Clock is time.Now when nil.
	Clock func() time.Time
	// NewID mints UUIDs; required.
	NewID func() string
	// PublicURL is the REST edge's public base URL (payment pages, pspy webhooks), absolute http(s).
	PublicURL string
}

// New checks the configuration and returns the use cases.
func New(c Config) (*Service, error) {
	switch {
	case c.Store == nil:
		return nil, errors.New("billing: store is required")
	case c.Box == nil:
		return nil, errors.New("billing: the secrets' sealing box is required")
	case c.NewID == nil:
		return nil, errors.New("billing: an id generator is required")
	}
	clock := c.Clock
	if clock == nil {
		clock = time.Now
	}
	u, err := url.Parse(strings.TrimRight(c.PublicURL, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("billing: the public URL %q is not an absolute http(s) URL", c.PublicURL)
	}
	return &Service{store: c.Store, users: c.Users, tenants: c.Tenants, pspx: c.Pspx, pspy: c.Pspy, prices: newPriceCache(clock),
		box: c.Box, clock: clock, newID: c.NewID, publicURL: u.String(), host: u.Host}, nil
}

func (s *Service) now() time.Time { return s.clock().UTC() }

// randomID returns prefix and 24 random hex digits: the form of Berth's own catalog ids, which
// look like the provider ids they stand beside.
func randomID(prefix string) string { return prefix + randomHex(12) }

// randomHex returns n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return hex.EncodeToString(b)
}

// Metadata keys naming Berth's own record of a provider object, so the provider's events about
// it lead back to that record.
const (
	metaCheckout = "berthCheckoutSessionId"
	metaCharge   = "berthChargeId"
)

// tagged is provider metadata with one more key.
func tagged(meta map[string]string, key, value string) map[string]string {
	out := maps.Clone(meta)
	out[key] = value
	return out
}

// customerName is a provider customer's name: the tenant's company, else its name.
func customerName(t TenantRef) string {
	if t.CompanyName != "" {
		return t.CompanyName
	}
	return t.Name
}

// errIncomplete is a provider object missing what its state promises: the provider's fault or
// Berth's misreading, an internal error either way.
func errIncomplete(what string) error { return errors.New(what) }

// ErrTenantSync means a change was stored but the tenant context did not take it in time; its
// event will deliver it, and the caller may retry.
var ErrTenantSync = fault.Unavailable(0, "Service temporarily unavailable")

// publish hands a stored account to the tenant context, so the caller who changed it reads the
// change in its next tenant read. A failure is reported: the change itself is stored and its event
// repairs the tenant shortly, but the caller must not be told the read is current.
func (s *Service) publish(ctx context.Context, a domain.Account) error {
	if err := s.tenants.Apply(ctx, a); err != nil {
		return ErrTenantSync.Wrap(fmt.Errorf("billing state of tenant %s at revision %d: %w", a.TenantID, a.Revision, err))
	}
	return nil
}
