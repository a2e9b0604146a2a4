package pspx

import (
	"encoding/json"
	"strconv"
	"time"
)

// The types below are the provider's objects as it sends them: every field present, null when
// unset, ids where an object is not expanded. Fields the sandbox has no behaviour for carry the
// value an account without that feature shows.

type listJSON struct {
	Object  string `json:"object"`
	Data    any    `json:"data"`
	HasMore bool   `json:"has_more"`
	URL     string `json:"url"`
}

type addressJSON struct {
	City       *string `json:"city"`
	Country    *string `json:"country"`
	Line1      *string `json:"line1"`
	Line2      *string `json:"line2"`
	PostalCode *string `json:"postal_code"`
	State      *string `json:"state"`
}

func unix(t time.Time) int64 { return t.Unix() }

func nullTime(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	u := t.Unix()
	return &u
}

func nullStr(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// meta renders metadata, {} rather than null when empty.
func meta(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func renderAddress(a *address) *addressJSON {
	if a == nil {
		return nil
	}
	return &addressJSON{City: nullStr(a.city), Country: nullStr(a.country), Line1: nullStr(a.line1), PostalCode: nullStr(a.postalCode)}
}

// ---- customers and catalog ----

type customerJSON struct {
	ID               string              `json:"id"`
	Object           string              `json:"object"`
	Address          *addressJSON        `json:"address"`
	Balance          int64               `json:"balance"`
	Created          int64               `json:"created"`
	Currency         *string             `json:"currency"`
	DefaultSource    *string             `json:"default_source"`
	Delinquent       bool                `json:"delinquent"`
	Description      *string             `json:"description"`
	Email            *string             `json:"email"`
	InvoicePrefix    string              `json:"invoice_prefix"`
	InvoiceSettings  invoiceSettingsJSON `json:"invoice_settings"`
	Livemode         bool                `json:"livemode"`
	Metadata         map[string]string   `json:"metadata"`
	Name             *string             `json:"name"`
	Phone            *string             `json:"phone"`
	PreferredLocales []string            `json:"preferred_locales"`
	Shipping         any                 `json:"shipping"`
	TaxExempt        string              `json:"tax_exempt"`
}

type invoiceSettingsJSON struct {
	CustomFields         any     `json:"custom_fields"`
	DefaultPaymentMethod *string `json:"default_payment_method"`
	Footer               *string `json:"footer"`
	RenderingOptions     any     `json:"rendering_options"`
}

func (a *account) renderCustomer(c *customer) customerJSON {
	return customerJSON{
		ID: c.id, Object: "customer", Balance: c.balance, Created: unix(c.created), Currency: nullStr(c.currency),
		Delinquent: c.delinquent, Description: nullStr(c.description), Email: nullStr(c.email),
		InvoicePrefix:   c.invoicePrefix,
		InvoiceSettings: invoiceSettingsJSON{DefaultPaymentMethod: nullStr(c.defaultPM)},
		Livemode:        a.live, Metadata: meta(c.metadata), Name: nullStr(c.name), PreferredLocales: []string{}, TaxExempt: "none",
	}
}

type productJSON struct {
	ID           string            `json:"id"`
	Object       string            `json:"object"`
	Active       bool              `json:"active"`
	Created      int64             `json:"created"`
	DefaultPrice *string           `json:"default_price"`
	Description  *string           `json:"description"`
	Images       []string          `json:"images"`
	Livemode     bool              `json:"livemode"`
	Metadata     map[string]string `json:"metadata"`
	Name         string            `json:"name"`
	TaxCode      *string           `json:"tax_code"`
	Type         string            `json:"type"`
	UnitLabel    *string           `json:"unit_label"`
	Updated      int64             `json:"updated"`
	URL          *string           `json:"url"`
}

func (a *account) renderProduct(p *product) productJSON {
	return productJSON{
		ID: p.id, Object: "product", Active: true, Created: unix(p.created), Description: nullStr(p.description),
		Images: []string{}, Livemode: a.live, Metadata: meta(p.metadata), Name: p.name, Type: "service", Updated: unix(p.created),
	}
}

type priceJSON struct {
	ID                string            `json:"id"`
	Object            string            `json:"object"`
	Active            bool              `json:"active"`
	BillingScheme     string            `json:"billing_scheme"`
	Created           int64             `json:"created"`
	Currency          string            `json:"currency"`
	Livemode          bool              `json:"livemode"`
	LookupKey         *string           `json:"lookup_key"`
	Metadata          map[string]string `json:"metadata"`
	Nickname          *string           `json:"nickname"`
	Product           string            `json:"product"`
	Recurring         *recurringJSON    `json:"recurring"`
	TaxBehavior       string            `json:"tax_behavior"`
	TiersMode         *string           `json:"tiers_mode"`
	TransformQuantity any               `json:"transform_quantity"`
	Type              string            `json:"type"`
	UnitAmount        int64             `json:"unit_amount"`
	UnitAmountDecimal string            `json:"unit_amount_decimal"`
}

type recurringJSON struct {
	AggregateUsage  *string `json:"aggregate_usage"`
	Interval        string  `json:"interval"`
	IntervalCount   int64   `json:"interval_count"`
	TrialPeriodDays *int64  `json:"trial_period_days"`
	UsageType       string  `json:"usage_type"`
}

func (a *account) renderPrice(p *price) priceJSON {
	out := priceJSON{
		ID: p.id, Object: "price", Active: true, BillingScheme: "per_unit", Created: unix(p.created), Currency: p.currency,
		Livemode: a.live, Metadata: meta(p.metadata), Nickname: nullStr(p.nickname), Product: p.product,
		TaxBehavior: "unspecified", Type: "one_time", UnitAmount: p.unitAmount, UnitAmountDecimal: strconv.FormatInt(p.unitAmount, 10),
	}
	if p.interval != "" {
		out.Type = "recurring"
		out.Recurring = &recurringJSON{Interval: p.interval, IntervalCount: p.intervalCount, UsageType: "licensed"}
	}
	return out
}

type taxRateJSON struct {
	ID                  string            `json:"id"`
	Object              string            `json:"object"`
	Active              bool              `json:"active"`
	Country             *string           `json:"country"`
	Created             int64             `json:"created"`
	Description         *string           `json:"description"`
	DisplayName         string            `json:"display_name"`
	EffectivePercentage json.Number       `json:"effective_percentage"`
	Inclusive           bool              `json:"inclusive"`
	Jurisdiction        *string           `json:"jurisdiction"`
	Livemode            bool              `json:"livemode"`
	Metadata            map[string]string `json:"metadata"`
	Percentage          json.Number       `json:"percentage"`
	State               *string           `json:"state"`
	TaxType             *string           `json:"tax_type"`
}

func (a *account) renderTaxRate(r *taxRate) taxRateJSON {
	pct := json.Number(formatPercent(r.percent))
	return taxRateJSON{
		ID: r.id, Object: "tax_rate", Active: true, Country: nullStr(r.country), Created: unix(r.created),
		Description: nullStr(r.description), DisplayName: r.displayName, EffectivePercentage: pct, Inclusive: r.inclusive,
		Livemode: a.live, Metadata: meta(r.metadata), Percentage: pct,
	}
}

func (a *account) renderTaxRates(id string) []taxRateJSON {
	if r := a.taxRates[id]; r != nil {
		return []taxRateJSON{a.renderTaxRate(r)}
	}
	return []taxRateJSON{}
}

// ---- payment methods and intents ----

type paymentMethodJSON struct {
	ID             string             `json:"id"`
	Object         string             `json:"object"`
	BillingDetails billingDetailsJSON `json:"billing_details"`
	Card           *cardJSON          `json:"card,omitempty"`
	Created        int64              `json:"created"`
	Customer       *string            `json:"customer"`
	Livemode       bool               `json:"livemode"`
	Metadata       map[string]string  `json:"metadata"`
	SepaDebit      *sepaDebitJSON     `json:"sepa_debit,omitempty"`
	Type           string             `json:"type"`
}

type billingDetailsJSON struct {
	Address *addressJSON `json:"address"`
	Email   *string      `json:"email"`
	Name    *string      `json:"name"`
	Phone   *string      `json:"phone"`
}

type cardJSON struct {
	Brand        string            `json:"brand"`
	Checks       map[string]string `json:"checks"`
	Country      string            `json:"country"`
	DisplayBrand string            `json:"display_brand"`
	ExpMonth     int               `json:"exp_month"`
	ExpYear      int               `json:"exp_year"`
	Fingerprint  string            `json:"fingerprint"`
	Funding      string            `json:"funding"`
	Last4        string            `json:"last4"`
	Wallet       any               `json:"wallet"`
}

type sepaDebitJSON struct {
	BankCode    string  `json:"bank_code"`
	BranchCode  string  `json:"branch_code"`
	Country     string  `json:"country"`
	Fingerprint string  `json:"fingerprint"`
	Last4       string  `json:"last4"`
	Mandate     *string `json:"mandate,omitempty"`
}

func (a *account) renderPaymentMethod(m *paymentMethod) paymentMethodJSON {
	out := paymentMethodJSON{
		ID: m.id, Object: "payment_method", Created: unix(m.created), Customer: nullStr(m.customer), Livemode: a.live,
		Metadata: map[string]string{}, Type: m.typ,
		BillingDetails: billingDetailsJSON{Address: renderAddress(m.billing.address), Name: nullStr(m.billing.name)},
	}
	if m.typ == "card" {
		out.Card = &cardJSON{
			Brand: "visa", Country: "US", DisplayBrand: "visa", ExpMonth: m.expMonth, ExpYear: m.expYear, Fingerprint: m.fingerprint,
			Funding: "credit", Last4: m.last4, Checks: map[string]string{"cvc_check": "pass"},
		}
	} else {
		out.SepaDebit = &sepaDebitJSON{BankCode: m.bankCode, Country: "DE", Fingerprint: m.fingerprint, Last4: m.last4}
	}
	return out
}

type paymentIntentJSON struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	Amount             int64             `json:"amount"`
	AmountCapturable   int64             `json:"amount_capturable"`
	AmountReceived     int64             `json:"amount_received"`
	CanceledAt         *int64            `json:"canceled_at"`
	CaptureMethod      string            `json:"capture_method"`
	ClientSecret       string            `json:"client_secret"`
	ConfirmationMethod string            `json:"confirmation_method"`
	Created            int64             `json:"created"`
	Currency           string            `json:"currency"`
	Customer           *string           `json:"customer"`
	Description        *string           `json:"description"`
	Invoice            *string           `json:"invoice"`
	LastPaymentError   *paymentErrorJSON `json:"last_payment_error"`
	Livemode           bool              `json:"livemode"`
	Metadata           map[string]string `json:"metadata"`
	NextAction         any               `json:"next_action"`
	PaymentMethod      *string           `json:"payment_method"`
	PaymentMethodTypes []string          `json:"payment_method_types"`
	SetupFutureUsage   *string           `json:"setup_future_usage"`
	Status             string            `json:"status"`
}

type paymentErrorJSON struct {
	Code          string             `json:"code"`
	DeclineCode   string             `json:"decline_code,omitempty"`
	Message       string             `json:"message"`
	PaymentMethod *paymentMethodJSON `json:"payment_method,omitempty"`
	Type          string             `json:"type"`
}

func (a *account) renderIntent(pi *paymentIntent) paymentIntentJSON {
	out := paymentIntentJSON{
		ID: pi.id, Object: "payment_intent", Amount: pi.amount, AmountReceived: pi.received, CanceledAt: nullTime(pi.canceledAt), CaptureMethod: "automatic",
		ClientSecret: pi.secret, ConfirmationMethod: "automatic", Created: unix(pi.created), Currency: pi.currency,
		Customer: nullStr(pi.customer), Description: nullStr(pi.description), Invoice: nullStr(pi.invoice), Livemode: a.live,
		Metadata: meta(pi.metadata), PaymentMethod: nullStr(pi.pm), PaymentMethodTypes: []string{pi.pmType}, Status: pi.status,
	}
	if e := pi.lastError; e != nil {
		out.LastPaymentError = &paymentErrorJSON{Code: e.Code, DeclineCode: e.DeclineCode, Message: e.Message, Type: e.Type}
		if m := a.methods[pi.pm]; m != nil {
			pm := a.renderPaymentMethod(m)
			out.LastPaymentError.PaymentMethod = &pm
		}
	}
	return out
}

type setupIntentJSON struct {
	ID                 string            `json:"id"`
	Object             string            `json:"object"`
	ClientSecret       string            `json:"client_secret"`
	Created            int64             `json:"created"`
	Customer           *string           `json:"customer"`
	Description        *string           `json:"description"`
	LastSetupError     any               `json:"last_setup_error"`
	Livemode           bool              `json:"livemode"`
	Metadata           map[string]string `json:"metadata"`
	NextAction         any               `json:"next_action"`
	PaymentMethod      *string           `json:"payment_method"`
	PaymentMethodTypes []string          `json:"payment_method_types"`
	Status             string            `json:"status"`
	Usage              string            `json:"usage"`
}

func (a *account) renderSetupIntent(si *setupIntent) setupIntentJSON {
	return setupIntentJSON{
		ID: si.id, Object: "setup_intent", ClientSecret: si.secret, Created: unix(si.created), Customer: nullStr(si.customer),
		Livemode: a.live, Metadata: map[string]string{}, PaymentMethod: nullStr(si.pm), PaymentMethodTypes: []string{si.pmType},
		Status: "succeeded", Usage: "off_session",
	}
}

// ---- subscriptions ----

type subscriptionJSON struct {
	ID                   string            `json:"id"`
	Object               string            `json:"object"`
	BillingCycleAnchor   int64             `json:"billing_cycle_anchor"`
	CancelAt             *int64            `json:"cancel_at"`
	CancelAtPeriodEnd    bool              `json:"cancel_at_period_end"`
	CanceledAt           *int64            `json:"canceled_at"`
	CollectionMethod     string            `json:"collection_method"`
	Created              int64             `json:"created"`
	Currency             string            `json:"currency"`
	CurrentPeriodEnd     int64             `json:"current_period_end"`
	CurrentPeriodStart   int64             `json:"current_period_start"`
	Customer             string            `json:"customer"`
	DaysUntilDue         *int64            `json:"days_until_due"`
	DefaultPaymentMethod *string           `json:"default_payment_method"`
	DefaultTaxRates      []taxRateJSON     `json:"default_tax_rates"`
	EndedAt              *int64            `json:"ended_at"`
	Items                listJSON          `json:"items"`
	LatestInvoice        *string           `json:"latest_invoice"`
	Livemode             bool              `json:"livemode"`
	Metadata             map[string]string `json:"metadata"`
	StartDate            int64             `json:"start_date"`
	Status               string            `json:"status"`
	TrialEnd             *int64            `json:"trial_end"`
	TrialStart           *int64            `json:"trial_start"`
}

type subscriptionItemJSON struct {
	ID           string            `json:"id"`
	Object       string            `json:"object"`
	Created      int64             `json:"created"`
	Metadata     map[string]string `json:"metadata"`
	Price        priceJSON         `json:"price"`
	Quantity     int64             `json:"quantity"`
	Subscription string            `json:"subscription"`
	TaxRates     []taxRateJSON     `json:"tax_rates"`
}

func (a *account) renderSubscription(s *subscription) subscriptionJSON {
	start, end := a.period(s)
	var cancelAt *int64
	if s.cancelAtPeriodEnd {
		cancelAt = nullTime(end)
	}
	item := subscriptionItemJSON{
		ID: s.itemID, Object: "subscription_item", Created: unix(s.itemCreated), Metadata: map[string]string{},
		Price: a.renderPrice(a.prices[s.price]), Quantity: s.quantity, Subscription: s.id, TaxRates: a.renderTaxRates(s.taxRate),
	}
	return subscriptionJSON{
		ID: s.id, Object: "subscription", BillingCycleAnchor: unix(s.anchor), CancelAt: cancelAt, CancelAtPeriodEnd: s.cancelAtPeriodEnd,
		CanceledAt: nullTime(s.canceledAt), CollectionMethod: "charge_automatically", Created: unix(s.created), Currency: s.currency,
		CurrentPeriodEnd: unix(end), CurrentPeriodStart: unix(start), Customer: s.customer,
		DefaultPaymentMethod: nullStr(s.defaultPM), DefaultTaxRates: []taxRateJSON{}, EndedAt: nullTime(s.endedAt),
		Items:         listJSON{Object: "list", Data: []subscriptionItemJSON{item}, URL: "/v1/subscription_items?subscription=" + s.id},
		LatestInvoice: nullStr(s.latestInvoice), Livemode: a.live, Metadata: meta(s.metadata), StartDate: unix(s.created), Status: s.status,
	}
}

// ---- invoices ----

type invoiceJSON struct {
	ID                   string            `json:"id"`
	Object               string            `json:"object"`
	AccountCountry       string            `json:"account_country"`
	AccountName          string            `json:"account_name"`
	AmountDue            int64             `json:"amount_due"`
	AmountPaid           int64             `json:"amount_paid"`
	AmountRemaining      int64             `json:"amount_remaining"`
	AttemptCount         int               `json:"attempt_count"`
	Attempted            bool              `json:"attempted"`
	AutoAdvance          bool              `json:"auto_advance"`
	BillingReason        string            `json:"billing_reason"`
	CollectionMethod     string            `json:"collection_method"`
	Created              int64             `json:"created"`
	Currency             string            `json:"currency"`
	Customer             string            `json:"customer"`
	CustomerEmail        *string           `json:"customer_email"`
	CustomerName         *string           `json:"customer_name"`
	DefaultPaymentMethod *string           `json:"default_payment_method"`
	Description          *string           `json:"description"`
	EndingBalance        *int64            `json:"ending_balance"`
	Footer               *string           `json:"footer"`
	HostedInvoiceURL     *string           `json:"hosted_invoice_url"`
	InvoicePDF           *string           `json:"invoice_pdf"`
	Lines                listJSON          `json:"lines"`
	Livemode             bool              `json:"livemode"`
	Metadata             map[string]string `json:"metadata"`
	NextPaymentAttempt   *int64            `json:"next_payment_attempt"`
	Number               *string           `json:"number"`
	Paid                 bool              `json:"paid"`
	PaidOutOfBand        bool              `json:"paid_out_of_band"`
	PaymentIntent        *string           `json:"payment_intent"`
	PeriodEnd            int64             `json:"period_end"`
	PeriodStart          int64             `json:"period_start"`
	StartingBalance      int64             `json:"starting_balance"`
	Status               string            `json:"status"`
	StatusTransitions    statusTransitions `json:"status_transitions"`
	Subscription         *string           `json:"subscription"`
	Subtotal             int64             `json:"subtotal"`
	SubtotalExcludingTax int64             `json:"subtotal_excluding_tax"`
	Tax                  *int64            `json:"tax"`
	Total                int64             `json:"total"`
	TotalExcludingTax    int64             `json:"total_excluding_tax"`
	TotalTaxAmounts      []taxAmountJSON   `json:"total_tax_amounts"`
	WebhooksDeliveredAt  *int64            `json:"webhooks_delivered_at"`
}

type statusTransitions struct {
	FinalizedAt           *int64 `json:"finalized_at"`
	MarkedUncollectibleAt *int64 `json:"marked_uncollectible_at"`
	PaidAt                *int64 `json:"paid_at"`
	VoidedAt              *int64 `json:"voided_at"`
}

type taxAmountJSON struct {
	Amount    int64  `json:"amount"`
	Inclusive bool   `json:"inclusive"`
	TaxRate   string `json:"tax_rate"`
}

type periodJSON struct {
	End   int64 `json:"end"`
	Start int64 `json:"start"`
}

type invoiceLineJSON struct {
	ID               string            `json:"id"`
	Object           string            `json:"object"`
	Amount           int64             `json:"amount"`
	Currency         string            `json:"currency"`
	Description      *string           `json:"description"`
	Discountable     bool              `json:"discountable"`
	InvoiceItem      *string           `json:"invoice_item,omitempty"`
	Livemode         bool              `json:"livemode"`
	Metadata         map[string]string `json:"metadata"`
	Period           periodJSON        `json:"period"`
	Price            *priceJSON        `json:"price"`
	Proration        bool              `json:"proration"`
	Quantity         int64             `json:"quantity"`
	Subscription     *string           `json:"subscription"`
	SubscriptionItem *string           `json:"subscription_item,omitempty"`
	TaxAmounts       []taxAmountJSON   `json:"tax_amounts"`
	TaxRates         []taxRateJSON     `json:"tax_rates"`
	Type             string            `json:"type"`
}

// totals are an invoice's sums: subtotal (line amounts, inclusive tax included), tax, and total
// (subtotal plus exclusive tax).
type totals struct {
	subtotal, tax, total, exclusiveTax int64
	byRate                             []taxAmountJSON
}

func (a *account) totals(inv *invoice) totals {
	var t totals
	for _, l := range inv.lines {
		r := a.taxRates[l.taxRate]
		t.subtotal += l.amount
		t.tax += l.tax
		t.total += lineTotal(l.amount, l.tax, r)
		if r == nil {
			continue
		}
		if !r.inclusive {
			t.exclusiveTax += l.tax
		}
		found := false
		for i := range t.byRate {
			if t.byRate[i].TaxRate == r.id {
				t.byRate[i].Amount += l.tax
				found = true
			}
		}
		if !found {
			t.byRate = append(t.byRate, taxAmountJSON{Amount: l.tax, Inclusive: r.inclusive, TaxRate: r.id})
		}
	}
	return t
}

func (a *account) renderInvoice(inv *invoice) invoiceJSON {
	t := a.totals(inv)
	cust := a.customers[inv.customer]
	lines := make([]invoiceLineJSON, 0, len(inv.lines))
	for _, l := range inv.lines {
		lines = append(lines, a.renderLine(inv, l))
	}
	amountDue := inv.amountDue
	var ending *int64
	if inv.status == "draft" {
		amountDue = max(0, t.total)
	} else {
		e := min(0, inv.startingBalance+t.total)
		ending = &e
	}
	remaining := amountDue - inv.amountPaid
	if inv.status == "void" || inv.status == "paid" {
		remaining = 0
	}
	byRate := t.byRate
	if byRate == nil {
		byRate = []taxAmountJSON{}
	}
	var taxp *int64
	if t.byRate != nil {
		taxp = &t.tax
	}
	var email, name string
	if cust != nil {
		email, name = cust.email, cust.name
	}
	return invoiceJSON{
		ID: inv.id, Object: "invoice", AccountCountry: "DE", AccountName: "pspx sandbox", AmountDue: amountDue,
		AmountPaid: inv.amountPaid, AmountRemaining: remaining, AttemptCount: inv.attempts, Attempted: inv.attempts > 0, AutoAdvance: inv.autoAdvance,
		BillingReason: inv.billingReason, CollectionMethod: "charge_automatically", Created: unix(inv.created),
		Currency: inv.currency, Customer: inv.customer, CustomerEmail: nullStr(email), CustomerName: nullStr(name),
		DefaultPaymentMethod: nullStr(inv.defaultPM), EndingBalance: ending, Footer: nullStr(inv.footer),
		Lines:    listJSON{Object: "list", Data: lines, URL: "/v1/invoices/" + inv.id + "/lines"},
		Livemode: a.live, Metadata: meta(inv.metadata), Number: nullStr(inv.number),
		Paid: inv.status == "paid", PaymentIntent: nullStr(inv.intent), PeriodEnd: unix(inv.periodEnd),
		PeriodStart: unix(inv.periodStart), StartingBalance: inv.startingBalance, Status: inv.status,
		StatusTransitions: statusTransitions{
			FinalizedAt: nullTime(inv.finalizedAt), MarkedUncollectibleAt: nullTime(inv.uncollectibleAt),
			PaidAt: nullTime(inv.paidAt), VoidedAt: nullTime(inv.voidedAt),
		},
		Subscription: nullStr(inv.subscription), Subtotal: t.subtotal, SubtotalExcludingTax: t.subtotal - (t.tax - t.exclusiveTax),
		Tax: taxp, Total: t.total, TotalExcludingTax: t.total - t.tax, TotalTaxAmounts: byRate,
	}
}

// renderLine renders one line of an invoice.
func (a *account) renderLine(inv *invoice, l *invoiceLine) invoiceLineJSON {
	lj := invoiceLineJSON{
		ID: l.id, Object: "line_item", Amount: l.amount, Currency: inv.currency, Description: nullStr(l.description),
		Discountable: true, Livemode: a.live, Metadata: meta(l.metadata),
		Period: periodJSON{Start: unix(l.periodStart), End: unix(l.periodEnd)}, Proration: l.proration, Quantity: l.quantity,
		Subscription: nullStr(l.subscription), SubscriptionItem: nullStr(l.subItem), TaxRates: a.renderTaxRates(l.taxRate),
		TaxAmounts: []taxAmountJSON{}, Type: l.typ,
	}
	if l.typ == "invoiceitem" {
		lj.InvoiceItem = &l.item
	}
	if p := a.prices[l.price]; p != nil {
		pj := a.renderPrice(p)
		lj.Price = &pj
	}
	if r := a.taxRates[l.taxRate]; r != nil {
		lj.TaxAmounts = []taxAmountJSON{{Amount: l.tax, Inclusive: r.inclusive, TaxRate: r.id}}
	}
	return lj
}

// ---- checkout sessions ----

type sessionJSON struct {
	ID                        string              `json:"id"`
	Object                    string              `json:"object"`
	AmountSubtotal            *int64              `json:"amount_subtotal"`
	AmountTotal               *int64              `json:"amount_total"`
	BillingAddressCollection  string              `json:"billing_address_collection"`
	CancelURL                 *string             `json:"cancel_url"`
	ClientReferenceID         *string             `json:"client_reference_id"`
	Created                   int64               `json:"created"`
	Currency                  *string             `json:"currency"`
	Customer                  any                 `json:"customer"`
	CustomerDetails           *customerDetails    `json:"customer_details"`
	ExpiresAt                 int64               `json:"expires_at"`
	Invoice                   any                 `json:"invoice"`
	Livemode                  bool                `json:"livemode"`
	Metadata                  map[string]string   `json:"metadata"`
	Mode                      string              `json:"mode"`
	PaymentIntent             any                 `json:"payment_intent"`
	PaymentMethodTypes        []string            `json:"payment_method_types"`
	PaymentStatus             string              `json:"payment_status"`
	SetupIntent               any                 `json:"setup_intent"`
	ShippingAddressCollection *shippingCollection `json:"shipping_address_collection"`
	ShippingDetails           *shippingDetails    `json:"shipping_details"`
	Status                    string              `json:"status"`
	Subscription              any                 `json:"subscription"`
	SuccessURL                string              `json:"success_url"`
	TotalDetails              *totalDetails       `json:"total_details"`
	URL                       *string             `json:"url"`
}

type customerDetails struct {
	Address *addressJSON `json:"address"`
	Email   *string      `json:"email"`
	Name    *string      `json:"name"`
	Phone   *string      `json:"phone"`
}

type shippingCollection struct {
	AllowedCountries []string `json:"allowed_countries"`
}

type shippingDetails struct {
	Address *addressJSON `json:"address"`
	Name    *string      `json:"name"`
}

type totalDetails struct {
	AmountDiscount int64 `json:"amount_discount"`
	AmountShipping int64 `json:"amount_shipping"`
	AmountTax      int64 `json:"amount_tax"`
}

// sessionAmounts sums a session's lines: subtotal, tax and total.
func (a *account) sessionAmounts(s *session) (subtotal, taxes, total int64) {
	for _, l := range s.lines {
		p, r := a.prices[l.price], a.taxRates[l.taxRate]
		amount := p.unitAmount * l.quantity
		t := tax(amount, r)
		subtotal += amount
		taxes += t
		total += lineTotal(amount, t, r)
	}
	return subtotal, taxes, total
}

// renderSession renders a session, expanding the named fields.
func (a *account) renderSession(s *session, base string, expand map[string]bool) sessionJSON {
	collect := "auto"
	if s.addressRequired {
		collect = "required"
	}
	out := sessionJSON{
		ID: s.id, Object: "checkout.session", BillingAddressCollection: collect, CancelURL: nullStr(s.cancelURL),
		ClientReferenceID: nullStr(s.clientRef), Created: unix(s.created), Currency: nullStr(s.currency),
		ExpiresAt: unix(s.expiresAt), Livemode: a.live, Metadata: meta(s.metadata), Mode: s.mode,
		PaymentMethodTypes: []string{s.pmType}, PaymentStatus: s.paymentStatus, Status: s.status, SuccessURL: s.successURL,
	}
	if s.mode != "setup" {
		sub, t, total := a.sessionAmounts(s)
		out.AmountSubtotal, out.AmountTotal = &sub, &total
		out.TotalDetails = &totalDetails{AmountTax: t}
	}
	if s.status == "open" {
		u := base + "/checkout/" + s.id
		out.URL = &u
	}
	if len(s.shippingCountries) > 0 {
		out.ShippingAddressCollection = &shippingCollection{AllowedCountries: s.shippingCountries}
	}
	if d := s.customerDetails; d != nil {
		out.CustomerDetails = &customerDetails{Address: renderAddress(d.address), Email: nullStr(s.email), Name: nullStr(d.name)}
	}
	if d := s.shipping; d != nil {
		out.ShippingDetails = &shippingDetails{Address: renderAddress(d.address), Name: nullStr(d.name)}
	}
	out.Customer = expandable(s.customer, expand["customer"], func() any { return a.renderCustomer(a.customers[s.customer]) })
	out.Invoice = expandable(s.invoice, expand["invoice"], func() any { return a.renderInvoice(a.invoices[s.invoice]) })
	out.PaymentIntent = expandable(s.intent, expand["payment_intent"], func() any { return a.renderIntent(a.intents[s.intent]) })
	out.SetupIntent = expandable(s.seti, expand["setup_intent"], func() any { return a.renderSetupIntent(a.setups[s.seti]) })
	out.Subscription = expandable(s.subscription, expand["subscription"], func() any { return a.renderSubscription(a.subs[s.subscription]) })
	return out
}

// expandable is a reference field: null, the id, or the object when the caller expanded it.
func expandable(id string, expand bool, render func() any) any {
	switch {
	case id == "":
		return nil
	case expand:
		return render()
	}
	return id
}

// ---- events ----

type eventJSON struct {
	ID              string       `json:"id"`
	Object          string       `json:"object"`
	APIVersion      string       `json:"api_version"`
	Created         int64        `json:"created"`
	Data            eventData    `json:"data"`
	Livemode        bool         `json:"livemode"`
	PendingWebhooks int          `json:"pending_webhooks"`
	Request         eventRequest `json:"request"`
	Type            string       `json:"type"`
}

type eventData struct {
	Object             json.RawMessage `json:"object"`
	PreviousAttributes json.RawMessage `json:"previous_attributes,omitempty"`
}

type eventRequest struct {
	ID             *string `json:"id"`
	IdempotencyKey *string `json:"idempotency_key"`
}

// ---- invoice items ----

type invoiceItemJSON struct {
	ID                string            `json:"id"`
	Object            string            `json:"object"`
	Amount            int64             `json:"amount"`
	Currency          string            `json:"currency"`
	Customer          string            `json:"customer"`
	Date              int64             `json:"date"`
	Description       *string           `json:"description"`
	Discountable      bool              `json:"discountable"`
	Invoice           *string           `json:"invoice"`
	Livemode          bool              `json:"livemode"`
	Metadata          map[string]string `json:"metadata"`
	Period            periodJSON        `json:"period"`
	Price             *priceJSON        `json:"price"` // null for an item of a custom amount
	Proration         bool              `json:"proration"`
	Quantity          int64             `json:"quantity"`
	Subscription      *string           `json:"subscription"`
	TaxRates          []taxRateJSON     `json:"tax_rates"`
	UnitAmount        int64             `json:"unit_amount"`
	UnitAmountDecimal string            `json:"unit_amount_decimal"`
}

func (a *account) renderItem(it *invoiceItem) invoiceItemJSON {
	out := invoiceItemJSON{
		ID: it.id, Object: "invoiceitem", Amount: it.amount, Currency: it.currency, Customer: it.customer, Date: unix(it.created),
		Description: nullStr(it.description), Discountable: !it.proration, Invoice: nullStr(it.invoice), Livemode: a.live,
		Metadata: meta(it.metadata), Period: periodJSON{Start: unix(it.periodStart), End: unix(it.periodEnd)},
		Proration: it.proration, Quantity: it.quantity, Subscription: nullStr(it.subscription), TaxRates: a.renderTaxRates(it.taxRate),
	}
	// An item of a price costs the price's unit amount per unit; one of a custom amount, its amount.
	unit := it.amount / max(it.quantity, 1)
	if p := a.prices[it.price]; p != nil {
		pj := a.renderPrice(p)
		out.Price, unit = &pj, p.unitAmount
	}
	out.UnitAmount, out.UnitAmountDecimal = unit, strconv.FormatInt(unit, 10)
	return out
}
