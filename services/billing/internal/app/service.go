package app

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"time"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/sealbox"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// Source is the producer name on every event this service emits. The event types are declared
// beside their payloads in proto/billing/v1/events.proto (billingv1.Event*).
const Source = "billing"

// Service runs the billing use cases.
type Service struct {
	store   Store
	users   Users
	tenants Tenants
	box     *sealbox.Box
	clock   func() time.Time
	newID   func() string
}

// Options are the collaborators of a Service besides its ports.
type Options struct {
	Box   *sealbox.Box     // seals provider secrets; required
	Clock func() time.Time // time.Now when nil
	NewID func() string    // mints UUIDs; required
}

// New returns a Service over its ports.
func New(store Store, users Users, tenants Tenants, o Options) *Service {
	if o.Clock == nil {
		o.Clock = time.Now
	}
	return &Service{store: store, users: users, tenants: tenants, box: o.Box, clock: o.Clock, newID: o.NewID}
}

func (s *Service) now() time.Time { return s.clock().UTC() }

// randomID returns prefix and 24 random hex digits: the form of Berth's own catalog ids, which
// look like the provider ids they stand beside.
func randomID(prefix string) string {
	b := make([]byte, 12)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return prefix + hex.EncodeToString(b)
}

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
