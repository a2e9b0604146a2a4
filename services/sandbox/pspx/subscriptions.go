package pspx

import (
	"fmt"
	"maps"
	"slices"
	"time"
)

// period is a subscription's current period.
func (a *account) period(s *subscription) (start, end time.Time) {
	p := a.prices[s.price]
	return periodEnd(s.anchor, p.interval, p.intervalCount, s.cycle), periodEnd(s.anchor, p.interval, p.intervalCount, s.cycle+1)
}

// gaveUp reports whether the subscription's latest invoice is uncollectible.
func (a *account) gaveUp(s *subscription) bool {
	inv := a.invoices[s.latestInvoice]
	return inv != nil && inv.status == "uncollectible"
}

func (a *account) subsInOrder() []*subscription {
	out := make([]*subscription, 0, len(a.subs))
	for _, s := range a.subs {
		out = append(out, s)
	}
	slices.SortFunc(out, func(x, y *subscription) int { return int(x.seq - y.seq) })
	return out
}

func (c *call) subscription(id string) (*subscription, *apiError) {
	if s := c.a.subs[id]; s != nil {
		return s, nil
	}
	return nil, errNoSuch("subscription", id, "id")
}

// subscriptionLine is the invoice line of a subscription's item for one period.
func (c *call) subscriptionLine(s *subscription, start, end time.Time) *invoiceLine {
	p := c.a.prices[s.price]
	amount := p.unitAmount * s.quantity
	every := p.interval
	if p.intervalCount > 1 {
		every = fmt.Sprintf("%d %ss", p.intervalCount, p.interval)
	}
	return &invoiceLine{
		id: newID("il_", 24), typ: "subscription", price: p.id, taxRate: s.taxRate, quantity: s.quantity, amount: amount,
		tax: tax(amount, c.a.taxRates[s.taxRate]), subscription: s.id, subItem: s.itemID, periodStart: start, periodEnd: end,
		description: fmt.Sprintf("%d × %s (at %s / %s)", s.quantity, c.a.products[p.product].name, formatMoney(p.unitAmount, p.currency), every),
	}
}

// startSubscription creates a subscription and charges its first invoice with m: paid, it is
// active; a bank debit in progress, active too; declined, incomplete.
func (c *call) startSubscription(cu *customer, p *price, quantity int64, rate, defaultPM string, m *paymentMethod, metadata map[string]string) *subscription {
	s := &subscription{
		id: newID("sub_", 24), seq: c.s.nextSeq(), created: c.now, customer: cu.id, status: "incomplete", currency: p.currency,
		itemID: newID("si_", 14), itemCreated: c.now, price: p.id, quantity: quantity, taxRate: rate, anchor: c.now,
		defaultPM: defaultPM, metadata: metadata,
	}
	c.a.subs[s.id] = s
	start, end := c.a.period(s)
	inv := c.subscriptionInvoice(s, &invoice{billingReason: "subscription_create", lines: []*invoiceLine{c.subscriptionLine(s, start, end)}})
	c.emit("customer.subscription.created", c.a.renderSubscription(s), nil)
	c.finalize(inv)
	if inv.status == "open" {
		c.chargeInvoice(inv, m)
	}
	return s
}

func (s *Server) createSubscription(c *call) (any, *apiError) {
	custID := c.p.text("customer")
	items := c.readItems("items", false)
	pmID, hasPM := c.p.str("default_payment_method")
	metadata := applyMetadata(c, nil, "metadata")
	if err := c.p.done(); err != nil {
		return nil, err
	}
	if custID == "" {
		return nil, errMissing("customer")
	}
	cu, err := c.customer(custID, "customer")
	if err != nil {
		return nil, err
	}
	switch len(items) {
	case 0:
		return nil, errMissing("items")
	case 1:
	default:
		return nil, errInvalid("items", "The sandbox supports subscriptions with a single item.")
	}
	p, quantity, rate, err := c.resolve(items[0], true)
	if err != nil {
		return nil, err
	}
	m := c.a.methods[cu.defaultPM]
	if hasPM {
		if m = c.a.methods[pmID]; m == nil {
			return nil, errNoSuch("PaymentMethod", pmID, "default_payment_method")
		}
		if m.customer != cu.id {
			return nil, errInvalid("default_payment_method", "The customer does not have a payment method with the ID %s. The payment method must be attached to the customer.", pmID)
		}
	}
	if m == nil {
		return nil, errInvalid("", "This customer has no attached payment source or default payment method. Please consider adding a default payment method.")
	}
	sub := c.startSubscription(cu, p, quantity, rate, pmID, m, metadata)
	return c.a.renderSubscription(sub), nil
}

func (s *Server) getSubscription(c *call) (any, *apiError) {
	if err := c.p.done(); err != nil {
		return nil, err
	}
	sub, err := c.subscription(c.r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return c.a.renderSubscription(sub), nil
}

// itemChange is what an update asks of the subscription's item.
type itemChange struct {
	price    *price
	quantity int64
	taxRate  string
	rateSet  bool
}

func (s *Server) updateSubscription(c *call) (any, *apiError) {
	sub, err := c.subscription(c.r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	items := c.readItems("items", true)
	behavior, hasBehavior := c.p.str("proration_behavior")
	cancelAtEnd, hasCancel := c.p.boolean("cancel_at_period_end")
	metadata := applyMetadata(c, maps.Clone(sub.metadata), "metadata")
	if err := c.p.done(); err != nil {
		return nil, err
	}
	hasItems := len(items) > 0
	var change itemChange
	if hasItems {
		if change, err = c.resolveItemChange(sub, items); err != nil {
			return nil, err
		}
	}
	if !hasBehavior {
		behavior = "create_prorations"
	}
	if behavior != "none" && behavior != "create_prorations" && behavior != "always_invoice" {
		return nil, errInvalid("proration_behavior", "Invalid proration_behavior: must be one of always_invoice, create_prorations, or none.")
	}
	if (sub.status == "canceled" || sub.status == "incomplete_expired") && (hasItems || hasCancel) {
		return nil, errState("A canceled subscription can only update its cancellation_details and metadata.")
	}
	before := c.a.renderSubscription(sub)
	sub.metadata = metadata
	if hasCancel {
		sub.cancelAtPeriodEnd, sub.canceledAt = cancelAtEnd, time.Time{}
		if cancelAtEnd {
			sub.canceledAt = c.now // the provider dates the request, not the end of the period
		}
	}
	var inv *invoice
	if hasItems {
		inv = c.changeItem(sub, change, behavior)
	}
	c.emit("customer.subscription.updated", c.a.renderSubscription(sub), before)
	if inv != nil {
		c.finalize(inv)
		if inv.status == "open" {
			c.chargeInvoice(inv, c.methodFor(inv))
		}
	}
	return c.a.renderSubscription(sub), nil
}

// resolveItemChange resolves items[0] of an update: the subscription's one item, named by its id.
func (c *call) resolveItemChange(sub *subscription, items []itemParams) (itemChange, *apiError) {
	ch := itemChange{price: c.a.prices[sub.price], quantity: sub.quantity, taxRate: sub.taxRate}
	if len(items) > 1 {
		return ch, errInvalid("items", "The sandbox supports subscriptions with a single item.")
	}
	it := items[0]
	switch {
	case it.id == "":
		return ch, errInvalid(it.path+"[id]", "The sandbox supports subscriptions with a single item: name it with %s[id].", it.path)
	case it.id != sub.itemID:
		return ch, errNoSuch("subscription item", it.id, it.path+"[id]")
	}
	if it.hasPrice {
		p, err := c.priceRef(it.price, it.path+"[price]", true)
		if err != nil {
			return ch, err
		}
		if p.currency != sub.currency {
			return ch, errInvalid(it.path+"[price]", "The price's currency (%s) must match the subscription's currency (%s).", p.currency, sub.currency)
		}
		ch.price = p
	}
	if it.hasQuantity {
		if ch.quantity = it.quantity; ch.quantity < 1 || ch.quantity > maxQuantity {
			return ch, errInvalid(it.path+"[quantity]", "Invalid quantity: must be between 1 and %d.", maxQuantity)
		}
	}
	if it.hasTaxRates {
		rate, err := c.taxRateRef(it.taxRates, it.path+"[tax_rates]")
		if err != nil {
			return ch, err
		}
		ch.taxRate, ch.rateSet = rate, true
	}
	return ch, nil
}

// changeItem applies a new price, quantity or tax rate. With prorations, the unused rest of the
// period is credited and the rest at the new terms charged, as pending invoice items for the
// next invoice, or invoiced now with always_invoice. A new billing interval restarts the
// period now and is invoiced at once. It returns the invoice to finalize and charge, if any.
func (c *call) changeItem(sub *subscription, ch itemChange, behavior string) *invoice {
	old := c.a.prices[sub.price]
	oldAmount, oldRate := old.unitAmount*sub.quantity, sub.taxRate
	start, end := c.a.period(sub)
	sameInterval := ch.price.interval == old.interval && ch.price.intervalCount == old.intervalCount
	if ch.price == old && ch.quantity == sub.quantity && (!ch.rateSet || ch.taxRate == sub.taxRate) {
		return nil
	}
	sub.price, sub.quantity = ch.price.id, ch.quantity
	if ch.rateSet {
		sub.taxRate = ch.taxRate
	}
	newAmount := ch.price.unitAmount * sub.quantity
	active := sub.status == "active" || sub.status == "past_due"
	prorated := behavior != "none" && active && end.After(c.now)
	var items []*invoiceItem
	if prorated {
		left, whole := end.Sub(c.now), end.Sub(start)
		if credit := prorate(oldAmount, left, whole); credit != 0 {
			items = append(items, c.prorationItem(sub, old, oldRate, -credit, "Unused time on", end))
		}
		if sameInterval {
			if charge := prorate(newAmount, left, whole); charge != 0 {
				items = append(items, c.prorationItem(sub, ch.price, sub.taxRate, charge, "Remaining time on", end))
			}
		}
	}
	switch {
	case !sameInterval && active:
		sub.anchor, sub.cycle = c.now, 0
		_, newEnd := c.a.period(sub)
		return c.subscriptionInvoice(sub, &invoice{billingReason: "subscription_update", lines: []*invoiceLine{c.subscriptionLine(sub, c.now, newEnd)}})
	case behavior == "always_invoice" && len(items) > 0:
		return c.subscriptionInvoice(sub, &invoice{billingReason: "subscription_update"})
	}
	return nil
}

// prorationItem records a pending proration for the subscription's next invoice.
func (c *call) prorationItem(sub *subscription, p *price, rate string, amount int64, what string, end time.Time) *invoiceItem {
	it := &invoiceItem{
		id: newID("ii_", 24), seq: c.s.nextSeq(), customer: sub.customer, price: p.id, taxRate: rate, subscription: sub.id, currency: p.currency,
		description: fmt.Sprintf("%s %s after %s", what, c.a.products[p.product].name, c.now.Format("02 Jan 2006")),
		created:     c.now, quantity: 1, amount: amount, proration: true, periodStart: c.now, periodEnd: end,
	}
	c.a.items[it.id] = it
	c.emit("invoiceitem.created", c.a.renderItem(it), nil)
	return it
}

func (c *call) cancelSubscription(s *subscription) {
	s.status, s.endedAt = "canceled", c.now
	if s.canceledAt.IsZero() {
		s.canceledAt = c.now
	}
	c.emit("customer.subscription.deleted", c.a.renderSubscription(s), nil)
}

// renew ends a subscription's period: canceled when asked to at the period's end, else
// invoiced for the next period as a draft, which the clock finalizes and charges when its draft
// window closes (finalizeRenewal).
func (c *call) renew(s *subscription) {
	if s.cancelAtPeriodEnd {
		c.cancelSubscription(s)
		return
	}
	start, end := c.a.period(s)
	p := c.a.prices[s.price]
	next := periodEnd(s.anchor, p.interval, p.intervalCount, s.cycle+2)
	// The provider dates a renewal invoice by the period that ended; its line is the next one.
	c.subscriptionInvoice(s, &invoice{
		billingReason: "subscription_cycle", lines: []*invoiceLine{c.subscriptionLine(s, end, next)},
		periodStart: start, periodEnd: end, paysStart: end, autoAdvance: true,
	})
}

// finalizeRenewal ends a renewal's draft window: the invoice is finalized and charged.
func (c *call) finalizeRenewal(inv *invoice) {
	c.finalize(inv)
	if inv.status == "open" {
		c.chargeInvoice(inv, c.methodFor(inv))
	}
}

// expireIncomplete ends a subscription whose first invoice went unpaid for 23 hours.
func (c *call) expireIncomplete(s *subscription) {
	if inv := c.a.invoices[s.latestInvoice]; inv != nil && inv.status == "open" {
		c.voidInvoice(inv)
	}
	s.status, s.endedAt = "incomplete_expired", c.now
	c.emit("customer.subscription.deleted", c.a.renderSubscription(s), nil)
}
