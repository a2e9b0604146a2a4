package pspx

import "slices"

// newIntent creates a payment intent waiting for its payment method.
func (c *call) newIntent(amount int64, currency, customerID, pmType, invoiceID string, metadata map[string]string) *paymentIntent {
	pi := &paymentIntent{
		id: newID("pi_", 24), seq: c.s.nextSeq(), created: c.now, amount: amount, currency: currency, customer: customerID,
		status: "requires_payment_method", pmType: pmType, invoice: invoiceID, metadata: metadata,
	}
	pi.secret = pi.id + "_secret_" + newID("", 25)
	c.a.intents[pi.id] = pi
	c.emit("payment_intent.created", c.a.renderIntent(pi), nil)
	return pi
}

// confirm charges m for pi and returns the intent's new status: "succeeded", "processing"
// (a bank debit, settled at the next clock advance) or "requires_payment_method" (declined).
func (c *call) confirm(pi *paymentIntent, m *paymentMethod) string {
	pi.pm, pi.pmType, pi.lastError = m.id, m.typ, nil
	switch m.outcome {
	case succeeds:
		c.succeedIntent(pi)
	case declines:
		c.failIntent(pi, errDeclined())
	default:
		pi.status = "processing"
		c.emit("payment_intent.processing", c.a.renderIntent(pi), nil)
	}
	return pi.status
}

func (c *call) succeedIntent(pi *paymentIntent) {
	pi.status, pi.received = "succeeded", pi.amount
	c.emit("payment_intent.succeeded", c.a.renderIntent(pi), nil)
}

func (c *call) failIntent(pi *paymentIntent, e *apiError) {
	pi.status, pi.lastError = "requires_payment_method", e
	c.emit("payment_intent.payment_failed", c.a.renderIntent(pi), nil)
}

func (c *call) cancelIntent(pi *paymentIntent) {
	pi.status, pi.canceledAt = "canceled", c.now
	c.emit("payment_intent.canceled", c.a.renderIntent(pi), nil)
}

// settle ends a processing bank debit the way its IBAN decides, and what it paid for with it:
// the invoice, and the checkout session that started it.
func (c *call) settle(pi *paymentIntent) {
	paid := c.a.methods[pi.pm].outcome == settlesPaid
	if paid {
		c.succeedIntent(pi)
	} else {
		c.failIntent(pi, &apiError{Type: "invalid_request_error", Code: "payment_intent_payment_attempt_failed", Message: "The payment failed: the bank refused the debit."})
	}
	if inv := c.a.invoices[pi.invoice]; inv != nil && (inv.status == "open" || inv.status == "uncollectible") {
		if paid {
			c.invoicePaid(inv)
		} else {
			c.invoiceFailed(inv, true)
		}
	}
	if se := c.a.sessions[pi.session]; se != nil {
		if paid {
			se.paymentStatus = "paid"
			c.emit("checkout.session.async_payment_succeeded", c.a.renderSession(se, c.s.base, nil), nil)
		} else {
			c.emit("checkout.session.async_payment_failed", c.a.renderSession(se, c.s.base, nil), nil)
		}
	}
}

// methodFor picks what an invoice is charged with: the invoice's default payment method, else
// its subscription's, else its customer's; only one still attached to the customer counts.
func (c *call) methodFor(inv *invoice) *paymentMethod {
	candidates := []string{inv.defaultPM}
	if sub := c.a.subs[inv.subscription]; sub != nil {
		candidates = append(candidates, sub.defaultPM)
	}
	candidates = append(candidates, c.a.customers[inv.customer].defaultPM)
	for _, id := range candidates {
		if m := c.a.methods[id]; m != nil && m.customer == inv.customer {
			return m
		}
	}
	return nil
}

// chargeInvoice makes one payment attempt on an open (or uncollectible) invoice and applies its
// result; it answers "paid", "processing" or "failed". No payment method at all is a failed
// attempt, as for the provider.
func (c *call) chargeInvoice(inv *invoice, m *paymentMethod) string {
	inv.attempts++
	if m == nil {
		c.invoiceFailed(inv, false)
		return "failed"
	}
	pi := c.a.intents[inv.intent]
	if pi == nil {
		pi = c.newIntent(inv.amountDue, inv.currency, inv.customer, m.typ, inv.id, nil)
		pi.description = descriptions[inv.billingReason]
		inv.intent = pi.id
	}
	switch c.confirm(pi, m) {
	case "succeeded":
		c.invoicePaid(inv)
		return "paid"
	case "processing":
		c.subscriptionPaid(inv)
		return "processing"
	}
	c.invoiceFailed(inv, false)
	return "failed"
}

var descriptions = map[string]string{
	"subscription_create": "Subscription creation", "subscription_cycle": "Subscription update",
	"subscription_update": "Subscription update", "manual": "Payment for Invoice",
}

func (c *call) invoicePaid(inv *invoice) {
	inv.status, inv.amountPaid, inv.paidAt = "paid", inv.amountDue, c.now
	c.a.customers[inv.customer].delinquent = false
	c.emit("invoice.paid", c.a.renderInvoice(inv), nil)
	c.emit("invoice.payment_succeeded", c.a.renderInvoice(inv), nil)
	c.subscriptionPaid(inv)
}

// subscriptionPaid brings a subscription up to date once its latest invoice is paid or its
// bank debit accepted: a renewal moves the period on if it has not moved yet, and an
// incomplete or past-due subscription becomes active.
func (c *call) subscriptionPaid(inv *invoice) {
	sub := c.a.subs[inv.subscription]
	if sub == nil || sub.latestInvoice != inv.id || sub.status == "canceled" || sub.status == "incomplete_expired" {
		return
	}
	before := c.a.renderSubscription(sub)
	changed := false
	if _, end := c.a.period(sub); inv.billingReason == "subscription_cycle" && inv.paysStart.Equal(end) {
		sub.cycle++
		changed = true
	}
	if sub.status == "incomplete" || sub.status == "past_due" {
		sub.status = "active"
		changed = true
	}
	if changed {
		c.emit("customer.subscription.updated", c.a.renderSubscription(sub), before)
	}
}

// invoiceFailed records a failed payment attempt. A subscription's renewal makes it past due and
// is retried at the next clock advances until the third failed attempt marks the invoice
// uncollectible; a first invoice declined at once leaves the subscription incomplete, and one
// whose bank debit fails later is uncollectible at once.
func (c *call) invoiceFailed(inv *invoice, async bool) {
	cu := c.a.customers[inv.customer]
	cu.delinquent = true
	c.emit("invoice.payment_failed", c.a.renderInvoice(inv), nil)
	sub := c.a.subs[inv.subscription]
	if sub == nil || sub.latestInvoice != inv.id || inv.status != "open" {
		return
	}
	switch {
	case inv.billingReason == "subscription_create" && async:
		c.markUncollectible(inv)
	case inv.billingReason == "subscription_create":
	case inv.attempts >= 3:
		c.markUncollectible(inv)
	case sub.status == "active":
		before := c.a.renderSubscription(sub)
		sub.status = "past_due"
		c.emit("customer.subscription.updated", c.a.renderSubscription(sub), before)
	}
}

// markUncollectible gives up on an invoice. A subscription whose first payment failed for good
// is canceled; one whose renewal did is left past due (the sandbox's setting): the period it was
// to pay starts unpaid, and the next one is invoiced when it ends.
func (c *call) markUncollectible(inv *invoice) {
	inv.status, inv.uncollectibleAt = "uncollectible", c.now
	c.emit("invoice.marked_uncollectible", c.a.renderInvoice(inv), nil)
	sub := c.a.subs[inv.subscription]
	if sub == nil || sub.latestInvoice != inv.id {
		return
	}
	if inv.billingReason != "subscription_cycle" {
		c.cancelSubscription(sub)
		return
	}
	if _, end := c.a.period(sub); inv.paysStart.Equal(end) {
		before := c.a.renderSubscription(sub)
		sub.cycle++
		c.emit("customer.subscription.updated", c.a.renderSubscription(sub), before)
	}
}

func (s *Server) getPaymentIntent(c *call) (any, *apiError) {
	if err := c.p.done(); err != nil {
		return nil, err
	}
	id := c.r.PathValue("id")
	pi := c.a.intents[id]
	if pi == nil {
		return nil, errNoSuch("payment_intent", id, "intent")
	}
	return c.a.renderIntent(pi), nil
}

// intentsInOrder lists payment intents oldest first.
func (a *account) intentsInOrder() []*paymentIntent {
	out := make([]*paymentIntent, 0, len(a.intents))
	for _, pi := range a.intents {
		out = append(out, pi)
	}
	slices.SortFunc(out, func(x, y *paymentIntent) int { return int(x.seq - y.seq) })
	return out
}
