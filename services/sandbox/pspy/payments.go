package pspy

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/berthhq/berth/services/sandbox/idempotency"
)

type payment struct {
	id             string
	key            string
	mode           string
	amount         money
	description    string
	redirectURL    string
	cancelURL      string
	webhookURL     string
	sequenceType   string // "oneoff", "first" or "recurring"
	customerID     string
	mandateID      string
	subscriptionID string
	methods        []string // what the payer may choose from; nil = every method
	method         string   // the method used, once known
	metadata       json.RawMessage
	status         string
	createdAt      time.Time
	paidAt         time.Time
	failedAt       time.Time
	canceledAt     time.Time
	expiredAt      time.Time
	refunds        []*refund
	chargeback     *chargeback // at most one, of the full amount
}

// chargeback is the payer's bank taking a paid payment's amount back, which the sandbox records
// when told to (POST /payments/{id}/chargeback).
type chargeback struct {
	id        string
	amount    money
	createdAt time.Time
}

type refund struct {
	id          string
	amount      money
	description string
	createdAt   time.Time
}

// methodLabels are the payment methods the sandbox offers, with their names on the checkout page.
var methodLabels = map[string]string{"creditcard": "Credit card", "directdebit": "SEPA Direct Debit"}

// allMethods is the payer's choice when a payment does not restrict it, in page order.
var allMethods = []string{"creditcard", "directdebit"}

func (s *Server) createPayment(c call) idempotency.Answer {
	var in struct {
		Amount       *amountIn       `json:"amount"`
		Description  string          `json:"description"`
		RedirectURL  string          `json:"redirectUrl"`
		CancelURL    string          `json:"cancelUrl"`
		WebhookURL   string          `json:"webhookUrl"`
		SequenceType string          `json:"sequenceType"`
		CustomerID   string          `json:"customerId"`
		MandateID    string          `json:"mandateId"`
		Method       json.RawMessage `json:"method"`
		Metadata     json.RawMessage `json:"metadata"`
	}
	if a := decode(c.body, &in); a != nil {
		return *a
	}
	amount, ferr := parseAmount(in.Amount, "amount")
	if ferr != nil {
		return ferr.answer()
	}
	if ferr := checkDescription(in.Description, true); ferr != nil {
		return ferr.answer()
	}
	seq := in.SequenceType
	if seq == "" {
		seq = "oneoff"
	}
	if seq != "oneoff" && seq != "first" && seq != "recurring" {
		return (&fieldError{"sequenceType", "The sequence type must be oneoff, first or recurring."}).answer()
	}
	methods, ferr := parseMethods(in.Method)
	if ferr != nil {
		return ferr.answer()
	}
	if seq != "recurring" && in.RedirectURL == "" {
		return (&fieldError{"redirectUrl", "The redirect URL is required."}).answer()
	}
	for _, u := range []struct{ field, value string }{{"redirectUrl", in.RedirectURL}, {"cancelUrl", in.CancelURL}, {"webhookUrl", in.WebhookURL}} {
		if u.value != "" && !validURL(u.value) {
			return (&fieldError{u.field, "The URL is invalid: it must be an absolute http or https URL."}).answer()
		}
	}
	meta, ferr := metadata(in.Metadata)
	if ferr != nil {
		return ferr.answer()
	}
	if in.MandateID != "" && seq != "recurring" {
		return (&fieldError{"mandateId", "A mandate can only be charged by a recurring payment."}).answer()
	}
	if in.CustomerID == "" && seq != "oneoff" {
		return (&fieldError{"customerId", "A customer is required for a " + seq + " payment."}).answer()
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	var cu *customer
	if in.CustomerID != "" {
		if cu, _ = s.customer(c, in.CustomerID); cu == nil {
			return (&fieldError{"customerId", "No customer exists with token " + in.CustomerID + "."}).answer()
		}
	}
	now := s.clock.Now()
	p := &payment{
		id: newID("tr_"), key: c.key, mode: c.mode, amount: amount, description: in.Description,
		webhookURL: in.WebhookURL, sequenceType: seq, customerID: in.CustomerID, methods: methods,
		metadata: meta, status: "open", createdAt: now,
	}
	if seq == "recurring" {
		md, ferr := chargeableMandate(cu, in.MandateID)
		if ferr != nil {
			return ferr.answer()
		}
		s.payments[p.id] = p
		s.chargeRecurring(p, md, now)
		return resource(http.StatusCreated, s.paymentOut(p, nil))
	}
	p.redirectURL, p.cancelURL = in.RedirectURL, in.CancelURL
	if len(methods) == 1 {
		p.method = methods[0]
	}
	s.payments[p.id] = p
	return resource(http.StatusCreated, s.paymentOut(p, nil))
}

// chargeableMandate picks the mandate a recurring payment charges: the one named, which must be
// the customer's and valid, or else the customer's newest valid mandate.
func chargeableMandate(cu *customer, id string) (*mandate, *fieldError) {
	if id != "" {
		for _, md := range cu.mandates {
			if md.id == id {
				if md.status != "valid" {
					return nil, &fieldError{"mandateId", "The mandate " + id + " is not valid."}
				}
				return md, nil
			}
		}
		return nil, &fieldError{"mandateId", "No mandate exists with token " + id + " for this customer."}
	}
	if md := newestValidMandate(cu); md != nil {
		return md, nil
	}
	return nil, &fieldError{"", "The customer has no valid mandate to charge."}
}

// chargeRecurring settles a recurring payment at once, as test mode does: paid, or failed when the
// mandate was set up to fail its recurring charges or there is none. The caller holds s.mu.
func (s *Server) chargeRecurring(p *payment, md *mandate, at time.Time) {
	if md != nil {
		p.mandateID, p.method = md.id, md.method
	}
	if md == nil || md.failRecurring {
		p.status, p.failedAt = "failed", at
	} else {
		p.status, p.paidAt = "paid", at
	}
	s.notify(p, at)
	s.log.Debug("pspy recurring payment", "payment", p.id, "status", p.status, "subscription", p.subscriptionID)
}

func (s *Server) getPayment(c call) idempotency.Answer {
	embed := map[string]bool{}
	if e := c.r.URL.Query().Get("embed"); e != "" {
		for name := range strings.SplitSeq(e, ",") {
			if name != "refunds" && name != "chargebacks" {
				return problem(http.StatusBadRequest, "The embed value "+name+" is not supported for payments.", "embed")
			}
			embed[name] = true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, miss := s.payment(c, c.r.PathValue("id"))
	if miss != nil {
		return *miss
	}
	return resource(http.StatusOK, s.paymentOut(p, embed))
}

// payment finds an account's payment. The caller holds s.mu.
func (s *Server) payment(c call, id string) (*payment, *idempotency.Answer) {
	p, ok := s.payments[id]
	if !ok || p.key != c.key {
		a := problem(http.StatusNotFound, "No payment exists with token "+id+".", "")
		return nil, &a
	}
	return p, nil
}

func (s *Server) createRefund(c call) idempotency.Answer {
	var in struct {
		Amount      *amountIn `json:"amount"`
		Description string    `json:"description"`
	}
	if a := decode(c.body, &in); a != nil {
		return *a
	}
	amount, ferr := parseAmount(in.Amount, "amount")
	if ferr != nil {
		return ferr.answer()
	}
	if ferr := checkDescription(in.Description, false); ferr != nil {
		return ferr.answer()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, miss := s.payment(c, c.r.PathValue("id"))
	if miss != nil {
		return *miss
	}
	if p.status != "paid" {
		return problem(http.StatusUnprocessableEntity, "The payment is "+p.status+": only a paid payment can be refunded.", "")
	}
	if p.chargeback != nil {
		return problem(http.StatusUnprocessableEntity, "The payment was charged back: it cannot be refunded.", "")
	}
	if amount.currency != p.amount.currency {
		return (&fieldError{"amount.currency", "The refund's currency must be the payment's, " + p.amount.currency + "."}).answer()
	}
	if remaining := p.remaining(); amount.minor > remaining.minor {
		return (&fieldError{"amount.value", "The amount is higher than the amount remaining to be refunded, " + remaining.String() + "."}).answer()
	}
	now := s.clock.Now()
	re := &refund{id: newID("re_"), amount: amount, description: in.Description, createdAt: now}
	p.refunds = append(p.refunds, re)
	// The provider calls the payment's webhook for a refund too: the payment's state changed.
	s.notify(p, now)
	return resource(http.StatusCreated, s.refundOut(p, re))
}

func (p *payment) refunded() money {
	total := money{currency: p.amount.currency}
	for _, re := range p.refunds {
		total.minor += re.amount.minor
	}
	return total
}

// remaining is what can still be refunded: nothing once the payment was charged back.
func (p *payment) remaining() money {
	if p.chargeback != nil {
		return money{currency: p.amount.currency}
	}
	return money{currency: p.amount.currency, minor: p.amount.minor - p.refunded().minor}
}

// chargeback is the sandbox's control POST /payments/{id}/chargeback, with the account's key:
// the payer's bank takes the full amount of a paid payment back, and the payment's webhook is
// called, as the provider does for a chargeback.
func (s *Server) chargeback(c call) idempotency.Answer {
	var in struct{}
	if a := decode(c.body, &in); a != nil {
		return *a
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	p, miss := s.payment(c, c.r.PathValue("id"))
	switch {
	case miss != nil:
		return *miss
	case p.status != "paid":
		return problem(http.StatusUnprocessableEntity, "The payment is "+p.status+": only a paid payment can be charged back.", "")
	case p.chargeback != nil:
		return problem(http.StatusUnprocessableEntity, "The payment was charged back already.", "")
	}
	now := s.clock.Now()
	p.chargeback = &chargeback{id: newID("chb_"), amount: p.amount, createdAt: now}
	s.notify(p, now)
	return resource(http.StatusCreated, s.chargebackOut(p))
}

func (s *Server) chargebackOut(p *payment) any {
	cb := p.chargeback
	return struct {
		Resource   string           `json:"resource"`
		ID         string           `json:"id"`
		Amount     amountOut        `json:"amount"`
		CreatedAt  string           `json:"createdAt"`
		Reason     any              `json:"reason"`
		ReversedAt *string          `json:"reversedAt"`
		PaymentID  string           `json:"paymentId"`
		Links      map[string]*link `json:"_links"`
	}{
		Resource: "chargeback", ID: cb.id, Amount: cb.amount.out(), CreatedAt: stamp(cb.createdAt), PaymentID: p.id,
		Links: map[string]*link{
			"self":          s.self("/v2/payments/" + p.id + "/chargebacks/" + cb.id),
			"payment":       s.self("/v2/payments/" + p.id),
			"documentation": docs(),
		},
	}
}

// checkDescription applies the provider's description rule; payments require one.
func checkDescription(d string, required bool) *fieldError {
	switch {
	case required && strings.TrimSpace(d) == "":
		return &fieldError{"description", "The description is required."}
	case utf8.RuneCountInString(d) > 255:
		return &fieldError{"description", "The description must not exceed 255 characters."}
	}
	return nil
}

// parseMethods reads method, a single method or a list of them.
func parseMethods(raw json.RawMessage) ([]string, *fieldError) {
	if len(raw) == 0 || string(raw) == "null" {
		return nil, nil
	}
	var list []string
	var one string
	if json.Unmarshal(raw, &one) == nil {
		list = []string{one}
	} else if json.Unmarshal(raw, &list) != nil || len(list) == 0 {
		return nil, &fieldError{"method", "The method must be a method name or a non-empty list of them."}
	}
	var methods []string
	for _, m := range list {
		if _, ok := methodLabels[m]; !ok {
			return nil, &fieldError{"method", "The payment method " + m + " is invalid or not enabled."}
		}
		if !slices.Contains(methods, m) {
			methods = append(methods, m)
		}
	}
	return methods, nil
}

func validURL(raw string) bool {
	u, err := url.Parse(raw)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

// paymentEmbedded holds what ?embed= asked for; like the provider, an empty list is left out.
type paymentEmbedded struct {
	Refunds     []any `json:"refunds,omitempty"`
	Chargebacks []any `json:"chargebacks,omitempty"`
}

func (s *Server) paymentOut(p *payment, embed map[string]bool) any {
	path := "/v2/payments/" + p.id
	links := map[string]*link{"self": s.self(path), "documentation": docs()}
	if p.status == "open" {
		links["checkout"] = &link{Href: s.base + "/checkout/" + p.id, Type: "text/html"}
	}
	if p.customerID != "" {
		links["customer"] = s.self("/v2/customers/" + p.customerID)
	}
	if p.mandateID != "" {
		links["mandate"] = s.self("/v2/customers/" + p.customerID + "/mandates/" + p.mandateID)
	}
	if p.subscriptionID != "" {
		links["subscription"] = s.self("/v2/customers/" + p.customerID + "/subscriptions/" + p.subscriptionID)
	}
	if len(p.refunds) > 0 {
		links["refunds"] = s.self(path + "/refunds")
	}
	if p.chargeback != nil {
		links["chargebacks"] = s.self(path + "/chargebacks")
	}
	out := struct {
		Resource          string           `json:"resource"`
		ID                string           `json:"id"`
		Mode              string           `json:"mode"`
		CreatedAt         string           `json:"createdAt"`
		Status            string           `json:"status"`
		Amount            amountOut        `json:"amount"`
		AmountRefunded    *amountOut       `json:"amountRefunded,omitempty"`
		AmountRemaining   *amountOut       `json:"amountRemaining,omitempty"`
		AmountChargedBack *amountOut       `json:"amountChargedBack,omitempty"`
		Description       string           `json:"description"`
		Method            *string          `json:"method"`
		Metadata          json.RawMessage  `json:"metadata"`
		SequenceType      string           `json:"sequenceType"`
		RedirectURL       *string          `json:"redirectUrl"`
		CancelURL         string           `json:"cancelUrl,omitempty"`
		WebhookURL        *string          `json:"webhookUrl"`
		CustomerID        string           `json:"customerId,omitempty"`
		MandateID         string           `json:"mandateId,omitempty"`
		SubscriptionID    string           `json:"subscriptionId,omitempty"`
		PaidAt            string           `json:"paidAt,omitempty"`
		FailedAt          string           `json:"failedAt,omitempty"`
		CanceledAt        string           `json:"canceledAt,omitempty"`
		ExpiredAt         string           `json:"expiredAt,omitempty"`
		Embedded          *paymentEmbedded `json:"_embedded,omitempty"`
		Links             map[string]*link `json:"_links"`
	}{
		Resource: "payment", ID: p.id, Mode: p.mode, CreatedAt: stamp(p.createdAt), Status: p.status,
		Amount: p.amount.out(), Description: p.description, Method: nullable(p.method),
		Metadata: nullRaw(p.metadata), SequenceType: p.sequenceType, RedirectURL: nullable(p.redirectURL),
		CancelURL: p.cancelURL, WebhookURL: nullable(p.webhookURL), CustomerID: p.customerID,
		MandateID: p.mandateID, SubscriptionID: p.subscriptionID, PaidAt: stampOrEmpty(p.paidAt),
		FailedAt: stampOrEmpty(p.failedAt), CanceledAt: stampOrEmpty(p.canceledAt),
		ExpiredAt: stampOrEmpty(p.expiredAt), Links: links,
	}
	// Only a paid payment can be refunded, so only it carries the refund amounts.
	if p.status == "paid" {
		refunded, remaining := p.refunded().out(), p.remaining().out()
		out.AmountRefunded, out.AmountRemaining = &refunded, &remaining
	}
	if p.chargeback != nil {
		charged := p.chargeback.amount.out()
		out.AmountChargedBack = &charged
	}
	embedded := &paymentEmbedded{}
	if embed["refunds"] {
		for _, re := range p.refunds {
			embedded.Refunds = append(embedded.Refunds, s.refundOut(p, re))
		}
	}
	if embed["chargebacks"] && p.chargeback != nil {
		embedded.Chargebacks = []any{s.chargebackOut(p)}
	}
	if len(embedded.Refunds)+len(embedded.Chargebacks) > 0 {
		out.Embedded = embedded
	}
	return out
}

func (s *Server) refundOut(p *payment, re *refund) any {
	return struct {
		Resource    string           `json:"resource"`
		ID          string           `json:"id"`
		Mode        string           `json:"mode"`
		Amount      amountOut        `json:"amount"`
		Status      string           `json:"status"`
		Description string           `json:"description"`
		Metadata    json.RawMessage  `json:"metadata"`
		PaymentID   string           `json:"paymentId"`
		CreatedAt   string           `json:"createdAt"`
		Links       map[string]*link `json:"_links"`
	}{
		Resource: "refund", ID: re.id, Mode: p.mode, Amount: re.amount.out(),
		// Test-mode refunds wait for the next batch, which the sandbox never runs.
		Status: "pending", Description: re.description, Metadata: json.RawMessage("null"),
		PaymentID: p.id, CreatedAt: stamp(re.createdAt),
		Links: map[string]*link{
			"self":          s.self("/v2/payments/" + p.id + "/refunds/" + re.id),
			"payment":       s.self("/v2/payments/" + p.id),
			"documentation": docs(),
		},
	}
}
