package app

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// The webhook-ingest context verifies a provider's call and hands it here (ProviderEventService).
// Every effect below refetches what it acts on from the provider, so an event that arrives late,
// twice or out of order applies the provider's current state, never the state the event carried;
// and every effect commits with the record that makes a second application a no-op (a checkout
// session's or charge's status, or a state comparison such as State.Renews).

// CustomerConnection names the connection behind a pspx customer, with the webhook signing
// secrets of the event's mode, newest first.
type CustomerConnection struct {
	ConnectionID   string
	AppID          string
	TenantID       string
	WebhookSecrets []string
}

// ResolvePspxCustomer finds the connection of a customer Berth created in that mode.
func (s *Service) ResolvePspxCustomer(ctx context.Context, customerID string, live bool) (CustomerConnection, error) {
	c, err := s.store.CustomerByProviderID(ctx, customerID)
	if err == nil && c.Test == live {
		err = domain.ErrCustomerNotFound
	}
	if err != nil {
		return CustomerConnection{}, err
	}
	conn, err := s.store.Connection(ctx, c.ConnectionID)
	if err != nil {
		return CustomerConnection{}, err
	}
	secrets := slices.Clone(conn.WebhookSecrets)
	slices.SortFunc(secrets, func(a, b domain.WebhookSecret) int { return b.CreatedAt.Compare(a.CreatedAt) })
	out := CustomerConnection{ConnectionID: conn.ID, AppID: c.AppID, TenantID: c.TenantID}
	for _, w := range secrets {
		if w.Test == live {
			continue
		}
		secret, err := s.box.Open(w.Sealed, conn.ID+"/webhook/"+w.ID)
		if err != nil {
			return CustomerConnection{}, fault.Internal(fmt.Errorf("open webhook secret %s of connection %s: %w", w.ID, conn.ID, err))
		}
		out.WebhookSecrets = append(out.WebhookSecrets, string(secret))
	}
	return out, nil
}

// Applied says what a provider call did: Ignored when it names nothing of Berth's, Status a pspy
// payment's status when not paid, Effect what changed ("" when nothing did), Rejected why it is
// refused for good ("" unless it is).
type Applied struct {
	Ignored  bool
	Status   string
	Effect   string
	Rejected string
}

// A provider delivers an event again until it is answered 2xx, for days, and may then disable
// the endpoint. So an effect's failure says whether delivering again can help: an error may pass
// (the provider or the database unreachable, a provider 5xx or 429, Berth's key refused with 401,
// a request the provider refused for its content) and is answered 500; a refusal for good is
// Applied.Rejected, which the ingest records and answers 200. A refusal for good is the provider
// refusing, on any call the effect makes, the object itself (ProviderError.RefusesObject: it does
// not exist for the connection's key, or the key may not see it), or an event that names no
// object at all. One refusal is not for good: a connection's key that belongs to another account
// (an operator's mistake, corrected with a rotation) sees none of the connection's objects, so
// a pspx refusal counts only once the key is seen to know the event's customer (pspxRefusal).

// refusalOf is the provider's refusal of an object in err's chain, nil when there is none.
func refusalOf(err error) *ProviderError {
	var pe *ProviderError
	if errors.As(err, &pe) && pe.RefusesObject() {
		return pe
	}
	return nil
}

// rejection is the answer to a refusal for good.
func rejection(pe *ProviderError) Applied {
	return Applied{Rejected: fmt.Sprintf("the provider refuses the object for good: %d %s %s", pe.Status, pe.Code, pe.UserMessage)}
}

// pspxObject is what billing reads of an event's data.object to find its own record.
type pspxObject struct {
	ID       string            `json:"id"`
	Metadata map[string]string `json:"metadata"`
}

// ApplyPspxEvent applies a verified pspx event of the connection. The connection's key is read
// once: the effect's calls and the check whether the provider's refusal is for good must use the
// same key, or an operator's rotation between the two would judge one key's refusal by another
// key's view and reject for good an event the next delivery could apply.
func (s *Service) ApplyPspxEvent(ctx context.Context, connectionID string, live bool, typ string, object []byte) (Applied, error) {
	var obj pspxObject
	if err := json.Unmarshal(object, &obj); err != nil || obj.ID == "" {
		return Applied{Rejected: "data.object is not a provider object"}, nil
	}
	conn, key, err := s.connectionKey(ctx, connectionID, !live)
	if err != nil {
		return Applied{}, err
	}
	a, err := s.applyPspxEvent(ctx, conn, key, typ, obj)
	if pe := refusalOf(err); pe != nil {
		return s.pspxRefusal(ctx, conn.ID, key, object, pe, err)
	}
	return a, err
}

// pspxRefusal decides whether the provider's refusal of an event's object is for good: it is
// when key, the one that was refused, sees the event's customer, which Berth created on the
// connection (the webhook ingest found the connection by it). A key that does not see it belongs
// to another account: the event fails (500) and the provider's next delivery after the
// operator's rotation applies it.
func (s *Service) pspxRefusal(ctx context.Context, connectionID, key string, object []byte, pe *ProviderError, cause error) (Applied, error) {
	var obj struct {
		ID       string `json:"id"`
		Object   string `json:"object"`
		Customer string `json:"customer"`
	}
	_ = json.Unmarshal(object, &obj) // the effect parsed it already
	customer := obj.Customer
	if obj.Object == "customer" {
		customer = obj.ID
	}
	if customer == "" {
		return rejection(pe), nil
	}
	if _, err := s.pspx.Customer(ctx, key, customer); err != nil {
		if refusalOf(err) != nil {
			return Applied{}, fault.Internal(fmt.Errorf("the key of connection %s does not see its customer %s (a key of another account?): %w", connectionID, customer, cause))
		}
		return Applied{}, providerFault(err, "fetch pspx customer")
	}
	return rejection(pe), nil
}

func (s *Service) applyPspxEvent(ctx context.Context, conn domain.Connection, key, typ string, obj pspxObject) (Applied, error) {
	switch {
	case strings.HasPrefix(typ, "checkout.session."):
		return s.pspxCheckoutEvent(ctx, conn, obj)
	case typ == "invoice.created":
		return s.pspxInvoiceCreated(ctx, conn, key, obj)
	case typ == "invoice.paid":
		return s.pspxInvoicePaid(ctx, conn, key, obj)
	case typ == "invoice.voided" || typ == "invoice.marked_uncollectible":
		return s.pspxInvoiceFailed(ctx, conn, key, obj)
	case typ == "customer.subscription.deleted":
		return s.pspxSubscriptionDeleted(ctx, conn, key, obj)
	}
	return Applied{}, nil // a type Berth has no effect for
}

// pspxCheckoutEvent settles Berth's checkout session of a completed, asynchronously paid or
// failed, or expired provider session, as the return page would.
func (s *Service) pspxCheckoutEvent(ctx context.Context, conn domain.Connection, obj pspxObject) (Applied, error) {
	cs, found, err := s.ownCheckout(ctx, conn, obj.Metadata[metaCheckout], obj.ID)
	if err != nil || !found {
		return Applied{Ignored: !found}, err
	}
	before := cs.Status
	if cs, err = s.Settle(ctx, cs); err != nil {
		return Applied{}, err
	}
	return Applied{Effect: changedTo("checkout", before, cs.Status)}, nil
}

// ownCheckout finds Berth's checkout session a provider object names: the metadata's id, on this
// connection, for that provider object. Anything else is not Berth's (found false).
func (s *Service) ownCheckout(ctx context.Context, conn domain.Connection, id, providerID string) (domain.CheckoutSession, bool, error) {
	if !isUUID(id) {
		return domain.CheckoutSession{}, false, nil
	}
	cs, err := s.store.Checkout(ctx, id)
	if errors.Is(err, domain.ErrCheckoutNotFound) || (err == nil && (cs.ConnectionID != conn.ID || cs.ProviderSessionID != providerID)) {
		return domain.CheckoutSession{}, false, nil
	}
	return cs, err == nil, err
}

// changedTo names a status change for the ingest record, "" when there was none.
func changedTo(what, before, after string) string {
	if before == after {
		return ""
	}
	return what + "." + after
}

// pspxInvoicePaid applies a paid invoice: Berth's own charge (route 13, an upgrade) completes, or
// a subscription's renewal extends the tenant's paid access.
func (s *Service) pspxInvoicePaid(ctx context.Context, conn domain.Connection, key string, obj pspxObject) (Applied, error) {
	inv, err := s.pspx.Invoice(ctx, key, obj.ID)
	if err != nil {
		return Applied{}, providerFault(err, "fetch pspx invoice")
	}
	if inv.Status != "paid" {
		return Applied{}, nil // not (or no longer) paid: nothing to apply
	}
	if id := inv.Metadata[metaCharge]; id != "" {
		return s.chargePaid(ctx, conn, key, id, inv)
	}
	if inv.Subscription == "" || inv.BillingReason != "subscription_cycle" {
		return Applied{}, nil
	}
	// A renewal invoice is dated by the period that ended; its lines pay for the next one.
	paidUntil := inv.PaysUntil()
	if paidUntil.IsZero() {
		return Applied{}, fault.Internal(fmt.Errorf("pspx renewal invoice %s names no period", inv.ID))
	}
	renewal := domain.Renewal{SubscriptionID: inv.Subscription, InvoiceID: inv.ID}
	return s.onCustomerAccount(ctx, conn, inv.Customer, "subscription.renewed", invoicePaid(inv),
		func(st domain.State) bool { return st.Renews(renewal) },
		func(st *domain.State) { st.Renewed(renewal, paidUntil) })
}

// ownCharge finds Berth's charge an invoice names, on this connection; found is false for another
// connection's charge or none.
func (s *Service) ownCharge(ctx context.Context, conn domain.Connection, id string) (c domain.Charge, found bool, err error) {
	c, err = s.store.Charge(ctx, id)
	if errors.Is(err, domain.ErrChargeNotFound) || (err == nil && c.ConnectionID != conn.ID) {
		return domain.Charge{}, false, nil
	}
	return c, err == nil, err
}

// chargePaid completes Berth's charge whose invoice the provider reports paid (a bank debit that
// settled after route 13 or 19 answered).
func (s *Service) chargePaid(ctx context.Context, conn domain.Connection, key, chargeID string, inv PspxInvoice) (Applied, error) {
	c, found, err := s.ownCharge(ctx, conn, chargeID)
	if err != nil || !found || c.Settled() {
		return Applied{Ignored: !found}, err
	}
	switch c.Kind {
	case domain.ChargeUpgrade:
		sub, err := s.pspx.Subscription(ctx, key, c.SubscriptionID)
		if err != nil {
			return Applied{}, providerFault(err, "fetch pspx subscription")
		}
		err = s.applyUpgrade(ctx, key, c, sub.ItemID, inv.ID)
		return Applied{Effect: "plan.upgraded"}, err
	case domain.ChargeSubscription:
		sub, err := s.pspx.Subscription(ctx, key, inv.Subscription)
		if err != nil {
			return Applied{}, providerFault(err, "fetch pspx subscription")
		}
		err = s.settleCharge(ctx, c.ID, domain.ChargeCompleted, inv.ID, invoicePaid(inv), "charge.subscription", func(st *domain.State) {
			st.Subscribed(domain.Subscription{CustomerID: c.CustomerID, ID: sub.ID, PriceID: sub.Price, ProductID: sub.Product,
				Quantity: sub.Quantity, DefaultMethodID: sub.DefaultPayment, PaidUntil: sub.CurrentPeriodEnd, Test: c.Test})
		})
		return Applied{Effect: "charge.subscription"}, err
	}
	validThru, err := s.oneTimeValidThru(ctx, c.AppID, s.now())
	if err != nil {
		return Applied{}, err
	}
	err = s.settleCharge(ctx, c.ID, domain.ChargeCompleted, inv.ID, invoicePaid(inv), "charge.invoice", func(st *domain.State) {
		st.UnitsBought(c.CustomerID, "", "", c.Quantity, validThru, c.Test)
	})
	return Applied{Effect: "charge.invoice"}, err
}

// pspxInvoiceCreated gives a subscription's draft renewal invoice the app's line descriptions
// while the provider waits for the answer before finalizing it. A line that says it already is
// left alone, so a redelivery changes nothing; a failure answers 500 and the provider retries.
func (s *Service) pspxInvoiceCreated(ctx context.Context, conn domain.Connection, key string, obj pspxObject) (Applied, error) {
	settings, err := s.store.Settings(ctx, conn.AppID)
	if err != nil || settings.RenewalLineDescription == "" {
		return Applied{}, err
	}
	inv, err := s.pspx.Invoice(ctx, key, obj.ID)
	if err != nil {
		return Applied{}, providerFault(err, "fetch pspx invoice")
	}
	if inv.Status != "draft" || inv.BillingReason != "subscription_cycle" {
		return Applied{}, nil // finalized already, or not a renewal
	}
	if _, found, err := s.ownCustomer(ctx, conn, inv.Customer); err != nil || !found {
		return Applied{Ignored: !found}, err
	}
	described := 0
	for _, l := range inv.Lines {
		text := settings.RenewalLine(l.Quantity, l.PeriodStart, l.PeriodEnd)
		if l.Description == text {
			continue
		}
		idem := fmt.Sprintf("line-%s-%s-%x", inv.ID, l.ID, sha256.Sum256([]byte(text)))
		if err := s.pspx.UpdateInvoiceLine(ctx, key, idem, inv.ID, l.ID, text); err != nil {
			return Applied{}, providerFault(err, "describe pspx invoice line")
		}
		described++
	}
	if described == 0 {
		return Applied{}, nil
	}
	return Applied{Effect: "invoice.described"}, nil
}

// pspxInvoiceFailed applies an invoice the provider gave up on (voided, or uncollectible after its
// retries): Berth's own charge fails, so an upgrade's old plan stays; a renewal counts in the
// tenant's payment-failure lifecycle, once per invoice.
func (s *Service) pspxInvoiceFailed(ctx context.Context, conn domain.Connection, key string, obj pspxObject) (Applied, error) {
	inv, err := s.pspx.Invoice(ctx, key, obj.ID)
	if err != nil {
		return Applied{}, providerFault(err, "fetch pspx invoice")
	}
	if inv.Status != "void" && inv.Status != "uncollectible" {
		return Applied{}, nil // paid after all, or still being collected
	}
	if id := inv.Metadata[metaCharge]; id != "" {
		c, found, err := s.ownCharge(ctx, conn, id)
		if err != nil || !found || c.Settled() {
			return Applied{Ignored: !found}, err
		}
		return Applied{Effect: "charge.failed"}, s.settleCharge(ctx, c.ID, domain.ChargeFailed, inv.ID, domain.Payment{}, "", nil)
	}
	if inv.Subscription == "" || inv.BillingReason != "subscription_cycle" {
		return Applied{}, nil
	}
	return s.paymentFailed(ctx, conn, inv.Customer, domain.PaymentFailure{Key: inv.ID, SubscriptionID: inv.Subscription, PaysUntil: inv.PaysUntil(), At: s.now()})
}

// paymentFailed counts a failed renewal of a customer's subscription in the tenant's failure
// lifecycle, freezing the tenant at the app's threshold.
func (s *Service) paymentFailed(ctx context.Context, conn domain.Connection, customerID string, f domain.PaymentFailure) (Applied, error) {
	settings, err := s.store.Settings(ctx, conn.AppID)
	if err != nil {
		return Applied{}, err
	}
	return s.onCustomerAccount(ctx, conn, customerID, "payment.failed", domain.Payment{},
		func(st domain.State) bool { return st.FailureCounts(f) },
		func(st *domain.State) { st.PaymentFailedFor(f, settings.FailedPaymentsToFreeze) })
}

// pspxSubscriptionDeleted ends the tenant's subscription once the provider has ended it.
func (s *Service) pspxSubscriptionDeleted(ctx context.Context, conn domain.Connection, key string, obj pspxObject) (Applied, error) {
	sub, err := s.pspx.Subscription(ctx, key, obj.ID)
	if err != nil {
		return Applied{}, providerFault(err, "fetch pspx subscription")
	}
	if sub.Status != "canceled" && sub.Status != "incomplete_expired" {
		return Applied{}, nil
	}
	return s.onCustomerAccount(ctx, conn, sub.Customer, "subscription.ended", domain.Payment{},
		func(st domain.State) bool { return st.PspxSubscriptionID == sub.ID },
		func(st *domain.State) { st.SubscriptionEnded() })
}

// ownCustomer finds the customer Berth created on this connection; found is false for another
// connection's or none.
func (s *Service) ownCustomer(ctx context.Context, conn domain.Connection, customerID string) (c domain.Customer, found bool, err error) {
	c, err = s.store.CustomerByProviderID(ctx, customerID)
	if errors.Is(err, domain.ErrCustomerNotFound) || (err == nil && c.ConnectionID != conn.ID) {
		return domain.Customer{}, false, nil
	}
	return c, err == nil, err
}

// onCustomerAccount applies an effect to the account of the tenant behind a customer of the
// connection, unless needed says (on the locked account) that it holds already.
func (s *Service) onCustomerAccount(ctx context.Context, conn domain.Connection, customerID, reason string, pay domain.Payment,
	needed func(domain.State) bool, apply func(*domain.State)) (Applied, error) {
	c, found, err := s.ownCustomer(ctx, conn, customerID)
	if err != nil || !found {
		return Applied{Ignored: !found}, err
	}
	changed, err := s.updateAccount(ctx, c.AppID, c.TenantID, reason, pay, needed, apply)
	if err != nil || !changed {
		return Applied{}, err
	}
	return Applied{Effect: reason}, nil
}
