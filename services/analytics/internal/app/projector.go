package app

import (
	"context"
	"fmt"
	"time"

	"github.com/google/uuid"
	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/analytics/internal/domain"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// IdentityEvents, TenantEvents and BillingEvents are the types Apply applies, per publishing
// context: a durable consumer reads one context's stream, so each list feeds one consumer.
var (
	IdentityEvents = []eventsv1.Type{
		identityv1.EventUserSignedIn, identityv1.EventUserCreated, identityv1.EventUserUpdated, identityv1.EventUserFrozen,
		identityv1.EventUserUnfrozen, identityv1.EventUserDeleted,
	}
	TenantEvents  = []eventsv1.Type{tenantv1.EventTenantCreated, tenantv1.EventTenantUpdated}
	BillingEvents = []eventsv1.Type{
		billingv1.EventPaymentOneTime, billingv1.EventSubscriptionStarted, billingv1.EventSubscriptionRenewed,
		billingv1.EventSubscriptionChanged, billingv1.EventSubscriptionCancelled, billingv1.EventSubscriptionEnded,
		billingv1.EventPaymentFailed, billingv1.EventTenantFrozen, billingv1.EventTenantUnfrozen,
	}
)

// ErrMalformed marks an event that can never be applied; the consumer acknowledges it instead of
// redelivering it (see events.ErrMalformed).
var ErrMalformed = events.ErrMalformed

// Apply applies one event with its decoded payload (the consumers and the rebuild hand it over
// through events.Handle, which also settles an event whose payload does not decode). Applying an
// event again changes nothing: sign-ins are keyed by event id and snapshots never move back in
// time. Errors wrap ErrMalformed when the event is unusable.
func (s *Service) Apply(ctx context.Context, ev events.Event, payload proto.Message) error {
	// Snapshot order is decided by event time, kept to the microsecond like every stored time.
	asOf := ev.Time.UTC().Truncate(time.Microsecond)
	switch ev.Type {
	case identityv1.EventUserSignedIn:
		m, err := payloadOf[*identityv1.UserSignedIn](ev, payload)
		if err != nil {
			return err
		}
		return s.signedIn(ctx, ev, m, asOf)
	case identityv1.EventUserCreated, identityv1.EventUserUpdated, identityv1.EventUserFrozen, identityv1.EventUserUnfrozen:
		m, err := payloadOf[*identityv1.UserChanged](ev, payload)
		if err != nil {
			return err
		}
		if m.GetUser() == nil {
			return malformed(ev, "carries no user")
		}
		appID, userID, tenantRef, err := userIDs(ev, m.GetAppId(), m.GetUserId(), m.GetTenantRef())
		if err != nil {
			return err
		}
		if err := s.store.PutUser(ctx, UserSnapshot{AppID: appID, UserID: userID, TenantRef: tenantRef, AsOf: asOf, User: m.GetUser()}); err != nil {
			return err
		}
		if ev.Type != identityv1.EventUserCreated {
			return nil
		}
		return s.store.RecordFact(ctx, domain.Fact{AppID: appID, Kind: domain.FactNewUser, Key: userID, Day: domain.Day(asOf)})
	case identityv1.EventUserDeleted:
		m, err := payloadOf[*identityv1.UserDeleted](ev, payload)
		if err != nil {
			return err
		}
		appID, userID, tenantRef, err := userIDs(ev, m.GetAppId(), m.GetUserId(), m.GetTenantRef())
		if err != nil {
			return err
		}
		return s.store.MarkUserDeleted(ctx, appID, userID, tenantRef, asOf)
	case tenantv1.EventTenantCreated, tenantv1.EventTenantUpdated:
		m, err := payloadOf[*tenantv1.TenantChanged](ev, payload)
		if err != nil {
			return err
		}
		if m.GetTenant() == nil {
			return malformed(ev, "carries no tenant")
		}
		appID, err := eventApp(ev, m.GetAppId())
		if err != nil {
			return err
		}
		tenantID, err := canonicalID(ev, "tenantId", m.GetTenantId())
		if err != nil {
			return err
		}
		if err := s.store.PutTenant(ctx, TenantSnapshot{AppID: appID, TenantID: tenantID, AsOf: asOf, Tenant: m.GetTenant()}); err != nil {
			return err
		}
		if ev.Type != tenantv1.EventTenantCreated {
			return nil
		}
		return s.store.RecordFact(ctx, domain.Fact{AppID: appID, Kind: domain.FactNewTenant, Key: tenantID, Day: domain.Day(asOf)})
	case billingv1.EventPaymentOneTime:
		m, err := payloadOf[*billingv1.MoneyChanged](ev, payload)
		if err != nil {
			return err
		}
		return s.oneTime(ctx, ev, m)
	case billingv1.EventSubscriptionStarted, billingv1.EventSubscriptionRenewed, billingv1.EventSubscriptionChanged,
		billingv1.EventSubscriptionCancelled, billingv1.EventSubscriptionEnded, billingv1.EventPaymentFailed,
		billingv1.EventTenantFrozen, billingv1.EventTenantUnfrozen:
		m, err := payloadOf[*billingv1.MoneyChanged](ev, payload)
		if err != nil {
			return err
		}
		if err := s.billingFact(ctx, ev, m); err != nil {
			return err
		}
		return s.subscription(ctx, ev, m)
	}
	return malformed(ev, "is not a type analytics applies")
}

// oneTime records a payment for units, and its amount for the daily one-time revenue.
func (s *Service) oneTime(ctx context.Context, ev events.Event, m *billingv1.MoneyChanged) error {
	ids, err := moneyIDs(ev, m)
	if err != nil {
		return err
	}
	err = s.store.RecordOneTimePayment(ctx, domain.OneTimePayment{
		ID: ids.event, AppID: ids.app, TenantID: ids.tenant, UserID: ids.user, PaymentID: m.GetPaymentId(),
		PriceID: m.GetPriceId(), CustomerID: m.GetCustomerId(), Test: m.GetTest(),
		Units: m.GetUnits(), UnitsBefore: m.GetUnitsBefore(), At: ids.at,
	})
	if err != nil {
		return err
	}
	if revenue := revenueFact(m, ids, domain.FactOneTime, ids.event); revenue != nil {
		return s.store.RecordFact(ctx, *revenue)
	}
	return nil
}

// billingFact records what a money event other than a one-time payment counts in the daily
// series besides the subscription it names: a failed payment, or a frozen tenant (counted once per
// tenant and day). A tenant frozen or failing while paying by units names no subscription, so
// these do not wait for one.
func (s *Service) billingFact(ctx context.Context, ev events.Event, m *billingv1.MoneyChanged) error {
	var kind domain.FactKind
	switch ev.Type {
	case billingv1.EventPaymentFailed:
		kind = domain.FactPaymentFailure
	case billingv1.EventTenantFrozen:
		kind = domain.FactTenantFrozen
	default:
		return nil
	}
	ids, err := moneyIDs(ev, m)
	if err != nil {
		return err
	}
	f := domain.Fact{AppID: ids.app, Kind: kind, Key: ids.event, Day: domain.Day(ids.at)}
	if kind == domain.FactTenantFrozen {
		f.Subject = ids.tenant
	}
	return s.store.RecordFact(ctx, f)
}

// revenueFact is the daily revenue fact of the payment m records, nil when it carries no usable
// amount: none (an event that records no payment, a provider that did not say), a negative one or
// one without a three-letter currency. The payment itself still counts where it is listed (route
// 7, the subscription's payments): only its amount is unknown.
func revenueFact(m *billingv1.MoneyChanged, ids moneyRefs, kind domain.FactKind, key string) *domain.Fact {
	currency := domain.Currency(m.GetCurrency())
	if m.GetAmount() <= 0 || !domain.ValidCurrency(currency) {
		return nil
	}
	return &domain.Fact{AppID: ids.app, Kind: kind, Key: key, Day: domain.Day(ids.at), Currency: currency, Amount: m.GetAmount()}
}

// subscription applies what a money event says about the subscription it names. Every such event
// carries the tenant's state after the change; one that names no subscription (a failure or a
// freeze of a tenant paying by units) has nothing for route 6.
func (s *Service) subscription(ctx context.Context, ev events.Event, m *billingv1.MoneyChanged) error {
	if m.GetSubscriptionId() == "" {
		return nil
	}
	ids, err := moneyIDs(ev, m)
	if err != nil {
		return err
	}
	until, err := eventTime(ev, "paidUntil", m.GetPaidUntil())
	if err != nil {
		return err
	}
	c := domain.SubscriptionChange{
		State: domain.Subscription{
			ID: domain.SubscriptionItemID(ids.app, m.GetSubscriptionId()), AppID: ids.app, SubscriptionID: m.GetSubscriptionId(),
			TenantID: ids.tenant, UserID: ids.user, PriceID: m.GetPriceId(), CustomerID: m.GetCustomerId(), Test: m.GetTest(),
			Paid: m.GetPaymentFailedCount() == 0, Until: until, Revision: m.GetRevision(),
		},
		Ended: ev.Type == billingv1.EventSubscriptionEnded,
	}
	var facts []domain.Fact
	switch ev.Type {
	case billingv1.EventSubscriptionStarted, billingv1.EventSubscriptionRenewed:
		key := m.GetPaymentId()
		if key == "" {
			key = ids.event
		}
		c.Payment = &domain.SubscriptionPayment{Key: key, At: ids.at}
		if revenue := revenueFact(m, ids, domain.FactRecurring, key); revenue != nil {
			facts = append(facts, *revenue)
		}
		facts = append(facts, domain.Fact{AppID: ids.app, Kind: domain.FactSubscriptionRun, Key: c.State.ID, Day: domain.Day(ids.at)})
	case billingv1.EventSubscriptionEnded:
		facts = append(facts, domain.Fact{AppID: ids.app, Kind: domain.FactSubscriptionEnd, Key: c.State.ID, Day: domain.Day(ids.at)})
	}
	if err := s.store.ApplySubscription(ctx, c); err != nil {
		return err
	}
	for _, f := range facts {
		if err := s.store.RecordFact(ctx, f); err != nil {
			return err
		}
	}
	return nil
}

// moneyRefs are a money event's ids in canonical form and the time it recorded.
type moneyRefs struct {
	event, app, tenant, user string
	at                       time.Time
}

// moneyIDs reads a money event's refs; without an at of its own, the event's time stands in.
func moneyIDs(ev events.Event, m *billingv1.MoneyChanged) (ids moneyRefs, err error) {
	if ids.at, err = eventTime(ev, "at", m.GetAt()); err != nil {
		return ids, err
	}
	if ids.at.IsZero() {
		ids.at = ev.Time.UTC().Truncate(time.Microsecond)
	}
	if ids.event, err = canonicalID(ev, "id", ev.ID); err != nil {
		return ids, err
	}
	if ids.app, err = eventApp(ev, m.GetAppId()); err != nil {
		return ids, err
	}
	if ids.tenant, err = canonicalID(ev, "tenantId", m.GetTenantId()); err != nil {
		return ids, err
	}
	if m.GetUserId() != "" {
		if ids.user, err = canonicalID(ev, "userId", m.GetUserId()); err != nil {
			return ids, err
		}
	}
	return ids, nil
}

// eventTime reads an RFC 3339 time of a payload, to the microsecond like every stored time; ""
// is the zero time.
func eventTime(ev events.Event, field, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, malformed(ev, "has a "+field+" that is not RFC 3339")
	}
	return t.UTC().Truncate(time.Microsecond), nil
}

// signedIn records the sign-in and refreshes the user's snapshot from the state it carries.
func (s *Service) signedIn(ctx context.Context, ev events.Event, m *identityv1.UserSignedIn, asOf time.Time) error {
	appID, userID, tenantRef, err := userIDs(ev, m.GetAppId(), m.GetUserId(), m.GetTenantRef())
	if err != nil {
		return err
	}
	id, err := canonicalID(ev, "id", ev.ID) // the bus accepts any UUID spelling; stores key on one
	if err != nil {
		return err
	}
	at := asOf // identity stamps the event when the sign-in happens; "at" is the precise time when present
	if m.GetAt() != "" {
		if at, err = eventTime(ev, "at", m.GetAt()); err != nil {
			return err
		}
	}
	signIn := domain.SignIn{ID: id, AppID: appID, UserID: userID, TenantRef: tenantRef, At: at, IP: m.GetIp()}
	if err := s.store.RecordSignIn(ctx, signIn); err != nil {
		return fmt.Errorf("record sign-in %s: %w", ev.ID, err)
	}
	if m.GetUser() == nil {
		return nil // the sign-in is what counts; the snapshot stays as the last event that carried one left it
	}
	return s.store.PutUser(ctx, UserSnapshot{
		AppID: appID, UserID: userID, TenantRef: tenantRef, AsOf: asOf, User: m.GetUser(),
	})
}

// userIDs canonicalises the ids every user event carries; the tenant reference may be empty.
func userIDs(ev events.Event, appID, userID, tenantRef string) (app, user, tenant string, err error) {
	if app, err = eventApp(ev, appID); err != nil {
		return "", "", "", err
	}
	if user, err = canonicalID(ev, "userId", userID); err != nil {
		return "", "", "", err
	}
	if tenantRef != "" {
		if tenant, err = canonicalID(ev, "tenantRef", tenantRef); err != nil {
			return "", "", "", err
		}
	}
	return app, user, tenant, nil
}

// eventApp is the payload's app id, or the envelope's when the payload leaves it out.
func eventApp(ev events.Event, payloadApp string) (string, error) {
	if payloadApp == "" {
		payloadApp = ev.AppID
	}
	return canonicalID(ev, "appId", payloadApp)
}

func canonicalID(ev events.Event, field, s string) (string, error) {
	id, err := uuid.Parse(s)
	if err != nil {
		return "", malformed(ev, "has a "+field+" that is not a UUID")
	}
	return id.String(), nil
}

// payloadOf is the payload as the message its type declares. events.Handle decodes exactly that
// message, so another one is an event handed over some other way, which cannot apply.
func payloadOf[T proto.Message](ev events.Event, payload proto.Message) (T, error) {
	m, ok := payload.(T)
	if !ok {
		return m, malformed(ev, fmt.Sprintf("carries a %T payload", payload))
	}
	return m, nil
}

func malformed(ev events.Event, reason string) error {
	return fmt.Errorf("%w: %s %s %s", ErrMalformed, ev.Type, ev.ID, reason)
}
