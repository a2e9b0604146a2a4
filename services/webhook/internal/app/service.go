package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/webhook/internal/domain"
)

// Config holds what the use cases depend on.
type Config struct {
	// Store keeps every received provider call; required.
	Store Store
	// Billing applies the calls' effects; required.
	Billing Billing
	// Host is the REST edge's public host: billing tags the provider objects it creates with it,
	// and a call about an object of another deployment is not ours. Required.
	Host string
	// Clock is time.Now when nil.
	Clock func() time.Time
	// NewID mints the stored calls' ids (UUIDv4); required.
	NewID func() string
}

// Service runs the ingest use cases. It is safe for concurrent use.
type Service struct {
	store   Store
	billing Billing
	clock   func() time.Time
	newID   func() string
	host    string // this deployment's public host: provider objects of other deployments are not ours
}

// New checks the configuration and returns the use cases.
func New(c Config) (*Service, error) {
	switch {
	case c.Store == nil:
		return nil, errors.New("webhook: store is required")
	case c.Billing == nil:
		return nil, errors.New("webhook: billing is required")
	case c.Host == "":
		return nil, errors.New("webhook: the public host is required")
	case c.NewID == nil:
		return nil, errors.New("webhook: an id generator is required")
	}
	clock := c.Clock
	if clock == nil {
		clock = time.Now
	}
	return &Service{store: c.Store, billing: c.Billing, clock: clock, newID: c.NewID, host: c.Host}, nil
}

// Delivery is a provider call as the edge received it.
type Delivery struct {
	Body                []byte
	ContentType         string
	Signature           string
	Host                string
	PaymentProviderUUID string
}

// Receipt is the answer body of routes 3 and 4.
type Receipt struct {
	Host      string // with WrongHost: the host the object names
	WrongHost bool
	Ignored   bool
	Status    string // a pspy payment's status when it is not paid
}

// errApply answers a call whose effect failed: 500, so the provider delivers it again.
var errApply = errors.New("the provider call could not be applied")

// ReceivePspx is route 3, in the decided order: size, minimal parse, host, connection by
// customer, signature; then the call is stored (a redelivery of an applied event stops here) and
// applied.
func (s *Service) ReceivePspx(ctx context.Context, d Delivery) (Receipt, error) {
	if len(d.Body) > domain.MaxBody {
		return Receipt{}, domain.ErrNotAnEvent
	}
	ev, err := domain.ParsePspxEvent(d.Body)
	if err != nil {
		return Receipt{}, err
	}
	if ev.Host != "" && !strings.EqualFold(ev.Host, s.host) {
		return Receipt{Host: ev.Host, WrongHost: true}, nil
	}
	if ev.Customer == "" {
		return Receipt{}, domain.ErrNotAnEvent // Berth acts on no object without a customer
	}
	conn, err := s.billing.ResolvePspxCustomer(ctx, ev.Customer, ev.Livemode)
	if fault.Is(err, fault.KindNotFound) {
		return Receipt{}, domain.ErrNotAnEvent
	}
	if err != nil {
		return Receipt{}, err
	}
	if err := domain.VerifyPspxSignature(d.Signature, d.Body, conn.Secrets, s.clock()); err != nil {
		return Receipt{}, err
	}
	e, isNew, err := s.store.Record(ctx, domain.Event{ID: s.newID(), Provider: domain.Pspx, ProviderEventID: ev.ID, DedupeKey: ev.ID,
		Type: ev.Type, ConnectionID: conn.ID, Test: !ev.Livemode, Body: d.Body, ContentType: header(d.ContentType), Signature: header(d.Signature),
		Host: header(d.Host), Outcome: domain.OutcomeReceived, ReceivedAt: s.clock().UTC()})
	if err != nil {
		return Receipt{}, err
	}
	if !isNew && e.Outcome == domain.OutcomeApplied {
		return Receipt{}, nil
	}
	if !isNew {
		return s.apply(ctx, e, nil) // the object of the body stored first
	}
	return s.apply(ctx, e, ev.Object)
}

// ReceivePspy is route 4: a call without a connection or payment id is ignored unstored; any
// other is stored, then billing fetches the payment and applies what it says.
func (s *Service) ReceivePspy(ctx context.Context, d Delivery) (Receipt, error) {
	connID := strings.ToLower(strings.TrimSpace(d.PaymentProviderUUID))
	paymentID, ok := domain.ParsePspyPaymentID(d.ContentType, d.Body)
	if uuid.Validate(connID) != nil || !ok || len(d.Body) > domain.MaxBody {
		return Receipt{Ignored: true}, nil
	}
	e, _, err := s.store.Record(ctx, domain.Event{ID: s.newID(), Provider: domain.Pspy, ProviderEventID: paymentID, Type: "payment",
		ConnectionID: connID, Body: d.Body, ContentType: header(d.ContentType), Host: header(d.Host), Outcome: domain.OutcomeReceived, ReceivedAt: s.clock().UTC()})
	if err != nil {
		return Receipt{}, err
	}
	return s.apply(ctx, e, nil)
}

// providerActor is who billing's changes for e are audited under: the provider's event (pspx's
// event id, pspy's payment id), with the request that brought it, or that replayed it.
func providerActor(ctx context.Context, e domain.Event) events.Actor {
	caller, _ := events.ActorFrom(ctx)
	return events.Actor{Kind: events.ActorProviderEvent, ID: e.ProviderEventID, RequestID: caller.RequestID, ClientAddress: caller.ClientAddress}
}

// apply hands a stored call to billing and records the attempt. A failure answers 500 so the
// provider delivers the call again; the record keeps the cause for operators. A call billing
// refuses for good is recorded as rejected, with billing's reason, and answered 200
// ({received:true}): delivering it again could never apply it, and a provider that gets 500s for
// days disables the endpoint, losing the calls that would apply. object is a pspx call's
// data.object when the caller has just parsed e.Body; nil parses it here.
func (s *Service) apply(ctx context.Context, e domain.Event, object []byte) (Receipt, error) {
	ctx = events.WithActor(ctx, providerActor(ctx, e))
	var (
		a   Applied
		err error
	)
	if e.Provider == domain.Pspx {
		if object == nil {
			var ev domain.PspxEvent
			ev, err = domain.ParsePspxEvent(e.Body)
			object = ev.Object
		}
		if err == nil {
			a, err = s.billing.ApplyPspxEvent(ctx, e.ConnectionID, !e.Test, e.Type, object)
		}
	} else {
		a, err = s.billing.ApplyPspyPayment(ctx, e.ConnectionID, e.ProviderEventID)
	}
	at := Attempt{Outcome: domain.OutcomeApplied, Effect: a.Effect, At: s.clock().UTC()}
	switch {
	case err != nil:
		at = Attempt{Outcome: domain.OutcomeFailed, Error: errorText(err), At: at.At}
	case a.Rejected != "":
		at = Attempt{Outcome: domain.OutcomeRejected, Error: clip(a.Rejected, 1000), At: at.At}
		a = Applied{} // the answer is {received:true}, whatever else billing said
	case a.Ignored:
		at.Outcome = domain.OutcomeIgnored
	}
	if _, ferr := s.store.Finish(ctx, e.ID, at); ferr != nil {
		return Receipt{}, errors.Join(ferr, err)
	}
	if err != nil {
		// The cause is kept as text only: a status billing answered (a 400 there, for a
		// request the provider refused for its content) must not become this route's answer,
		// which is 500 so the provider delivers again.
		return Receipt{}, fault.Internal(fmt.Errorf("%w: %s %s: %v", errApply, e.Provider, e.ProviderEventID, err))
	}
	return Receipt{Ignored: a.Ignored, Status: a.Status}, nil
}

// header is a header value as stored. A provider sends plain text; anything else is kept
// readable rather than refused, since the body decides.
func header(v string) string { return clip(v, 4096) }

// errorText is what an operator's list shows of a failure.
func errorText(err error) string { return clip(err.Error(), 1000) }

// clip makes v storable text: valid UTF-8 without NUL, at most n bytes.
func clip(v string, n int) string {
	v = strings.ReplaceAll(strings.ToValidUTF8(v, "\uFFFD"), "\x00", "")
	if len(v) > n {
		v = strings.ToValidUTF8(v[:n], "")
	}
	return v
}

// ListEvents is the operators' list. appID ("" for every app: the admin token's view) keeps the
// calls of that app's provider connections, asked of billing, newest first across them.
func (s *Service) ListEvents(ctx context.Context, appID string, f domain.Filter) ([]domain.Event, error) {
	switch {
	case f.Limit == 0:
		f.Limit = 100
	case f.Limit < 1 || f.Limit > 1000:
		return nil, fault.InvalidField("limit", "must be between 1 and 1000")
	}
	switch f.Outcome {
	case "", domain.OutcomeReceived, domain.OutcomeApplied, domain.OutcomeIgnored, domain.OutcomeRejected, domain.OutcomeFailed:
	default:
		return nil, fault.InvalidField("outcome", "must be received, applied, ignored, rejected or failed")
	}
	if f.Provider != "" && f.Provider != domain.Pspx && f.Provider != domain.Pspy {
		return nil, fault.InvalidField("provider", "must be pspx or pspy")
	}
	if appID == "" {
		return s.store.Events(ctx, f)
	}
	conns, err := s.appConnections(ctx, appID, f.ConnectionID)
	if err != nil {
		return nil, err
	}
	var out []domain.Event
	for _, c := range conns {
		f.ConnectionID = c
		evs, err := s.store.Events(ctx, f)
		if err != nil {
			return nil, err
		}
		out = append(out, evs...)
	}
	slices.SortStableFunc(out, func(a, b domain.Event) int { return b.ReceivedAt.Compare(a.ReceivedAt) })
	return out[:min(len(out), f.Limit)], nil
}

// errConnectionNotFound answers a connection that is not the named app's.
var errConnectionNotFound = fault.NotFound("Connection not found")

// appConnections are the app's connections an operator's request may read: all of them, or the
// one it names, which must be the app's (else none).
func (s *Service) appConnections(ctx context.Context, appID, named string) ([]string, error) {
	conns, err := s.billing.AppConnections(ctx, strings.ToLower(strings.TrimSpace(appID)))
	if err != nil {
		return nil, err
	}
	if named == "" {
		return conns, nil
	}
	if slices.Contains(conns, named) {
		return []string{named}, nil
	}
	return nil, nil
}

// holdToApp answers notFound unless connection is one of the app's; appID "" (the admin token's
// call) holds to nothing.
func (s *Service) holdToApp(ctx context.Context, appID, connection string, notFound error) error {
	if appID == "" {
		return nil
	}
	conns, err := s.appConnections(ctx, appID, connection)
	if err != nil {
		return err
	}
	if len(conns) == 0 {
		return notFound
	}
	return nil
}

// Replayed counts what a replay did: Applied counts the calls that did not fail (applied, ignored
// or rejected).
type Replayed struct{ Replayed, Applied, Failed int }

// ReplayEvents hands stored calls to billing again: the one with id, or every call of the
// connection received in [since, until). Billing keys every effect, so a call applied before
// changes nothing again; a call that failed is applied now if it can be.
//
// appID ("" for any app: the admin token's) holds the replay to the app's provider connections: a
// call or connection of another app is not found, as if it did not exist.
func (s *Service) ReplayEvents(ctx context.Context, appID, id string, f domain.Filter) (Replayed, error) {
	var todo []domain.Event
	if id != "" {
		e, err := s.store.Event(ctx, strings.ToLower(strings.TrimSpace(id)))
		if err != nil {
			return Replayed{}, err
		}
		if err := s.holdToApp(ctx, appID, e.ConnectionID, domain.ErrEventNotFound); err != nil {
			return Replayed{}, err
		}
		todo = []domain.Event{e}
	} else {
		if f.ConnectionID == "" || f.Since.IsZero() || f.Until.IsZero() {
			return Replayed{}, fault.InvalidField("id", "name an event, or a connection with since and until")
		}
		if err := s.holdToApp(ctx, appID, f.ConnectionID, errConnectionNotFound); err != nil {
			return Replayed{}, err
		}
		f.Limit = 1000
		var err error
		if todo, err = s.store.Events(ctx, f); err != nil {
			return Replayed{}, err
		}
	}
	var r Replayed
	for i := len(todo) - 1; i >= 0; i-- { // oldest first, as they arrived
		r.Replayed++
		if _, err := s.apply(ctx, todo[i], nil); err != nil {
			r.Failed++
			continue
		}
		r.Applied++
	}
	return r, nil
}
