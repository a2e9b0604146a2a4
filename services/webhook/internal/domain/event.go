package domain

import (
	"time"

	"github.com/berthhq/berth/pkg/fault"
)

// Providers whose calls are received.
const (
	Pspx = "pspx"
	Pspy = "pspy"
)

// MaxBody is the largest body a provider call may have (1 MiB, as decided).
const MaxBody = 1 << 20

// Outcomes of a received call. A call is stored as received before anything is applied; applying
// it ends in applied (billing applied it or had nothing to do), ignored (it names nothing of
// Berth's), rejected (billing refuses it for good: the provider says the object it names does not
// exist for the connection's key or that the key may not see it, so no delivery can ever apply
// it; answered 200 so the provider stops) or failed (billing could not apply it yet: the provider
// retries, an operator may replay).
const (
	OutcomeReceived = "received"
	OutcomeApplied  = "applied"
	OutcomeIgnored  = "ignored"
	OutcomeRejected = "rejected"
	OutcomeFailed   = "failed"
)

// Event is one provider call as stored: the raw body and the headers that matter, what it was
// routed to, and what became of it.
type Event struct {
	ID       string
	Provider string
	// ProviderEventID is pspx's event id or pspy's payment id.
	ProviderEventID string
	// DedupeKey is unique among stored calls when set: pspx's event id, so a redelivered event is
	// recognised. pspy calls have none: the same payment id comes back for every status change,
	// refund and chargeback, so billing keys their effects by what it observes.
	DedupeKey    string
	Type         string
	ConnectionID string
	Test         bool
	Body         []byte
	ContentType  string
	Signature    string
	Host         string
	Outcome      string
	Attempts     int32
	LastError    string
	Effect       string
	ReceivedAt   time.Time
	AppliedAt    time.Time // zero until applied
}

// Filter selects stored calls for operators.
type Filter struct {
	ConnectionID string
	Outcome      string
	Provider     string
	Since, Until time.Time // zero: unbounded; Until is exclusive
	Limit        int
}

// ErrEventNotFound answers an operator's id that names no stored call.
var ErrEventNotFound = fault.NotFound("Webhook event not found")

// ErrNotAnEvent answers a route-3 body that is not a provider event, and any pspx call whose
// origin cannot be verified: the caller learns nothing more.
var ErrNotAnEvent = fault.Invalid("", "The request is not a verifiable provider event")
