package domain

import (
	"time"

	"github.com/google/uuid"
)

// Subscription is a subscription as route 6 lists it: the latest state billing reported of it,
// keyed by the app and the provider's subscription id.
type Subscription struct {
	ID             string // the item id: SubscriptionItemID of the app and the provider's id
	AppID          string
	SubscriptionID string // the provider's (pspx or pspy) subscription id
	TenantID       string
	UserID         string // who paid for it; "" when an API key started the checkout
	PriceID        string
	CustomerID     string
	Test           bool
	Paid           bool // no payment of the tenant has failed since the last successful one
	Cancelled      bool // the subscription has ended (it never runs again)
	Until          time.Time
	Revision       int64 // the billing account revision the state comes from
	EndedRevision  int64 // the account revision that ended it; 0 while it runs
}

// SubscriptionChange is what one billing event says about a subscription: its state at the
// event's account revision, whether it ended, and the payment that paid it, if any.
type SubscriptionChange struct {
	State Subscription
	// Ended marks the event that ended the subscription. Such an event describes the ended
	// subscription's ids only; its other fields are the tenant's state after it ended.
	Ended bool
	// Payment is the payment the event records (the first or a renewal), nil for events that record
	// none (a cancellation, a failure, a plan change).
	Payment *SubscriptionPayment
}

// SubscriptionPayment is one payment of a subscription: it puts the subscription in the lists
// of the range holding its day.
type SubscriptionPayment struct {
	Key string // the provider's payment id, or the event's id when the event names none
	At  time.Time
}

// Apply returns s after the change c, whatever order billing's events arrive in: the state of a
// newer account revision replaces that of an older one; the end is sticky, and events recorded
// after it no longer change the subscription (their state is the tenant's, which has moved on);
// the payer, once known, is kept. s is the zero Subscription for one not stored yet.
func (s Subscription) Apply(c SubscriptionChange) Subscription {
	st := c.State
	if s.ID == "" {
		s = Subscription{ID: st.ID, AppID: st.AppID, SubscriptionID: st.SubscriptionID, TenantID: st.TenantID}
	}
	if s.UserID == "" {
		s.UserID = st.UserID
	}
	if c.Ended {
		s.Cancelled = true
		if s.EndedRevision == 0 || st.Revision < s.EndedRevision {
			s.EndedRevision = st.Revision
		}
		if s.Revision == 0 { // nothing else is known of it yet: keep the ids the end named
			s.PriceID, s.CustomerID, s.Test = st.PriceID, st.CustomerID, st.Test
		}
		return s
	}
	if st.Revision <= s.Revision || (s.EndedRevision != 0 && st.Revision > s.EndedRevision) {
		return s
	}
	s.PriceID, s.CustomerID, s.Test, s.Paid, s.Until, s.Revision = st.PriceID, st.CustomerID, st.Test, st.Paid, st.Until, st.Revision
	return s
}

// OneTimePayment is a payment for units, as route 7 lists it.
type OneTimePayment struct {
	ID          string // the id of the billing.payment.one_time event, so a redelivery maps to it
	AppID       string
	TenantID    string
	UserID      string // who paid; "" when an API key started the checkout
	PaymentID   string // the provider's payment id
	PriceID     string
	CustomerID  string
	Test        bool
	Units       int64
	UnitsBefore int64
	At          time.Time
}

// TenantChange is a day on which a tenant was created or changed: route 9 lists a tenant for every
// range holding one of its days.
type TenantChange struct {
	AppID    string
	TenantID string
	Day      time.Time // midnight UTC
}

// itemNamespace scopes the item ids analytics derives, so they cannot collide with ids minted
// elsewhere.
var itemNamespace = uuid.MustParse("5b0e3f43-8f3a-4a57-9d3e-6a1f2c8b7d10")

// SubscriptionItemID is the id of a subscription's item: derived from the app and the provider's
// subscription id rather than drawn at random, so a rebuild of the read model from the events
// yields the same ids.
func SubscriptionItemID(appID, subscriptionID string) string {
	return uuid.NewSHA1(itemNamespace, []byte("subscription\x00"+appID+"\x00"+subscriptionID)).String()
}

// Day is the UTC day holding t, as midnight UTC.
func Day(t time.Time) time.Time { return utcDay(t) }
