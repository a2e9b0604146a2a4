package pspx

import (
	"context"
	"slices"
	"time"
)

// A renewal is created as a draft so webhook receivers can edit it (invoice.created lets them
// set its lines' descriptions). The draft is finalized and charged once draftWindow has passed
// and every enabled endpoint that was sent its invoice.created answered 2xx, and after
// draftLimit whatever the receivers did.
const (
	draftWindow = time.Hour
	draftLimit  = 72 * time.Hour
)

// advance is the clock hook: each account's due work, in time order.
func (s *Server) advance(ctx context.Context, now time.Time) {
	s.advancing.Lock()
	defer s.advancing.Unlock()
	s.mu.Lock()
	defer s.mu.Unlock()
	waited := map[*invoice]bool{}
	// By index: accounts opened while the lock is let go (see awaitHooks) join the end.
	for i := 0; i < len(s.order); i++ {
		s.tick(ctx, s.order[i], now, waited)
	}
	s.flush()
}

// tick brings one account up to now. Work that waits for "the next advance" (bank debits
// settling, retries of past-due renewals) happens as the advance begins, dated just after the
// account's latest activity; then session expiries, expiries of incomplete subscriptions, period
// ends and renewal drafts whose window closed follow at their own times, earliest first, so a
// long advance renews a subscription once per period that ended. waited remembers the drafts
// whose webhooks this advance already waited for.
func (s *Server) tick(ctx context.Context, a *account, now time.Time, waited map[*invoice]bool) {
	c := &call{s: s, a: a, now: a.lastTick}
	if n := len(a.events); n > 0 && a.events[n-1].created.After(c.now) {
		c.now = a.events[n-1].created
	}
	settled := map[string]bool{} // invoices whose debit failed just now wait for the next advance
	for _, pi := range a.intentsInOrder() {
		if pi.status == "processing" {
			c.settle(pi)
			settled[pi.invoice] = true
		}
	}
	for _, sub := range a.subsInOrder() {
		inv := a.invoices[sub.latestInvoice]
		if sub.status != "past_due" || inv == nil || inv.status != "open" || settled[inv.id] {
			continue
		}
		if pi := a.intents[inv.intent]; pi == nil || pi.status != "processing" {
			c.chargeInvoice(inv, c.methodFor(inv))
		}
	}
	for {
		var due time.Time
		var work func()
		consider := func(at time.Time, f func()) {
			if !at.After(now) && (work == nil || at.Before(due)) {
				due, work = at, f
			}
		}
		for _, se := range a.sessionsInOrder() {
			if se.status == "open" {
				consider(se.expiresAt, func() { c.expireSession(se) })
			}
		}
		for _, sub := range a.subsInOrder() {
			_, end := a.period(sub)
			switch {
			case sub.status == "incomplete":
				consider(sub.created.Add(23*time.Hour), func() { c.expireIncomplete(sub) })
			case a.renewalPending(sub):
				// The period's renewal is drafted already; it waits in its draft window.
			case sub.status == "active" || (sub.status == "past_due" && (sub.cancelAtPeriodEnd || a.gaveUp(sub))):
				// A past-due subscription's period waits for its invoice to be paid, unless that
				// invoice is uncollectible: then the next period is invoiced when this one ends.
				consider(end, func() { c.renew(sub) })
			}
		}
		for _, inv := range a.pendingRenewals() {
			// Invoice times are whole seconds for the receivers, so the window is counted from
			// the second the invoice shows as created.
			window := inv.created.Truncate(time.Second).Add(draftWindow)
			switch {
			case inv.status == "open":
				// Finalized through the API during its window: charged when the window closes.
				consider(window, func() { c.chargeInvoice(inv, c.methodFor(inv)) })
			case !waited[inv]:
				consider(window, func() { s.awaitHooks(ctx, a, inv); waited[inv] = true })
			case s.answered(a, inv):
				consider(window, func() { c.finalizeRenewal(inv) })
			default:
				consider(inv.created.Add(draftLimit), func() { c.finalizeRenewal(inv) })
			}
		}
		if work == nil {
			break
		}
		if due.After(c.now) {
			c.now = due
		}
		work()
	}
	if now.After(a.lastTick) {
		a.lastTick = now
	}
}

// pendingRenewal reports whether a renewal has yet to be charged by the clock: a draft in its
// window, or one finalized through the API during it and not charged yet.
func pendingRenewal(inv *invoice) bool {
	return inv != nil && inv.autoAdvance && (inv.status == "draft" || inv.status == "open" && inv.attempts == 0)
}

// renewalPending reports whether a subscription's period end was renewed already, by a renewal
// the clock has yet to charge.
func (a *account) renewalPending(sub *subscription) bool {
	return pendingRenewal(a.invoices[sub.latestInvoice])
}

// pendingRenewals lists the renewals the clock has yet to finalize or charge, oldest first.
func (a *account) pendingRenewals() []*invoice {
	var out []*invoice
	for _, inv := range a.invoices {
		if pendingRenewal(inv) {
			out = append(out, inv)
		}
	}
	slices.SortFunc(out, func(x, y *invoice) int { return int(x.seq - y.seq) })
	return out
}

// hookIDs are the deliveries of a draft's invoice.created to endpoints that still exist and are
// enabled: an endpoint deleted or disabled since has nothing more to say.
func (a *account) hookIDs(inv *invoice) []string {
	var ids []string
	for _, h := range inv.hooks {
		if ep := a.endpoints[h.endpoint]; ep != nil && !ep.disabled {
			ids = append(ids, h.delivery)
		}
	}
	return ids
}

// answered reports whether every receiver of a draft's invoice.created answered 2xx.
func (s *Server) answered(a *account, inv *invoice) bool {
	return s.deliveries == nil || s.deliveries.Delivered(a.hookIDs(inv)...)
}

// awaitHooks gives the receivers of a draft's invoice.created up to s.draftWait (real time) to
// answer it, before the draft is finalized. The caller holds s.mu, which is let go meanwhile: a
// receiver calls back into the API while it handles the event (to read objects, to edit the
// draft's lines), and would wait for the lock forever.
func (s *Server) awaitHooks(ctx context.Context, a *account, inv *invoice) {
	if s.deliveries == nil {
		return
	}
	s.flush()
	ids := a.hookIDs(inv)
	if s.deliveries.Delivered(ids...) {
		return
	}
	s.mu.Unlock()
	defer s.mu.Lock()
	ctx, cancel := context.WithTimeout(ctx, s.draftWait)
	defer cancel()
	s.deliveries.Await(ctx, ids...)
}
