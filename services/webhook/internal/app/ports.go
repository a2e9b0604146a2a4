package app

import (
	"context"
	"time"

	"github.com/berthhq/berth/services/webhook/internal/domain"
)

// Store keeps every received provider call.
type Store interface {
	// Record stores e as received unless a call with its DedupeKey is stored: then it returns
	// that call and false, and stores nothing.
	Record(ctx context.Context, e domain.Event) (domain.Event, bool, error)
	// Finish records one attempt to apply the call: its outcome, effect and error, one more
	// attempt, and the time it was applied when the outcome is applied or ignored.
	Finish(ctx context.Context, id string, a Attempt) (domain.Event, error)
	// Event returns a stored call; domain.ErrEventNotFound when absent.
	Event(ctx context.Context, id string) (domain.Event, error)
	// Events lists stored calls matching f, newest first.
	Events(ctx context.Context, f domain.Filter) ([]domain.Event, error)
}

// Attempt is the result of one try to apply a call.
type Attempt struct {
	Outcome string
	Effect  string
	Error   string
	At      time.Time
}

// Billing applies provider calls; it owns every effect and keys it, so a call applied twice
// changes nothing the second time.
type Billing interface {
	// ResolvePspxCustomer names the connection of a customer Berth created in that mode and the
	// mode's webhook secrets; a fault of kind NotFound when there is none.
	ResolvePspxCustomer(ctx context.Context, customerID string, live bool) (Connection, error)
	ApplyPspxEvent(ctx context.Context, connectionID string, live bool, typ string, object []byte) (Applied, error)
	ApplyPspyPayment(ctx context.Context, connectionID, paymentID string) (Applied, error)
	// AppConnections names the app's provider connections (none for an app without one).
	AppConnections(ctx context.Context, appID string) ([]string, error)
}

// Connection is a provider connection as ingest needs it.
type Connection struct {
	ID      string
	Secrets []string
}

// Applied is billing's answer to a call. Rejected is why billing refuses it for good ("" unless
// it does); a failure that may pass is an error instead.
type Applied struct {
	Ignored  bool
	Status   string
	Effect   string
	Rejected string
}

// Finish applies an attempt to a stored call: the rule both stores keep.
func Finish(e *domain.Event, a Attempt) {
	e.Outcome, e.Effect, e.LastError = a.Outcome, a.Effect, a.Error
	e.Attempts++
	if a.Outcome == domain.OutcomeApplied || a.Outcome == domain.OutcomeIgnored {
		e.AppliedAt = a.At
	}
}

// Matches reports whether a stored call passes the filter (its limit aside).
func Matches(e domain.Event, f domain.Filter) bool {
	return (f.ConnectionID == "" || e.ConnectionID == f.ConnectionID) && (f.Outcome == "" || e.Outcome == f.Outcome) &&
		(f.Provider == "" || e.Provider == f.Provider) && (f.Since.IsZero() || !e.ReceivedAt.Before(f.Since)) &&
		(f.Until.IsZero() || e.ReceivedAt.Before(f.Until))
}
