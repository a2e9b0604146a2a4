package pspx

import (
	"context"
	"time"
)

// advance is the clock hook: each account's due work, in time order.
func (s *Server) advance(_ context.Context, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.order {
		s.tick(a, now)
	}
}

// tick brings one account up to now. Work that waits for "the next advance" (bank debits
// settling, retries of past-due renewals) happens as the advance begins, dated just after the
// account's latest activity; then session expiries, expiries of incomplete subscriptions and
// period ends follow at their own times, earliest first, so a long advance renews a
// subscription once per period that ended.
func (s *Server) tick(a *account, now time.Time) {
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
			case sub.status == "active" || (sub.status == "past_due" && sub.cancelAtPeriodEnd):
				// A past-due subscription's period waits for its invoice to be paid.
				consider(end, func() { c.renew(sub) })
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
	a.lastTick = now
}
