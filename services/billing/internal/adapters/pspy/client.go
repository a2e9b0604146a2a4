package pspy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/berthhq/berth/services/billing/internal/adapters/httpcall"
	"github.com/berthhq/berth/services/billing/internal/app"
)

// Config configures a client.
type Config struct {
	BaseURL  string       // e.g. https://api.pspy.example or http://127.0.0.1:8080/_sandbox/pspy
	HTTP     *http.Client // nil = httpcall's default
	Attempts int          // tries of a retryable request in all; 0 = httpcall's default
	Backoff  func(int) time.Duration
}

// Client implements app.Pspy. One client serves every connection: the key comes with each call.
type Client struct {
	call httpcall.Client
}

var _ app.Pspy = (*Client)(nil)

// New returns a client of the provider at cfg.BaseURL.
func New(cfg Config) *Client {
	return &Client{call: httpcall.Client{HTTP: cfg.HTTP, BaseURL: cfg.BaseURL, Attempts: cfg.Attempts, Backoff: cfg.Backoff}}
}

// ---- requests ------------------------------------------------------------------------------

type amountJSON struct {
	Currency string `json:"currency"`
	Value    string `json:"value"`
}

func amountOf(a app.PspyAmount) amountJSON { return amountJSON{Currency: a.Currency, Value: a.Value} }

func (a amountJSON) port() app.PspyAmount {
	return app.PspyAmount{Currency: a.Currency, Value: a.Value}
}

type customerRequest struct {
	Name     string            `json:"name,omitempty"`
	Email    string            `json:"email,omitempty"`
	Metadata map[string]string `json:"metadata,omitempty"`
}

type paymentRequest struct {
	Amount       amountJSON        `json:"amount"`
	Description  string            `json:"description"`
	RedirectURL  string            `json:"redirectUrl,omitempty"`
	CancelURL    string            `json:"cancelUrl,omitempty"`
	WebhookURL   string            `json:"webhookUrl,omitempty"`
	SequenceType string            `json:"sequenceType,omitempty"`
	CustomerID   string            `json:"customerId,omitempty"`
	MandateID    string            `json:"mandateId,omitempty"`
	Method       []string          `json:"method,omitempty"`
	Metadata     map[string]string `json:"metadata,omitempty"`
}

type refundRequest struct {
	Amount      amountJSON `json:"amount"`
	Description string     `json:"description,omitempty"`
}

type subscriptionRequest struct {
	Amount      amountJSON        `json:"amount"`
	Interval    string            `json:"interval"`
	StartDate   string            `json:"startDate,omitempty"`
	Description string            `json:"description"`
	MandateID   string            `json:"mandateId,omitempty"`
	WebhookURL  string            `json:"webhookUrl,omitempty"`
	Metadata    map[string]string `json:"metadata,omitempty"`
}

// ---- answers, decoded only as far as the port reads them -----------------------------------

type linkJSON struct {
	Href string `json:"href"`
}

type customerJSON struct {
	ID       string          `json:"id"`
	Mode     string          `json:"mode"`
	Name     string          `json:"name"`
	Email    string          `json:"email"`
	Metadata json.RawMessage `json:"metadata"`
}

type paymentJSON struct {
	ID             string          `json:"id"`
	Mode           string          `json:"mode"`
	Status         string          `json:"status"`
	Amount         amountJSON      `json:"amount"`
	AmountRefunded amountJSON      `json:"amountRefunded"`
	AmountCharged  amountJSON      `json:"amountChargedBack"` // present once charged back
	Description    string          `json:"description"`
	SequenceType   string          `json:"sequenceType"`
	CustomerID     string          `json:"customerId"`
	MandateID      string          `json:"mandateId"`
	SubscriptionID string          `json:"subscriptionId"`
	Method         string          `json:"method"`
	Metadata       json.RawMessage `json:"metadata"`
	CreatedAt      time.Time       `json:"createdAt"`
	PaidAt         time.Time       `json:"paidAt"`
	Links          struct {
		Checkout *linkJSON `json:"checkout"`
	} `json:"_links"`
	Embedded struct {
		Refunds     []json.RawMessage `json:"refunds"`
		Chargebacks []json.RawMessage `json:"chargebacks"`
	} `json:"_embedded"`
}

type refundJSON struct {
	ID        string     `json:"id"`
	PaymentID string     `json:"paymentId"`
	Status    string     `json:"status"`
	Amount    amountJSON `json:"amount"`
}

type mandateJSON struct {
	ID        string    `json:"id"`
	Method    string    `json:"method"`
	Status    string    `json:"status"`
	CreatedAt time.Time `json:"createdAt"`
}

type mandateList struct {
	Embedded struct {
		Mandates []mandateJSON `json:"mandates"`
	} `json:"_embedded"`
	Links struct {
		Next *linkJSON `json:"next"`
	} `json:"_links"`
}

type subscriptionJSON struct {
	ID              string          `json:"id"`
	CustomerID      string          `json:"customerId"`
	Mode            string          `json:"mode"`
	Status          string          `json:"status"`
	Amount          amountJSON      `json:"amount"`
	Interval        string          `json:"interval"`
	StartDate       string          `json:"startDate"`
	NextPaymentDate string          `json:"nextPaymentDate"`
	MandateID       string          `json:"mandateId"`
	CanceledAt      time.Time       `json:"canceledAt"`
	Metadata        json.RawMessage `json:"metadata"`
}

// stringMap reads metadata back. Berth only writes objects of strings, but the provider keeps
// any JSON there (a dashboard user may have changed it): anything else reads as no metadata
// rather than failing the call.
func stringMap(raw json.RawMessage) map[string]string {
	var m map[string]string
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

func (p paymentJSON) port() app.PspyPayment {
	out := app.PspyPayment{
		ID: p.ID, Mode: p.Mode, Status: p.Status, Amount: p.Amount.port(), AmountRefunded: p.AmountRefunded.port(),
		AmountChargedBack: p.AmountCharged.port(), Description: p.Description, SequenceType: p.SequenceType,
		CustomerID: p.CustomerID, MandateID: p.MandateID,
		SubscriptionID: p.SubscriptionID, Method: p.Method, Metadata: stringMap(p.Metadata),
		CreatedAt: p.CreatedAt, PaidAt: p.PaidAt,
		RefundsCount: len(p.Embedded.Refunds), ChargebacksCount: len(p.Embedded.Chargebacks),
	}
	if p.Links.Checkout != nil {
		out.CheckoutURL = p.Links.Checkout.Href
	}
	return out
}

func (s subscriptionJSON) port() app.PspySubscription {
	return app.PspySubscription{
		ID: s.ID, CustomerID: s.CustomerID, Mode: s.Mode, Status: s.Status, Amount: s.Amount.port(),
		Interval: s.Interval, StartDate: s.StartDate, NextPaymentDate: s.NextPaymentDate, MandateID: s.MandateID,
		CanceledAt: s.CanceledAt, Metadata: stringMap(s.Metadata),
	}
}

// ---- the port ------------------------------------------------------------------------------

// CreateCustomer creates a customer.
func (c *Client) CreateCustomer(ctx context.Context, key, idem string, in app.PspyCustomerInput) (app.PspyCustomer, error) {
	var out customerJSON
	err := c.do(ctx, http.MethodPost, "/v2/customers", key, idem, customerRequest{Name: in.Name, Email: in.Email, Metadata: in.Metadata}, &out)
	if err == nil && out.ID == "" {
		err = errNoID("POST /v2/customers")
	}
	if err != nil {
		return app.PspyCustomer{}, err
	}
	return app.PspyCustomer{ID: out.ID, Name: out.Name, Email: out.Email, Mode: out.Mode, Metadata: stringMap(out.Metadata)}, nil
}

// CreatePayment creates a payment: open with a checkout link, or charged at once when recurring.
func (c *Client) CreatePayment(ctx context.Context, key, idem string, in app.PspyPaymentInput) (app.PspyPayment, error) {
	req := paymentRequest{
		Amount: amountOf(in.Amount), Description: in.Description, RedirectURL: in.RedirectURL, CancelURL: in.CancelURL,
		WebhookURL: in.WebhookURL, SequenceType: in.SequenceType, CustomerID: in.CustomerID, MandateID: in.MandateID,
		Method: in.Method, Metadata: in.Metadata,
	}
	return c.payment(ctx, http.MethodPost, "/v2/payments", key, idem, req)
}

// Payment fetches a payment with its refunds and chargebacks embedded, which are counted.
func (c *Client) Payment(ctx context.Context, key, id string) (app.PspyPayment, error) {
	return c.payment(ctx, http.MethodGet, "/v2/payments/"+url.PathEscape(id)+"?embed=refunds,chargebacks", key, "", nil)
}

func (c *Client) payment(ctx context.Context, method, path, key, idem string, in any) (app.PspyPayment, error) {
	var out paymentJSON
	err := c.do(ctx, method, path, key, idem, in, &out)
	if err == nil && out.ID == "" {
		err = errNoID(method + " " + path)
	}
	if err != nil {
		return app.PspyPayment{}, err
	}
	return out.port(), nil
}

// CreateRefund refunds part or all of a paid payment.
func (c *Client) CreateRefund(ctx context.Context, key, idem, paymentID string, amount app.PspyAmount, description string) (app.PspyRefund, error) {
	var out refundJSON
	path := "/v2/payments/" + url.PathEscape(paymentID) + "/refunds"
	err := c.do(ctx, http.MethodPost, path, key, idem, refundRequest{Amount: amountOf(amount), Description: description}, &out)
	if err == nil && out.ID == "" {
		err = errNoID("POST " + path)
	}
	if err != nil {
		return app.PspyRefund{}, err
	}
	return app.PspyRefund{ID: out.ID, PaymentID: out.PaymentID, Status: out.Status, Amount: out.Amount.port()}, nil
}

// maxMandatePages bounds the pages followed, so a provider whose next links loop cannot keep a
// call going: 100 pages of 250 are far more mandates than one customer has.
const maxMandatePages = 100

// Mandates lists all of the customer's mandates, newest first, following the list's next links.
func (c *Client) Mandates(ctx context.Context, key, customerID string) ([]app.PspyMandate, error) {
	base := "/v2/customers/" + url.PathEscape(customerID) + "/mandates"
	var out []app.PspyMandate
	from := ""
	for range maxMandatePages {
		q := url.Values{"limit": {"250"}}
		if from != "" {
			q.Set("from", from)
		}
		var page mandateList
		if err := c.do(ctx, http.MethodGet, base+"?"+q.Encode(), key, "", nil, &page); err != nil {
			return nil, err
		}
		for _, m := range page.Embedded.Mandates {
			if m.ID == "" {
				return nil, errNoID("GET " + base)
			}
			out = append(out, app.PspyMandate{ID: m.ID, Method: m.Method, Status: m.Status, CreatedAt: m.CreatedAt})
		}
		if page.Links.Next == nil {
			return out, nil
		}
		// The next link is absolute on the provider's host; only its cursor matters here.
		next, err := url.Parse(page.Links.Next.Href)
		if err != nil || next.Query().Get("from") == "" || next.Query().Get("from") == from {
			return nil, fmt.Errorf("pspy GET %s: unusable next link %q", base, page.Links.Next.Href)
		}
		from = next.Query().Get("from")
	}
	return nil, fmt.Errorf("pspy GET %s: more than %d pages", base, maxMandatePages)
}

// RevokeMandate makes the mandate invalid.
func (c *Client) RevokeMandate(ctx context.Context, key, customerID, mandateID string) error {
	return c.do(ctx, http.MethodDelete, "/v2/customers/"+url.PathEscape(customerID)+"/mandates/"+url.PathEscape(mandateID), key, "", nil, nil)
}

// CreateSubscription creates a subscription charging the customer's mandate each interval.
func (c *Client) CreateSubscription(ctx context.Context, key, idem, customerID string, in app.PspySubscriptionInput) (app.PspySubscription, error) {
	req := subscriptionRequest{
		Amount: amountOf(in.Amount), Interval: in.Interval, StartDate: in.StartDate, Description: in.Description,
		MandateID: in.MandateID, WebhookURL: in.WebhookURL, Metadata: in.Metadata,
	}
	return c.subscription(ctx, http.MethodPost, "/v2/customers/"+url.PathEscape(customerID)+"/subscriptions", key, idem, req)
}

// Subscription fetches a customer's subscription.
func (c *Client) Subscription(ctx context.Context, key, customerID, id string) (app.PspySubscription, error) {
	return c.subscription(ctx, http.MethodGet, subscriptionPath(customerID, id), key, "", nil)
}

// CancelSubscription cancels a subscription and returns it canceled.
func (c *Client) CancelSubscription(ctx context.Context, key, customerID, id string) (app.PspySubscription, error) {
	return c.subscription(ctx, http.MethodDelete, subscriptionPath(customerID, id), key, "", nil)
}

func subscriptionPath(customerID, id string) string {
	return "/v2/customers/" + url.PathEscape(customerID) + "/subscriptions/" + url.PathEscape(id)
}

func (c *Client) subscription(ctx context.Context, method, path, key, idem string, in any) (app.PspySubscription, error) {
	var out subscriptionJSON
	err := c.do(ctx, method, path, key, idem, in, &out)
	if err == nil && out.ID == "" {
		err = errNoID(method + " " + path)
	}
	if err != nil {
		return app.PspySubscription{}, err
	}
	return out.port(), nil
}

// ---- the call ------------------------------------------------------------------------------

// do sends one request through httpcall: in, when not nil, is the JSON body; out, when not nil,
// receives the JSON answer. idem is sent as Idempotency-Key when not empty.
func (c *Client) do(ctx context.Context, method, path, key, idem string, in, out any) error {
	h := http.Header{"Authorization": {"Bearer " + key}, "Accept": {"application/hal+json"}}
	var body []byte
	if in != nil {
		body, _ = json.Marshal(in) // the request types hold strings and string maps only: it cannot fail
		h.Set("Content-Type", "application/json")
	}
	if idem != "" {
		h.Set("Idempotency-Key", idem)
	}
	resp, err := c.call.Do(ctx, httpcall.Request{Method: method, Path: path, Header: h, Body: body})
	if err != nil {
		return fmt.Errorf("pspy: %w", err)
	}
	switch {
	case resp.Status >= 400:
		return problem(method, path, resp)
	case resp.Status < 200 || resp.Status > 299:
		return fmt.Errorf("pspy %s %s: unexpected status %d", method, path, resp.Status)
	case out == nil:
		return nil
	}
	if err := json.Unmarshal(resp.Body, out); err != nil {
		return fmt.Errorf("pspy %s %s: unexpected answer (status %d): %w", method, path, resp.Status, err)
	}
	return nil
}

// problem reads the provider's hal+json problem into a ProviderError. An error answer that is
// not one (a proxy's HTML page, say) is a plain error: nothing in it is meant for the payer.
func problem(method, path string, resp httpcall.Response) error {
	var p struct {
		Title  string `json:"title"`
		Detail string `json:"detail"`
		Field  string `json:"field"`
	}
	if json.Unmarshal(resp.Body, &p) != nil || p.Title == "" {
		return fmt.Errorf("pspy %s %s: status %d: %q", method, path, resp.Status, snippet(resp.Body))
	}
	return &app.ProviderError{Status: resp.Status, Code: p.Title, Param: p.Field, UserMessage: p.Detail}
}

// snippet bounds how much of an unexpected answer goes into an error message.
func snippet(b []byte) string {
	if len(b) > 200 {
		return string(b[:200]) + "…"
	}
	return string(b)
}

func errNoID(call string) error {
	return errors.New("pspy " + call + ": unexpected answer without an id")
}
