package app

import (
	"context"
	"encoding/json"
	"strings"
	"time"
)

// The two provider ports below are what billing needs of pspx and pspy, in the providers' own
// terms: their ids, their modes and statuses. Translating those into a tenant's billing state is
// the use cases' job, so a provider's quirks stay visible where the decisions are made.
//
// Every method takes the connection's secret key for the mode in play (test or live), so one
// adapter instance serves every app. Every creating call takes an idempotency key derived from
// Berth's own operation id: the adapter sends it with each attempt, so a retried request can never
// create a second object. Adapters retry 429 and 5xx answers with backoff and nothing else.
//
// Errors: an adapter returns *ProviderError when the provider answered with an error object, and a
// plain error (wrapped transport failure) otherwise.

// ProviderError is a provider's error answer. UserMessage is the provider's text meant for the
// payer or the caller (a declined card, an unknown price); Berth passes only that on.
type ProviderError struct {
	Status      int    // HTTP status of the provider's answer
	Code        string // pspx: error.code (or error.type when no code); pspy: the problem's title
	Param       string // the request field the provider blamed, if any (pspx param, pspy field)
	UserMessage string // pspx: error.message; pspy: detail
}

func (e *ProviderError) Error() string {
	return "provider error " + e.Code + ": " + e.UserMessage
}

// CallerFault reports whether the provider blamed the request's content (4xx other than 401, 403,
// 429): Berth answers those with 400 and the provider's user message, everything else with 500.
func (e *ProviderError) CallerFault() bool {
	return e.Status >= 400 && e.Status < 500 && e.Status != 401 && e.Status != 403 && e.Status != 429
}

// RefusesObject reports whether the provider refused the object itself: it does not exist for
// the key's account (404), or the key may not see it (403). Asking again gets the same answer.
func (e *ProviderError) RefusesObject() bool {
	return e.Status == 404 || e.Status == 403
}

// ---- pspx ----------------------------------------------------------------------------------

// Pspx is the first provider's REST API, the subset Berth uses.
type Pspx interface {
	CreateCustomer(ctx context.Context, key, idem string, in PspxCustomerInput) (PspxCustomer, error)
	Customer(ctx context.Context, key, id string) (PspxCustomer, error)
	// SetDefaultPaymentMethod sets invoice_settings.default_payment_method ("" clears it).
	SetDefaultPaymentMethod(ctx context.Context, key, idem, customerID, paymentMethodID string) (PspxCustomer, error)

	Price(ctx context.Context, key, id string) (PspxPrice, error)
	TaxRate(ctx context.Context, key, id string) (PspxTaxRate, error)
	// CreateProduct, CreatePrice and CreateTaxRate serve the demo seed and the tests; an app's
	// operators create these in the provider's dashboard.
	CreateProduct(ctx context.Context, key, idem, name string) (string, error)
	CreatePrice(ctx context.Context, key, idem string, in PspxPriceInput) (PspxPrice, error)
	CreateTaxRate(ctx context.Context, key, idem string, in PspxTaxRateInput) (PspxTaxRate, error)

	CreateCheckoutSession(ctx context.Context, key, idem string, in PspxCheckoutInput) (PspxCheckoutSession, error)
	// CheckoutSession fetches a session with its subscription, setup intent and payment intent
	// expanded, which is what the return page applies.
	CheckoutSession(ctx context.Context, key, id string) (PspxCheckoutSession, error)

	Subscription(ctx context.Context, key, id string) (PspxSubscription, error)
	CreateSubscription(ctx context.Context, key, idem string, in PspxSubscriptionInput) (PspxSubscription, error)
	UpdateSubscription(ctx context.Context, key, idem, id string, in PspxSubscriptionUpdate) (PspxSubscription, error)

	CreateInvoiceItem(ctx context.Context, key, idem string, in PspxInvoiceItemInput) error
	CreateInvoice(ctx context.Context, key, idem string, in PspxInvoiceInput) (PspxInvoice, error)
	FinalizeInvoice(ctx context.Context, key, idem, id string) (PspxInvoice, error)
	// PayInvoice charges the invoice with the given payment method ("" = the customer's default).
	// A declined charge is a *ProviderError (card_declined) and leaves the invoice open.
	PayInvoice(ctx context.Context, key, idem, id, paymentMethodID string) (PspxInvoice, error)
	VoidInvoice(ctx context.Context, key, idem, id string) (PspxInvoice, error)
	// UpdateInvoiceLine sets the description of a draft invoice's line.
	UpdateInvoiceLine(ctx context.Context, key, idem, invoiceID, lineID, description string) error
	Invoice(ctx context.Context, key, id string) (PspxInvoice, error)
	// ListInvoices is the provider's cursor list of a customer's invoices, newest first.
	ListInvoices(ctx context.Context, key string, q PspxInvoiceQuery) (PspxInvoicePage, error)
	// PaymentIntent is the provider's payment-intent object, raw (route 13 answers with it as is).
	PaymentIntent(ctx context.Context, key, id string) (json.RawMessage, error)

	// PaymentMethods lists the ids of every payment method attached to the customer (all types).
	PaymentMethods(ctx context.Context, key, customerID string) ([]string, error)
	DetachPaymentMethod(ctx context.Context, key, idem, id string) error
}

// PspxCustomerInput creates a customer. Metadata carries Berth's tenantId, appId and host, which
// the webhook ingest reads back.
type PspxCustomerInput struct {
	Email    string
	Name     string
	Metadata map[string]string
}

// PspxCustomer is a provider customer.
type PspxCustomer struct {
	ID                   string
	Email                string
	Name                 string
	DefaultPaymentMethod string // invoice_settings.default_payment_method, "" when none
	Metadata             map[string]string
	Livemode             bool
}

// PspxPriceInput creates a price: one-time when Interval is "".
type PspxPriceInput struct {
	Product       string
	UnitAmount    int64 // minor units
	Currency      string
	Interval      string // "", "day", "week", "month", "year"
	IntervalCount int64  // 0 means 1
}

// PspxPrice is a provider price.
type PspxPrice struct {
	ID            string
	Product       string
	UnitAmount    int64
	Currency      string
	Type          string // "one_time" or "recurring"
	Interval      string // recurring only
	IntervalCount int64
	Active        bool
	Livemode      bool
}

// PspxTaxRateInput creates a tax rate.
type PspxTaxRateInput struct {
	DisplayName string
	Percentage  float64
	Inclusive   bool
	Country     string
}

// PspxTaxRate is a provider tax rate.
type PspxTaxRate struct {
	ID          string
	DisplayName string
	Percentage  float64
	Inclusive   bool
	Active      bool
	Livemode    bool
}

// PspxCheckoutInput creates a hosted checkout session.
type PspxCheckoutInput struct {
	Customer                 string
	Mode                     string // "payment", "subscription" or "setup"
	Price                    string // not for setup
	Quantity                 int64
	TaxRate                  string // "" for none
	PaymentMethodType        string // "card" or "sepa_debit"
	BillingAddressCollection bool   // "required" when true, "auto" otherwise
	AllowedCountry           string // shipping_address_collection[allowed_countries][0]; "" for none
	Currency                 string // setup mode needs one
	SuccessURL               string // may contain {CHECKOUT_SESSION_ID}
	CancelURL                string
	ClientReferenceID        string
	Metadata                 map[string]string // also copied to the subscription / payment intent
}

// PspxCheckoutSession is a provider checkout session, with the objects it produced once complete.
type PspxCheckoutSession struct {
	ID            string
	URL           string // the hosted page; "" once complete or expired
	Mode          string
	Status        string // "open", "complete" or "expired"
	PaymentStatus string // "unpaid", "paid" or "no_payment_required"
	Customer      string
	AmountTotal   int64
	Currency      string
	Metadata      map[string]string
	Livemode      bool
	Created       time.Time

	Subscription  *PspxSubscription  // mode subscription, once complete
	PaymentIntent *PspxPaymentIntent // mode payment, once complete
	SetupIntent   *PspxSetupIntent   // mode setup, once complete
}

// PspxPaymentIntent is what billing reads of a payment intent.
type PspxPaymentIntent struct {
	ID            string
	Status        string // "succeeded", "processing", "requires_payment_method", ...
	Amount        int64
	Currency      string
	PaymentMethod string
	Created       time.Time
}

// PspxSetupIntent is what billing reads of a setup intent.
type PspxSetupIntent struct {
	ID            string
	Status        string // "succeeded" once the method is attached
	PaymentMethod string
}

// PspxSubscription is a provider subscription with its single item.
type PspxSubscription struct {
	ID                 string
	Customer           string
	Status             string // "active", "past_due", "canceled", "incomplete", "trialing", ...
	ItemID             string // items.data[0].id
	Price              string // items.data[0].price.id
	Product            string // items.data[0].price.product
	Quantity           int64
	CurrentPeriodStart time.Time
	CurrentPeriodEnd   time.Time
	CancelAtPeriodEnd  bool
	CancelAt           time.Time // zero when not set
	CanceledAt         time.Time
	LatestInvoice      string
	DefaultPayment     string // default_payment_method
	Metadata           map[string]string
	Livemode           bool
}

// PspxSubscriptionInput creates a subscription charged automatically (route 13 mode subscription).
type PspxSubscriptionInput struct {
	Customer             string
	Price                string
	Quantity             int64
	TaxRate              string
	DefaultPaymentMethod string // "" = the customer's default
	Metadata             map[string]string
}

// PspxSubscriptionUpdate changes a subscription; nil fields are left alone.
type PspxSubscriptionUpdate struct {
	// ItemID and Price replace the price of the subscription's item.
	ItemID            string
	Price             string
	Quantity          int64
	TaxRate           string
	ProrationBehavior string // "none", "create_prorations" or "always_invoice"; "" = provider default
	CancelAtPeriodEnd *bool
	Metadata          map[string]string
}

// PspxInvoiceItemInput adds an item to a draft invoice (or, without one, to the customer's next
// invoice): Price × Quantity, or a custom Amount in Currency described by Description.
type PspxInvoiceItemInput struct {
	Customer    string
	Price       string
	Quantity    int64
	Amount      int64 // minor units; only without Price
	Currency    string
	Description string
	TaxRate     string
	Invoice     string // attach to this draft invoice; "" = pending
	Metadata    map[string]string
}

// PspxInvoiceInput creates a draft invoice collecting the customer's pending items.
type PspxInvoiceInput struct {
	Customer             string
	Footer               string
	DefaultPaymentMethod string
	Metadata             map[string]string
	// PendingItemsBehavior "include" collects pending items (the default used by Berth).
	PendingItemsBehavior string
}

// PspxInvoice is a provider invoice: the fields billing reads, and the provider's object as sent,
// which route 20 returns unchanged.
type PspxInvoice struct {
	ID            string
	Customer      string
	Status        string // "draft", "open", "paid", "void", "uncollectible"
	Subscription  string
	BillingReason string // "subscription_create", "subscription_cycle", "subscription_update", "manual", ...
	PaymentIntent string
	AmountDue     int64
	AmountPaid    int64
	Currency      string
	PeriodEnd     time.Time
	Lines         []PspxInvoiceLine // the first page the invoice embeds
	Metadata      map[string]string
	Livemode      bool
	Raw           json.RawMessage
}

// PspxInvoiceLine is a line of an invoice.
type PspxInvoiceLine struct {
	ID          string
	Description string
	Quantity    int64
	PeriodStart time.Time // the period the line pays for
	PeriodEnd   time.Time
}

// PaysUntil is the end of the latest period the invoice's lines pay for: for a renewal, the
// period it renews (the invoice itself is dated by the period that ended).
func (inv PspxInvoice) PaysUntil() time.Time {
	var end time.Time
	for _, l := range inv.Lines {
		if l.PeriodEnd.After(end) {
			end = l.PeriodEnd
		}
	}
	return end
}

// PspxInvoiceQuery pages through a customer's invoices.
type PspxInvoiceQuery struct {
	Customer      string
	Limit         int    // 1..100
	StartingAfter string // invoice id cursor
	EndingBefore  string // invoice id cursor
}

// PspxInvoicePage is one page of invoices.
type PspxInvoicePage struct {
	Invoices []PspxInvoice
	HasMore  bool
}

// ---- pspy ----------------------------------------------------------------------------------

// Pspy is the second provider's v2 API, the subset Berth uses.
type Pspy interface {
	CreateCustomer(ctx context.Context, key, idem string, in PspyCustomerInput) (PspyCustomer, error)
	CreatePayment(ctx context.Context, key, idem string, in PspyPaymentInput) (PspyPayment, error)
	Payment(ctx context.Context, key, id string) (PspyPayment, error)
	CreateRefund(ctx context.Context, key, idem, paymentID string, amount PspyAmount, description string) (PspyRefund, error)
	Mandates(ctx context.Context, key, customerID string) ([]PspyMandate, error)
	RevokeMandate(ctx context.Context, key, customerID, mandateID string) error
	CreateSubscription(ctx context.Context, key, idem, customerID string, in PspySubscriptionInput) (PspySubscription, error)
	Subscription(ctx context.Context, key, customerID, id string) (PspySubscription, error)
	CancelSubscription(ctx context.Context, key, customerID, id string) (PspySubscription, error)
}

// PspyAmount is the provider's money value: a decimal string with exactly the currency's minor
// digits ("10.00") and an ISO 4217 currency.
type PspyAmount struct {
	Currency string
	Value    string
}

// PspyCustomerInput creates a customer.
type PspyCustomerInput struct {
	Name     string
	Email    string
	Metadata map[string]string
}

// PspyCustomer is a provider customer.
type PspyCustomer struct {
	ID       string
	Name     string
	Email    string
	Mode     string // "test" or "live"
	Metadata map[string]string
}

// PspyPaymentInput creates a payment. SequenceType "first" establishes a mandate (setup and the
// first subscription payment), "oneoff" is a single payment, "recurring" charges a mandate.
type PspyPaymentInput struct {
	Amount       PspyAmount
	Description  string
	RedirectURL  string
	CancelURL    string
	WebhookURL   string
	SequenceType string
	CustomerID   string
	MandateID    string   // recurring only
	Method       []string // e.g. ["creditcard"], ["directdebit"]; nil = payer chooses
	Metadata     map[string]string
}

// PspyPayment is a provider payment.
type PspyPayment struct {
	ID             string
	Mode           string // "test" or "live"
	Status         string // "open", "pending", "authorized", "paid", "failed", "canceled", "expired"
	Amount         PspyAmount
	AmountRefunded PspyAmount
	// AmountChargedBack is what the payer's bank took back; zero value or "0.00" when nothing.
	AmountChargedBack PspyAmount
	Description       string
	SequenceType      string
	CustomerID        string
	MandateID         string
	SubscriptionID    string // the subscription whose recurring payment this is, if any
	Method            string
	CheckoutURL       string // _links.checkout.href, while the payment is open
	Metadata          map[string]string
	CreatedAt         time.Time
	PaidAt            time.Time
	// Refunds and chargebacks counted, so an effect keyed by observed state sees a new state.
	RefundsCount     int
	ChargebacksCount int
}

// ChargedBack reports whether the payer's bank took the payment back.
func (p PspyPayment) ChargedBack() bool {
	return p.ChargebacksCount > 0 || strings.Trim(p.AmountChargedBack.Value, "0.") != ""
}

// PspyRefund is a provider refund.
type PspyRefund struct {
	ID        string
	PaymentID string
	Status    string
	Amount    PspyAmount
}

// PspyMandate is a customer's mandate (a stored card or direct-debit authorisation).
type PspyMandate struct {
	ID        string
	Method    string // "creditcard" or "directdebit"
	Status    string // "valid", "pending", "invalid"
	CreatedAt time.Time
}

// PspySubscriptionInput creates a subscription charging the customer's mandate each interval.
type PspySubscriptionInput struct {
	Amount      PspyAmount
	Interval    string // "1 month", "12 months", "1 year", "14 days", ...
	StartDate   string // YYYY-MM-DD; the first charge happens on it
	Description string
	MandateID   string
	WebhookURL  string
	Metadata    map[string]string
}

// PspySubscription is a provider subscription.
type PspySubscription struct {
	ID              string
	CustomerID      string
	Mode            string
	Status          string // "pending", "active", "canceled", "suspended", "completed"
	Amount          PspyAmount
	Interval        string
	StartDate       string
	NextPaymentDate string
	MandateID       string
	CanceledAt      time.Time
	Metadata        map[string]string
}
