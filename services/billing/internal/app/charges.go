package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// Route 13 charges the tenant's default payment method without the payer present: an invoice of
// price × quantity paid now, or a subscription the provider charges each period. Each request is
// a charge of its own (Berth's record, stored open before the provider is asked); every provider
// call's idempotency key names the charge and its step, so a retry inside the request repeats
// none, and the effect commits with the charge's final status, once. A payment the provider
// settles later (a bank debit) stays open until its invoice.paid event.

var (
	errDeclined        = fault.Invalid("", "The tenant's default payment method was declined")
	errHasSubscription = fault.Precondition("The tenant has a subscription already; change its plan instead")
)

// CreateInvoice is route 13. It answers the provider's payment-intent object (the invoice itself
// when nothing was left to pay).
func (s *Service) CreateInvoice(ctx context.Context, callerApp, tenantID string, req domain.InvoiceRequest) (json.RawMessage, error) {
	if err := req.Validate(); err != nil {
		return nil, err
	}
	t, err := s.admitPspx(ctx, callerApp, TenantUser{TenantID: tenantID, BodyTenantID: req.TenantID, UserID: req.UserID, Test: req.Test})
	if err != nil {
		return nil, err
	}
	st := t.acct.State
	if req.Mode == domain.ModeSubscription && st.PspxSubscriptionID != "" {
		return nil, errHasSubscription
	}
	cust, found, err := s.pspxCustomer(ctx, t)
	if err != nil {
		return nil, err
	}
	if !found || st.PspxDefaultPaymentMethodID == "" {
		return nil, errNoDefaultMethod
	}
	price, err := s.pspxLine(ctx, t, req.Price, req.TaxRate)
	if err != nil {
		return nil, err
	}
	kind := domain.ChargeInvoice
	switch {
	case req.Mode == domain.ModeSubscription && price.Type != "recurring":
		return nil, fault.InvalidField("price", "must be a recurring price for a subscription")
	case req.Mode == domain.ModeSubscription:
		kind = domain.ChargeSubscription
	case price.Type != "one_time":
		return nil, fault.InvalidField("price", "must be a one-time price for a payment")
	}
	now := s.now()
	c := domain.Charge{ID: s.newID(), AppID: callerApp, TenantID: t.tenant.ID, ConnectionID: t.conn.ID, Test: t.test, Kind: kind,
		CustomerID: cust.ID, UserID: canonical(req.UserID), Price: req.Price, TaxRate: req.TaxRate, Quantity: req.Quantity, Status: domain.ChargeOpen, CreatedAt: now, UpdatedAt: now}
	if err := s.store.CreateCharge(ctx, c); err != nil {
		return nil, err
	}
	if kind == domain.ChargeSubscription {
		// A racing request's subscription charge may have completed between the check above and
		// this charge's creation (its account change commits with its charge's close): look again.
		if acct, err := s.store.Account(ctx, callerApp, t.tenant.ID); err != nil || acct.State.PspxSubscriptionID != "" {
			if err == nil {
				err = errHasSubscription
			}
			return nil, errors.Join(err, s.settleCharge(ctx, c.ID, domain.ChargeFailed, "", domain.Payment{}, "", nil))
		}
		return s.chargeSubscription(ctx, t, c)
	}
	inv, err := s.chargeInvoice(ctx, t, c, st.PspxDefaultPaymentMethodID, PspxInvoiceItemInput{Price: c.Price, Quantity: c.Quantity}, req.Footer)
	if err != nil {
		return nil, err
	}
	if inv.Status == "paid" {
		validThru, err := s.oneTimeValidThru(ctx, c.AppID, now)
		if err != nil {
			return nil, err
		}
		err = s.settleCharge(ctx, c.ID, domain.ChargeCompleted, inv.ID, invoicePaid(inv), "charge.invoice", func(st *domain.State) {
			st.UnitsBought(c.CustomerID, "", "", c.Quantity, validThru, c.Test)
		})
		if err != nil {
			return nil, err
		}
	}
	return s.paymentIntentOf(ctx, t.key, inv)
}

// pspxLine reads a price (and tax rate) at the provider, checking both are active.
func (s *Service) pspxLine(ctx context.Context, t pspxTenant, priceID, taxRateID string) (PspxPrice, error) {
	price, err := s.prices.price(ctx, t.conn.ID, t.key, priceID, s.pspx)
	if err != nil {
		return PspxPrice{}, err
	}
	if !price.Active {
		return PspxPrice{}, fault.InvalidField("price", "is not active at the provider")
	}
	if taxRateID != "" {
		rate, err := s.prices.taxRate(ctx, t.conn.ID, t.key, taxRateID, s.pspx)
		if err != nil {
			return PspxPrice{}, err
		}
		if !rate.Active {
			return PspxPrice{}, fault.InvalidField("taxRate", "is not active at the provider")
		}
	}
	return price, nil
}

// chargeInvoice issues a one-line invoice of the charge and pays it with method, the tenant's
// default payment method. A declined charge voids the invoice and fails the charge (the caller hears the
// provider's reason); a payment still processing leaves the charge open with its invoice noted.
func (s *Service) chargeInvoice(ctx context.Context, t pspxTenant, c domain.Charge, method string, line PspxInvoiceItemInput, footer string) (PspxInvoice, error) {
	meta := tagged(s.customerMetadata(c.AppID, c.TenantID), metaCharge, c.ID)
	step := func(name string) string { return "charge-" + c.ID + "-" + name }
	inv, err := s.pspx.CreateInvoice(ctx, t.key, step("invoice"), PspxInvoiceInput{Customer: c.CustomerID, Footer: footer,
		DefaultPaymentMethod: method, Metadata: meta, PendingItemsBehavior: "exclude"})
	if err != nil {
		return PspxInvoice{}, providerFault(err, "create pspx invoice")
	}
	line.Customer, line.TaxRate, line.Invoice, line.Metadata = c.CustomerID, c.TaxRate, inv.ID, meta
	if err := s.pspx.CreateInvoiceItem(ctx, t.key, step("item"), line); err != nil {
		return PspxInvoice{}, providerFault(err, "create pspx invoice item")
	}
	if inv, err = s.pspx.FinalizeInvoice(ctx, t.key, step("finalize"), inv.ID); err != nil {
		return PspxInvoice{}, providerFault(err, "finalize pspx invoice")
	}
	if inv.Status == "open" {
		if _, err := s.pspx.PayInvoice(ctx, t.key, step("pay"), inv.ID, method); err != nil {
			return PspxInvoice{}, s.declined(ctx, t, c, inv.ID, err)
		}
	}
	// The invoice as it is now, not as a replayed answer to the pay call had it.
	if inv, err = s.pspx.Invoice(ctx, t.key, inv.ID); err != nil {
		return PspxInvoice{}, providerFault(err, "fetch pspx invoice")
	}
	if inv.Status == "open" {
		if err := s.settleCharge(ctx, c.ID, domain.ChargeOpen, inv.ID, domain.Payment{}, "", nil); err != nil {
			return PspxInvoice{}, err
		}
	}
	return inv, nil
}

// declined handles a failed pay call: a card the provider declined voids the invoice, so it can
// never be paid later, and fails the charge; any other failure leaves both for a retry.
func (s *Service) declined(ctx context.Context, t pspxTenant, c domain.Charge, invoiceID string, payErr error) error {
	fail := providerFault(payErr, "pay pspx invoice")
	if fault.Is(fail, fault.KindInternal) {
		return fail
	}
	if _, err := s.pspx.VoidInvoice(ctx, t.key, "charge-"+c.ID+"-void", invoiceID); err != nil {
		return providerFault(err, "void declined pspx invoice")
	}
	if err := s.settleCharge(ctx, c.ID, domain.ChargeFailed, invoiceID, domain.Payment{}, "", nil); err != nil {
		return err
	}
	return fail
}

// chargeSubscription creates the subscription, which the provider charges at once and then each
// period. Active, it is the tenant's subscription; incomplete, its first charge was declined and
// the provider lets it expire.
func (s *Service) chargeSubscription(ctx context.Context, t pspxTenant, c domain.Charge) (json.RawMessage, error) {
	meta := tagged(s.customerMetadata(c.AppID, c.TenantID), metaCharge, c.ID)
	sub, err := s.pspx.CreateSubscription(ctx, t.key, "charge-"+c.ID+"-subscription", PspxSubscriptionInput{Customer: c.CustomerID,
		Price: c.Price, Quantity: c.Quantity, TaxRate: c.TaxRate, DefaultPaymentMethod: t.acct.State.PspxDefaultPaymentMethodID, Metadata: meta})
	if err != nil {
		return nil, providerFault(err, "create pspx subscription")
	}
	inv, err := s.pspx.Invoice(ctx, t.key, sub.LatestInvoice)
	if err != nil {
		return nil, providerFault(err, "fetch pspx invoice")
	}
	switch sub.Status {
	case "active", "trialing":
		err = s.settleCharge(ctx, c.ID, domain.ChargeCompleted, inv.ID, invoicePaid(inv), "charge.subscription", func(st *domain.State) {
			st.Subscribed(domain.Subscription{CustomerID: c.CustomerID, ID: sub.ID, PriceID: sub.Price, ProductID: sub.Product,
				Quantity: sub.Quantity, DefaultMethodID: sub.DefaultPayment, PaidUntil: sub.CurrentPeriodEnd, Test: c.Test})
		})
	default:
		if err = s.settleCharge(ctx, c.ID, domain.ChargeFailed, inv.ID, domain.Payment{}, "", nil); err == nil {
			err = errDeclined
		}
	}
	if err != nil {
		return nil, err
	}
	return s.paymentIntentOf(ctx, t.key, inv)
}

// paymentIntentOf is route 13's answer: the invoice's payment intent as the provider sends it,
// or the invoice when it needed no payment.
func (s *Service) paymentIntentOf(ctx context.Context, key string, inv PspxInvoice) (json.RawMessage, error) {
	if inv.PaymentIntent == "" {
		return inv.Raw, nil
	}
	pi, err := s.pspx.PaymentIntent(ctx, key, inv.PaymentIntent)
	if err != nil {
		return nil, providerFault(err, "fetch pspx payment intent")
	}
	return pi, nil
}

// settleCharge moves an open charge to status with its invoice noted and, when apply is set,
// applies that effect to the tenant's state in the same transaction; paid is what the invoice
// collected (invoicePaid), for the money events. A settled charge is left as it is, so the route
// and the provider's event (whichever comes second) apply nothing twice.
func (s *Service) settleCharge(ctx context.Context, id, status, invoiceID string, paid domain.Payment, reason string, apply func(*domain.State)) error {
	now := s.now()
	changed := false
	_, acct, err := s.store.SettleCharge(ctx, id, func(c *domain.Charge, a *domain.Account) ([]events.Event, error) {
		if c.Settled() {
			return nil, nil
		}
		c.Status, c.InvoiceID, c.UpdatedAt = status, invoiceID, now
		if apply == nil {
			return nil, nil
		}
		changed = true
		return changeState(a, now, reason, domain.Payment{ID: invoiceID, UserID: c.UserID, PriceID: c.Price,
			Amount: paid.Amount, Currency: paid.Currency}, apply)
	})
	if err != nil {
		return fmt.Errorf("settle charge %s: %w", id, err)
	}
	if changed {
		return s.publish(ctx, acct)
	}
	return nil
}

// invoicePaid is what a paid pspx invoice collected, for the money event that records it.
func invoicePaid(inv PspxInvoice) domain.Payment {
	return domain.Payment{Amount: inv.AmountPaid, Currency: inv.Currency}
}
