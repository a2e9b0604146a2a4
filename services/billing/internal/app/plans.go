package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// Route 19 changes a running subscription's plan (price × quantity), in one of two ways:
//
//   - A downgrade (or the same amount) takes effect at the end of the paid period: the provider's
//     subscription gets the new item without prorations, so its next renewal invoice bills the
//     new plan, and the tenant keeps the plan it paid for until then.
//   - An upgrade is paid controlled: Berth invoices the difference for the rest of the period on
//     the default payment method and changes the plan only once that invoice is paid (now, or at
//     its invoice.paid event). Declined, voided or uncollectible, the old plan stays.
//
// Plans compare by what one period costs. Both prices must bill in the subscription's currency
// and interval: the provider restarts the period on an interval change, which would make the
// "end of the period" of a downgrade now.

// ChangeSubscription is route 19.
func (s *Service) ChangeSubscription(ctx context.Context, callerApp, tenantID string, req domain.PlanRequest) error {
	if err := req.Validate(); err != nil {
		return err
	}
	err := s.changeSubscription(ctx, callerApp, tenantID, req)
	if errors.Is(err, errPlanMoved) {
		// A racing upgrade settled while this request priced its own against the old plan: decide
		// again from the plan the tenant has now (the same request is then usually a no-op).
		err = s.changeSubscription(ctx, callerApp, tenantID, req)
	}
	return err
}

// errPlanMoved says the account's plan changed between a request's read and its upgrade charge.
var errPlanMoved = fault.Precondition("The subscription's plan changed while this change was prepared; send it again")

func (s *Service) changeSubscription(ctx context.Context, callerApp, tenantID string, req domain.PlanRequest) error {
	t, err := s.admitPspx(ctx, callerApp, TenantUser{TenantID: tenantID, BodyTenantID: req.TenantID, UserID: req.UserID, Test: req.Test})
	if err != nil {
		return err
	}
	st := t.acct.State
	switch {
	case st.PspxSubscriptionID == "" || st.Mode != domain.ModeSubscription:
		return errNoSubscription
	case st.PspxSubscriptionCancelAtPeriodEnd:
		return fault.Precondition("The subscription ends at the end of its period and cannot change its plan")
	}
	sub, err := s.pspx.Subscription(ctx, t.key, st.PspxSubscriptionID)
	if err != nil {
		return providerFault(err, "fetch pspx subscription")
	}
	if sub.Status != "active" && sub.Status != "trialing" && sub.Status != "past_due" {
		return fault.Precondition("The subscription is not running")
	}
	next, err := s.pspxLine(ctx, t, req.Price, req.TaxRate)
	if err != nil {
		return err
	}
	paid, err := s.prices.price(ctx, t.conn.ID, t.key, st.PspxPriceID, s.pspx)
	if err != nil {
		return err
	}
	if next.Type != "recurring" || next.Currency != paid.Currency || next.Interval != paid.Interval || max(next.IntervalCount, 1) != max(paid.IntervalCount, 1) {
		return fault.InvalidField("price", "must be a recurring price in the subscription's currency and billing interval")
	}
	paidQuantity := st.SubscriptionQuantity
	if paidQuantity == 0 {
		paidQuantity = sub.Quantity
	}
	from, to := domain.Plan{UnitAmount: paid.UnitAmount, Quantity: paidQuantity}, domain.Plan{UnitAmount: next.UnitAmount, Quantity: req.Quantity}

	open, found, err := s.openUpgrade(ctx, sub.ID, req)
	if err != nil {
		return err
	}
	if found {
		return s.upgrade(ctx, t, open, sub, next.Currency) // the same request again: carry on with it
	}
	if !from.Upgrades(to) {
		if sub.Price == req.Price && sub.Quantity == req.Quantity && req.TaxRate == "" {
			return nil // already what the next period bills
		}
		_, err := s.pspx.UpdateSubscription(ctx, t.key, "plan-"+s.newID(), sub.ID, PspxSubscriptionUpdate{ItemID: sub.ItemID,
			Price: req.Price, Quantity: req.Quantity, TaxRate: req.TaxRate, ProrationBehavior: "none"})
		if err != nil {
			return providerFault(err, "schedule pspx plan change")
		}
		return nil
	}
	now := s.now()
	c := domain.Charge{ID: s.newID(), AppID: callerApp, TenantID: t.tenant.ID, ConnectionID: t.conn.ID, Test: t.test,
		Kind: domain.ChargeUpgrade, CustomerID: sub.Customer, Price: req.Price, TaxRate: req.TaxRate, Quantity: req.Quantity,
		FromPrice: st.PspxPriceID, FromQuantity: paidQuantity, SubscriptionID: sub.ID, Status: domain.ChargeOpen, CreatedAt: now, UpdatedAt: now,
		// Fixed now: a retry carries on with the same invoice line, whenever it runs.
		Amount: domain.UpgradeCharge(from, to, sub.CurrentPeriodStart, sub.CurrentPeriodEnd, now)}
	if err := s.store.CreateCharge(ctx, c); errors.Is(err, domain.ErrChargePending) {
		// A request racing this one opened an upgrade first: carry on with it if it is this one.
		open, found, err := s.openUpgrade(ctx, sub.ID, req)
		if err != nil {
			return err
		}
		if !found { // settled meanwhile: this request may start the next one
			return domain.ErrChargePending
		}
		c = open
	} else if err != nil {
		return err
	} else if err := s.samePlan(ctx, callerApp, t.tenant.ID, st); err != nil {
		// No upgrade was open when this one was stored, so a racing one had settled: if it
		// changed the plan, this charge was priced against the old one and must not be invoiced.
		return errors.Join(err, s.settleCharge(ctx, c.ID, domain.ChargeFailed, "", domain.Payment{}, "", nil))
	}
	return s.upgrade(ctx, t, c, sub, next.Currency)
}

// samePlan is nil when the tenant's account still has the plan st had, else errPlanMoved.
func (s *Service) samePlan(ctx context.Context, appID, tenantID string, st domain.State) error {
	acct, err := s.store.Account(ctx, appID, tenantID)
	if err != nil {
		return err
	}
	if acct.State.PspxPriceID != st.PspxPriceID || acct.State.SubscriptionQuantity != st.SubscriptionQuantity {
		return errPlanMoved
	}
	return nil
}

// openUpgrade finds the subscription's open upgrade: found when it asks for what req asks for
// (a repeated request carries on with it), domain.ErrChargePending when it asks for another plan.
func (s *Service) openUpgrade(ctx context.Context, subscriptionID string, req domain.PlanRequest) (domain.Charge, bool, error) {
	open, err := s.store.OpenUpgrade(ctx, subscriptionID)
	switch {
	case errors.Is(err, domain.ErrChargeNotFound):
		return domain.Charge{}, false, nil
	case err != nil:
		return domain.Charge{}, false, err
	case open.Price != req.Price || open.Quantity != req.Quantity || open.TaxRate != req.TaxRate:
		return domain.Charge{}, false, domain.ErrChargePending
	}
	return open, true, nil
}

// upgrade invoices an upgrade's difference for the rest of the period and applies it once paid.
// With nothing to charge (no time left), it applies at once.
func (s *Service) upgrade(ctx context.Context, t pspxTenant, c domain.Charge, sub PspxSubscription, currency string) error {
	// The subscription's own payment method pays for it; the tenant's default when it has none.
	method := sub.DefaultPayment
	if method == "" {
		method = t.acct.State.PspxDefaultPaymentMethodID
	}
	if method == "" {
		return errNoDefaultMethod
	}
	invoiceID := ""
	if c.Amount > 0 {
		line := PspxInvoiceItemInput{Amount: c.Amount, Currency: currency,
			Description: fmt.Sprintf("Upgrade to %d × %s until %s", c.Quantity, c.Price, sub.CurrentPeriodEnd.UTC().Format("2006-01-02"))}
		inv, err := s.chargeInvoice(ctx, t, c, method, line, "")
		if err != nil {
			return err
		}
		if inv.Status != "paid" {
			return nil // processing: its invoice.paid event applies the upgrade
		}
		invoiceID = inv.ID
	}
	return s.applyUpgrade(ctx, t.key, c, sub.ItemID, invoiceID)
}

// applyUpgrade puts a paid upgrade on the provider's subscription (no prorations: the difference
// is paid) and then on the tenant, completing the charge in the same transaction, once.
func (s *Service) applyUpgrade(ctx context.Context, key string, c domain.Charge, itemID, invoiceID string) error {
	sub, err := s.pspx.UpdateSubscription(ctx, key, "charge-"+c.ID+"-apply", c.SubscriptionID, PspxSubscriptionUpdate{ItemID: itemID,
		Price: c.Price, Quantity: c.Quantity, TaxRate: c.TaxRate, ProrationBehavior: "none"})
	if err != nil {
		return providerFault(err, "apply pspx plan upgrade")
	}
	return s.settleCharge(ctx, c.ID, domain.ChargeCompleted, invoiceID, domain.Payment{}, "plan.upgraded", func(st *domain.State) {
		if st.PspxSubscriptionID == sub.ID {
			st.PlanChanged(sub.Price, sub.Product, sub.Quantity)
		}
	})
}
