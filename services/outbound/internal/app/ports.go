package app

import (
	"context"
	"time"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/outbound/internal/domain"
)

// Store keeps endpoints and deliveries.
type Store interface {
	Endpoints
	Deliveries
}

// Endpoints keeps an app's webhook endpoints.
type Endpoints interface {
	// CreateEndpoint stores a new endpoint.
	CreateEndpoint(ctx context.Context, e domain.Endpoint) error
	// GetEndpoint returns the app's endpoint; domain.ErrNotFound when absent or another app's.
	GetEndpoint(ctx context.Context, appID, id string) (domain.Endpoint, error)
	// ListEndpoints returns the app's endpoints, oldest first.
	ListEndpoints(ctx context.Context, appID string) ([]domain.Endpoint, error)
	// EndpointsToDeliver is ListEndpoints for recording deliveries, in the consumer's transaction
	// (the ctx carries it): until it ends, a DeleteEndpoint of one of them waits, and then deletes
	// the deliveries recorded for it too. No delivery outlives its endpoint.
	EndpointsToDeliver(ctx context.Context, appID string) ([]domain.Endpoint, error)
	// UpdateEndpoint runs fn on a copy of the endpoint, locked against concurrent updates, and
	// stores the copy with the events fn returns, atomically; nothing is stored when fn fails.
	// domain.ErrNotFound as GetEndpoint.
	UpdateEndpoint(ctx context.Context, appID, id string, fn func(*domain.Endpoint) ([]events.Event, error)) (domain.Endpoint, error)
	// DeleteEndpoint removes the endpoint, its deliveries and their attempts; domain.ErrNotFound as
	// GetEndpoint.
	DeleteEndpoint(ctx context.Context, appID, id string) error
}

// Deliveries keeps the deliveries of public events to endpoints, and their attempts.
type Deliveries interface {
	// AddDeliveries stores new pending deliveries, each leased until its LeaseUntil (zero: free to
	// claim at once). Called by an event consumer inside its inbox transaction (the ctx carries
	// it), so the deliveries commit with the event's record.
	AddDeliveries(ctx context.Context, ds ...domain.Delivery) error
	// ClaimDue leases pending deliveries due at c.Now (oldest due first, at most c.Limit, at most
	// c.PerEndpoint of each endpoint, none of the endpoints c.Skip names) until c.Now+c.Lease: no
	// other claimer gets them before then, and those another claimer holds are skipped. The
	// deliveries come back with LeaseUntil set.
	ClaimDue(ctx context.Context, c Claim) ([]domain.Delivery, error)
	// RenewLeases moves the lease of each of ds that is still pending and still leased until its
	// LeaseUntil to until (zero: free to claim at once), and returns those it moved, with
	// LeaseUntil set to until. A delivery whose lease ran out and that another claimer took, one
	// recorded meanwhile, and one deleted are left alone: the caller no longer holds them.
	RenewLeases(ctx context.Context, ds []domain.Delivery, until time.Time) ([]domain.Delivery, error)
	// RecordAttempts stores attempts, each with its delivery's new state (status, attempts, next
	// attempt), and ends their leases, all in one transaction. A delivery deleted meanwhile is
	// ignored.
	RecordAttempts(ctx context.Context, rs ...Recorded) error
	// ListDeliveries returns an endpoint's newest deliveries (at most limit), each with its
	// attempts oldest first.
	ListDeliveries(ctx context.Context, appID, endpointID string, limit int) ([]DeliveryView, error)
	// RetryDelivery makes the endpoint's delivery pending and due at now, whatever its state, and
	// returns it; domain.ErrDeliveryNotFound when absent or another endpoint's.
	RetryDelivery(ctx context.Context, appID, endpointID, id string, now time.Time) (DeliveryView, error)
	// RecoverDeliveries makes the endpoint's failed deliveries created at or after since pending,
	// due at now and with their attempts counted from zero again, and returns how many.
	RecoverDeliveries(ctx context.Context, appID, endpointID string, since, now time.Time) (int, error)
}

// Claim is what ClaimDue takes.
type Claim struct {
	Now         time.Time
	Lease       time.Duration
	Limit       int
	PerEndpoint int
	// Skip are endpoints whose deliveries the claimer is still sending: claiming more of theirs
	// would only queue them behind those.
	Skip []string
}

// Recorded is one attempt with the state its delivery is in after it.
type Recorded struct {
	Delivery domain.Delivery
	Attempt  domain.Attempt
}

// DeliveryView is a delivery with its attempts, as the deliveries route shows it.
type DeliveryView struct {
	Delivery domain.Delivery
	Attempts []domain.Attempt
}

// Sender makes one HTTP attempt of a delivery. Implementations bound it by domain.AttemptTimeout,
// read at most domain.MaxResponseBytes of the answer and follow no redirect; a refused address
// or a network failure is an Attempt with Error set, never an error.
type Sender interface {
	Send(ctx context.Context, url string, header map[string]string, body []byte) domain.Attempt
}

// Box seals endpoint secrets at rest (sealbox.Box).
type Box interface {
	Seal(plain []byte, owner string) ([]byte, error)
	Open(sealed []byte, owner string) ([]byte, error)
}
