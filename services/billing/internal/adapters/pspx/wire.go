package pspx

import (
	"bytes"
	"encoding/json"
	"fmt"
	"time"

	"github.com/berthhq/berth/services/billing/internal/app"
)

// The wire types hold what billing reads of the provider's objects; every other field of an
// answer is ignored. Each conversion checks the object's type, so an answer of the wrong kind
// is an error rather than a zero value.

// ref is a reference field, which the provider sends as null, an id, or the expanded object.
type ref string

func (r *ref) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*r = ""
		return nil
	case len(b) > 0 && b[0] == '{':
		var o struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(b, &o); err != nil {
			return err
		}
		*r = ref(o.ID)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*r = ref(s)
	return nil
}

// unixTime converts the provider's unix seconds; 0 and null are the zero time.
func unixTime(s *int64) time.Time {
	if s == nil || *s == 0 {
		return time.Time{}
	}
	return time.Unix(*s, 0).UTC()
}

func check(kind, object, id string) error {
	if object != kind || id == "" {
		return fmt.Errorf("pspx: expected a %s, the answer is a %q with id %q", kind, object, id)
	}
	return nil
}

type customerWire struct {
	ID              string            `json:"id"`
	Object          string            `json:"object"`
	Email           string            `json:"email"`
	Name            string            `json:"name"`
	Metadata        map[string]string `json:"metadata"`
	Livemode        bool              `json:"livemode"`
	InvoiceSettings struct {
		DefaultPaymentMethod ref `json:"default_payment_method"`
	} `json:"invoice_settings"`
}

func (w customerWire) app() (app.PspxCustomer, error) {
	return app.PspxCustomer{
		ID: w.ID, Email: w.Email, Name: w.Name, DefaultPaymentMethod: string(w.InvoiceSettings.DefaultPaymentMethod),
		Metadata: w.Metadata, Livemode: w.Livemode,
	}, check("customer", w.Object, w.ID)
}

type priceWire struct {
	ID         string `json:"id"`
	Object     string `json:"object"`
	Product    ref    `json:"product"`
	UnitAmount int64  `json:"unit_amount"`
	Currency   string `json:"currency"`
	Type       string `json:"type"`
	Active     bool   `json:"active"`
	Livemode   bool   `json:"livemode"`
	Recurring  *struct {
		Interval      string `json:"interval"`
		IntervalCount int64  `json:"interval_count"`
	} `json:"recurring"`
}

func (w priceWire) app() (app.PspxPrice, error) {
	p := app.PspxPrice{
		ID: w.ID, Product: string(w.Product), UnitAmount: w.UnitAmount, Currency: w.Currency, Type: w.Type,
		Active: w.Active, Livemode: w.Livemode,
	}
	if w.Recurring != nil {
		p.Interval, p.IntervalCount = w.Recurring.Interval, w.Recurring.IntervalCount
	}
	return p, check("price", w.Object, w.ID)
}

type taxRateWire struct {
	ID          string  `json:"id"`
	Object      string  `json:"object"`
	DisplayName string  `json:"display_name"`
	Percentage  float64 `json:"percentage"`
	Inclusive   bool    `json:"inclusive"`
	Active      bool    `json:"active"`
	Livemode    bool    `json:"livemode"`
}

func (w taxRateWire) app() (app.PspxTaxRate, error) {
	return app.PspxTaxRate{
		ID: w.ID, DisplayName: w.DisplayName, Percentage: w.Percentage, Inclusive: w.Inclusive, Active: w.Active, Livemode: w.Livemode,
	}, check("tax_rate", w.Object, w.ID)
}

type subscriptionWire struct {
	ID     string `json:"id"`
	Object string `json:"object"`
	Items  struct {
		Data []struct {
			ID    string `json:"id"`
			Price struct {
				ID      string `json:"id"`
				Product ref    `json:"product"`
			} `json:"price"`
			Quantity int64 `json:"quantity"`
		} `json:"data"`
	} `json:"items"`
	Customer             ref               `json:"customer"`
	Status               string            `json:"status"`
	CurrentPeriodStart   *int64            `json:"current_period_start"`
	CurrentPeriodEnd     *int64            `json:"current_period_end"`
	CancelAtPeriodEnd    bool              `json:"cancel_at_period_end"`
	CancelAt             *int64            `json:"cancel_at"`
	CanceledAt           *int64            `json:"canceled_at"`
	LatestInvoice        ref               `json:"latest_invoice"`
	DefaultPaymentMethod ref               `json:"default_payment_method"`
	Metadata             map[string]string `json:"metadata"`
	Livemode             bool              `json:"livemode"`
}

func (w subscriptionWire) app() (app.PspxSubscription, error) {
	s := app.PspxSubscription{
		ID: w.ID, Customer: string(w.Customer), Status: w.Status, CurrentPeriodStart: unixTime(w.CurrentPeriodStart),
		CurrentPeriodEnd: unixTime(w.CurrentPeriodEnd), CancelAtPeriodEnd: w.CancelAtPeriodEnd, CancelAt: unixTime(w.CancelAt),
		CanceledAt: unixTime(w.CanceledAt), LatestInvoice: string(w.LatestInvoice), DefaultPayment: string(w.DefaultPaymentMethod),
		Metadata: w.Metadata, Livemode: w.Livemode,
	}
	if len(w.Items.Data) > 0 {
		it := w.Items.Data[0]
		s.ItemID, s.Price, s.Product, s.Quantity = it.ID, it.Price.ID, string(it.Price.Product), it.Quantity
	}
	return s, check("subscription", w.Object, w.ID)
}

type paymentIntentWire struct {
	ID            string `json:"id"`
	Object        string `json:"object"`
	Status        string `json:"status"`
	Amount        int64  `json:"amount"`
	Currency      string `json:"currency"`
	PaymentMethod ref    `json:"payment_method"`
	Created       *int64 `json:"created"`
}

func (w paymentIntentWire) app() (app.PspxPaymentIntent, error) {
	return app.PspxPaymentIntent{
		ID: w.ID, Status: w.Status, Amount: w.Amount, Currency: w.Currency, PaymentMethod: string(w.PaymentMethod), Created: unixTime(w.Created),
	}, check("payment_intent", w.Object, w.ID)
}

type setupIntentWire struct {
	ID            string `json:"id"`
	Object        string `json:"object"`
	Status        string `json:"status"`
	PaymentMethod ref    `json:"payment_method"`
}

func (w setupIntentWire) app() (app.PspxSetupIntent, error) {
	return app.PspxSetupIntent{ID: w.ID, Status: w.Status, PaymentMethod: string(w.PaymentMethod)}, check("setup_intent", w.Object, w.ID)
}

type sessionWire struct {
	ID            string            `json:"id"`
	Object        string            `json:"object"`
	URL           string            `json:"url"`
	Mode          string            `json:"mode"`
	Status        string            `json:"status"`
	PaymentStatus string            `json:"payment_status"`
	Customer      ref               `json:"customer"`
	AmountTotal   int64             `json:"amount_total"`
	Currency      string            `json:"currency"`
	Metadata      map[string]string `json:"metadata"`
	Livemode      bool              `json:"livemode"`
	Created       *int64            `json:"created"`
	Subscription  json.RawMessage   `json:"subscription"`
	PaymentIntent json.RawMessage   `json:"payment_intent"`
	SetupIntent   json.RawMessage   `json:"setup_intent"`
}

func (w sessionWire) app() (app.PspxCheckoutSession, error) {
	s := app.PspxCheckoutSession{
		ID: w.ID, URL: w.URL, Mode: w.Mode, Status: w.Status, PaymentStatus: w.PaymentStatus, Customer: string(w.Customer),
		AmountTotal: w.AmountTotal, Currency: w.Currency, Metadata: w.Metadata, Livemode: w.Livemode, Created: unixTime(w.Created),
	}
	if err := check("checkout.session", w.Object, w.ID); err != nil {
		return s, err
	}
	var err error
	if s.Subscription, err = expanded[subscriptionWire, app.PspxSubscription](w.Subscription); err != nil {
		return s, err
	}
	if s.PaymentIntent, err = expanded[paymentIntentWire, app.PspxPaymentIntent](w.PaymentIntent); err != nil {
		return s, err
	}
	s.SetupIntent, err = expanded[setupIntentWire, app.PspxSetupIntent](w.SetupIntent)
	return s, err
}

// expanded converts an expanded reference; an absent, null or unexpanded one is nil.
func expanded[W interface{ app() (A, error) }, A any](raw json.RawMessage) (*A, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, nil
	}
	var w W
	if err := json.Unmarshal(raw, &w); err != nil {
		return nil, fmt.Errorf("pspx: decoding an expanded object: %w", err)
	}
	a, err := w.app()
	if err != nil {
		return nil, err
	}
	return &a, nil
}

type invoiceWire struct {
	ID            string            `json:"id"`
	Object        string            `json:"object"`
	Customer      ref               `json:"customer"`
	Status        string            `json:"status"`
	Subscription  ref               `json:"subscription"`
	BillingReason string            `json:"billing_reason"`
	PaymentIntent ref               `json:"payment_intent"`
	AmountDue     int64             `json:"amount_due"`
	AmountPaid    int64             `json:"amount_paid"`
	Currency      string            `json:"currency"`
	PeriodEnd     *int64            `json:"period_end"`
	Metadata      map[string]string `json:"metadata"`
	Livemode      bool              `json:"livemode"`
	Lines         struct {
		Data []invoiceLineWire `json:"data"`
	} `json:"lines"`
}

type invoiceLineWire struct {
	ID          string `json:"id"`
	Description string `json:"description"`
	Quantity    int64  `json:"quantity"`
	Period      struct {
		Start *int64 `json:"start"`
		End   *int64 `json:"end"`
	} `json:"period"`
}

// invoice decodes one invoice, keeping the object as sent.
func invoice(raw []byte) (app.PspxInvoice, error) {
	var w invoiceWire
	if err := json.Unmarshal(raw, &w); err != nil {
		return app.PspxInvoice{}, fmt.Errorf("pspx: decoding an invoice: %w", err)
	}
	inv := app.PspxInvoice{
		ID: w.ID, Customer: string(w.Customer), Status: w.Status, Subscription: string(w.Subscription),
		BillingReason: w.BillingReason, PaymentIntent: string(w.PaymentIntent), AmountDue: w.AmountDue, AmountPaid: w.AmountPaid,
		Currency: w.Currency, PeriodEnd: unixTime(w.PeriodEnd), Metadata: w.Metadata, Livemode: w.Livemode,
		Raw: json.RawMessage(bytes.Clone(raw)),
	}
	for _, l := range w.Lines.Data {
		inv.Lines = append(inv.Lines, app.PspxInvoiceLine{ID: l.ID, Description: l.Description, Quantity: l.Quantity,
			PeriodStart: unixTime(l.Period.Start), PeriodEnd: unixTime(l.Period.End)})
	}
	return inv, check("invoice", w.Object, w.ID)
}

type listWire struct {
	Object  string            `json:"object"`
	Data    []json.RawMessage `json:"data"`
	HasMore bool              `json:"has_more"`
}

// idWire is an object billing reads only the id of.
type idWire struct {
	ID     string `json:"id"`
	Object string `json:"object"`
}
