package pspy

import (
	"context"
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/berthhq/berth/services/sandbox/idempotency"
)

type subscription struct {
	id          string
	key         string
	mode        string
	seq         int // creation order
	customerID  string
	amount      money
	interval    interval
	description string
	mandateID   string // "" = the customer's newest valid mandate at each charge
	webhookURL  string
	metadata    json.RawMessage
	status      string // "active" or "canceled"
	startDate   time.Time
	charged     int // payments made so far
	createdAt   time.Time
	canceledAt  time.Time
}

// interval is a subscription's period, such as "1 month" or "14 days".
type interval struct {
	n    int
	unit string // "day", "week", "month" or "year"
	text string // as the request gave it, which the provider echoes
}

var intervalPattern = regexp.MustCompile(`^([1-9][0-9]{0,2}) (day|week|month|year)s?$`)

func parseInterval(text string) (interval, bool) {
	m := intervalPattern.FindStringSubmatch(text)
	if m == nil {
		return interval{}, false
	}
	n, _ := strconv.Atoi(m[1]) // the pattern admits one to three digits only
	return interval{n: n, unit: m[2], text: text}, true
}

// after is the date k intervals after start. Months and years count from start rather than from
// the previous date, and a day the month lacks becomes its last: a subscription started on the
// 31st is charged on the 30th of April and again on the 31st of May.
func (iv interval) after(start time.Time, k int) time.Time {
	y, m, d := start.Date()
	switch iv.unit {
	case "day":
		return start.AddDate(0, 0, k*iv.n)
	case "week":
		return start.AddDate(0, 0, 7*k*iv.n)
	}
	months := k * iv.n
	if iv.unit == "year" {
		months *= 12
	}
	first := time.Date(y, m+time.Month(months), 1, 0, 0, 0, 0, time.UTC)
	last := first.AddDate(0, 1, -1).Day()
	return first.AddDate(0, 0, min(d, last)-1)
}

// nextPayment is the date of the subscription's next charge, midnight UTC.
func (sub *subscription) nextPayment() time.Time {
	return sub.interval.after(sub.startDate, sub.charged)
}

func (s *Server) createSubscription(c call) idempotency.Answer {
	var in struct {
		Amount      *amountIn       `json:"amount"`
		Interval    string          `json:"interval"`
		StartDate   string          `json:"startDate"`
		Description string          `json:"description"`
		MandateID   string          `json:"mandateId"`
		WebhookURL  string          `json:"webhookUrl"`
		Metadata    json.RawMessage `json:"metadata"`
	}
	if a := decode(c.body, &in); a != nil {
		return *a
	}
	amount, ferr := parseAmount(in.Amount, "amount")
	if ferr != nil {
		return ferr.answer()
	}
	iv, ok := parseInterval(in.Interval)
	if !ok {
		return (&fieldError{"interval", `The interval must be a number and a unit, such as "1 month", "12 months" or "14 days".`}).answer()
	}
	if ferr := checkDescription(in.Description, true); ferr != nil {
		return ferr.answer()
	}
	if in.WebhookURL != "" && !validURL(in.WebhookURL) {
		return (&fieldError{"webhookUrl", "The URL is invalid: it must be an absolute http or https URL."}).answer()
	}
	meta, ferr := metadata(in.Metadata)
	if ferr != nil {
		return ferr.answer()
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	cu, miss := s.customer(c, c.r.PathValue("id"))
	if miss != nil {
		return *miss
	}
	now := s.clock.Now()
	today := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, time.UTC)
	start := today
	if in.StartDate != "" {
		d, err := time.Parse(time.DateOnly, in.StartDate)
		if err != nil {
			return (&fieldError{"startDate", "The start date must be a date in the form YYYY-MM-DD."}).answer()
		}
		if d.Before(today) {
			return (&fieldError{"startDate", "The start date must not be in the past."}).answer()
		}
		start = d
	}
	if _, ferr := chargeableMandate(cu, in.MandateID); ferr != nil {
		return ferr.answer()
	}
	s.subSeq++
	sub := &subscription{
		id: newID("sub_"), key: c.key, mode: c.mode, seq: s.subSeq, customerID: cu.id, amount: amount,
		interval: iv, description: in.Description, mandateID: in.MandateID, webhookURL: in.WebhookURL,
		metadata: meta, status: "active", startDate: start, createdAt: now,
	}
	s.subscriptions[sub.id] = sub
	return resource(http.StatusCreated, s.subscriptionOut(sub))
}

func (s *Server) getSubscription(c call) idempotency.Answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	sub, miss := s.subscription(c)
	if miss != nil {
		return *miss
	}
	return resource(http.StatusOK, s.subscriptionOut(sub))
}

// cancelSubscription stops a subscription's charges for good.
func (s *Server) cancelSubscription(c call) idempotency.Answer {
	s.mu.Lock()
	defer s.mu.Unlock()
	sub, miss := s.subscription(c)
	if miss != nil {
		return *miss
	}
	if sub.status == "canceled" {
		return problem(http.StatusUnprocessableEntity, "The subscription "+sub.id+" has been canceled already.", "")
	}
	sub.status, sub.canceledAt = "canceled", s.clock.Now()
	return resource(http.StatusOK, s.subscriptionOut(sub))
}

// subscription finds the subscription the path names, which must be the path's customer's.
// The caller holds s.mu.
func (s *Server) subscription(c call) (*subscription, *idempotency.Answer) {
	cu, miss := s.customer(c, c.r.PathValue("id"))
	if miss != nil {
		return nil, miss
	}
	id := c.r.PathValue("subId")
	sub, ok := s.subscriptions[id]
	if !ok || sub.customerID != cu.id {
		a := problem(http.StatusNotFound, "No subscription exists with token "+id+".", "")
		return nil, &a
	}
	return sub, nil
}

// renew is the clock hook: it charges every active subscription whose next payment date has
// come, earliest first (creation order among equal dates), as many periods as elapsed.
func (s *Server) renew(_ context.Context, now time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		var due *subscription
		for _, sub := range s.subscriptions {
			next := sub.nextPayment()
			if sub.status != "active" || next.After(now) {
				continue
			}
			if due == nil || next.Before(due.nextPayment()) || next.Equal(due.nextPayment()) && sub.seq < due.seq {
				due = sub
			}
		}
		if due == nil {
			return
		}
		s.chargeSubscription(due)
	}
}

// chargeSubscription makes the subscription's next recurring payment. It is dated on its due
// date, or at the subscription's creation when that came later the same day. The caller holds s.mu.
func (s *Server) chargeSubscription(sub *subscription) {
	at := sub.nextPayment()
	if sub.createdAt.After(at) {
		at = sub.createdAt
	}
	cu := s.customers[sub.customerID]
	// A named mandate that was revoked fails the charge rather than falling back to another.
	md := newestValidMandate(cu)
	if sub.mandateID != "" {
		md = s.mandates[sub.mandateID]
		if md.status != "valid" {
			md = nil
		}
	}
	p := &payment{
		id: newID("tr_"), key: sub.key, mode: sub.mode, amount: sub.amount, description: sub.description,
		webhookURL: sub.webhookURL, sequenceType: "recurring", customerID: cu.id, subscriptionID: sub.id,
		createdAt: at,
	}
	s.payments[p.id] = p
	s.chargeRecurring(p, md, at)
	sub.charged++
}

func (s *Server) subscriptionOut(sub *subscription) any {
	links := map[string]*link{
		"self":          s.self("/v2/customers/" + sub.customerID + "/subscriptions/" + sub.id),
		"customer":      s.self("/v2/customers/" + sub.customerID),
		"documentation": docs(),
	}
	if sub.mandateID != "" {
		links["mandate"] = s.self("/v2/customers/" + sub.customerID + "/mandates/" + sub.mandateID)
	}
	out := struct {
		Resource        string           `json:"resource"`
		ID              string           `json:"id"`
		Mode            string           `json:"mode"`
		CreatedAt       string           `json:"createdAt"`
		Status          string           `json:"status"`
		Amount          amountOut        `json:"amount"`
		Interval        string           `json:"interval"`
		StartDate       string           `json:"startDate"`
		NextPaymentDate string           `json:"nextPaymentDate,omitempty"`
		Description     string           `json:"description"`
		Method          *string          `json:"method"`
		MandateID       string           `json:"mandateId,omitempty"`
		CanceledAt      string           `json:"canceledAt,omitempty"`
		WebhookURL      string           `json:"webhookUrl"`
		Metadata        json.RawMessage  `json:"metadata"`
		CustomerID      string           `json:"customerId"`
		Links           map[string]*link `json:"_links"`
	}{
		Resource: "subscription", ID: sub.id, Mode: sub.mode, CreatedAt: stamp(sub.createdAt),
		Status: sub.status, Amount: sub.amount.out(), Interval: sub.interval.text,
		StartDate: sub.startDate.Format(time.DateOnly), Description: sub.description,
		MandateID: sub.mandateID, CanceledAt: stampOrEmpty(sub.canceledAt), WebhookURL: sub.webhookURL,
		Metadata: nullRaw(sub.metadata), CustomerID: sub.customerID, Links: links,
	}
	if sub.status == "active" {
		out.NextPaymentDate = sub.nextPayment().Format(time.DateOnly)
	}
	return out
}
