package pspx

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/berthhq/berth/services/billing/internal/adapters/httpcall"
	"github.com/berthhq/berth/services/billing/internal/app"
)

// Version is the API version the client is written against, sent with every request so a
// change of the account's default version cannot change the answers under billing's feet.
const Version = "2024-06-20"

// Config configures a client.
type Config struct {
	BaseURL  string       // e.g. https://api.pspx.example or http://127.0.0.1:8080/_sandbox/pspx
	HTTP     *http.Client // nil: httpcall's default
	Attempts int          // tries per request in all; 0: httpcall's default
	Backoff  func(int) time.Duration
}

// Client is the pspx API client; one instance serves every connection.
type Client struct {
	call httpcall.Client
}

var _ app.Pspx = (*Client)(nil)

// New returns a client of the API at cfg.BaseURL.
func New(cfg Config) *Client {
	return &Client{call: httpcall.Client{
		HTTP: cfg.HTTP, BaseURL: strings.TrimRight(cfg.BaseURL, "/"), Attempts: cfg.Attempts, Backoff: cfg.Backoff,
	}}
}

// path builds a request path from a format and ids, each escaped; an empty id is a caller bug
// that would otherwise reach another endpoint (GET /v1/customers/ lists customers).
func path(format string, ids ...string) (string, error) {
	args := make([]any, len(ids))
	for i, id := range ids {
		if id == "" {
			return "", errors.New("pspx: an id in " + format + " is empty")
		}
		args[i] = url.PathEscape(id)
	}
	return fmt.Sprintf(format, args...), nil
}

func (c *Client) header(key string) http.Header {
	return http.Header{"Authorization": {"Bearer " + key}, "Pspx-Version": {Version}, "Accept": {"application/json"}}
}

// post sends a creating or changing call with its idempotency key and returns the answer body.
func (c *Client) post(ctx context.Context, key, idem, p string, f *form) ([]byte, error) {
	if idem == "" {
		return nil, errors.New("pspx: POST " + p + " without an idempotency key")
	}
	body, err := f.encode()
	if err != nil {
		return nil, err
	}
	h := c.header(key)
	h.Set("Content-Type", "application/x-www-form-urlencoded")
	h.Set("Idempotency-Key", idem)
	return c.do(ctx, httpcall.Request{Method: http.MethodPost, Path: p, Header: h, Body: []byte(body)})
}

func (c *Client) get(ctx context.Context, key, p string, q url.Values) ([]byte, error) {
	if len(q) > 0 {
		p += "?" + q.Encode()
	}
	return c.do(ctx, httpcall.Request{Method: http.MethodGet, Path: p, Header: c.header(key)})
}

func (c *Client) do(ctx context.Context, r httpcall.Request) ([]byte, error) {
	resp, err := c.call.Do(ctx, r)
	if err != nil {
		return nil, fmt.Errorf("pspx: %w", err)
	}
	if resp.Status >= 200 && resp.Status < 300 {
		return resp.Body, nil
	}
	return nil, answerError(r, resp)
}

// answerError maps an error answer: the provider's error object becomes *app.ProviderError
// (code, else type), anything else a plain error.
func answerError(r httpcall.Request, resp httpcall.Response) error {
	var env struct {
		Error *struct {
			Type    string `json:"type"`
			Code    string `json:"code"`
			Message string `json:"message"`
			Param   string `json:"param"`
		} `json:"error"`
	}
	if json.Unmarshal(resp.Body, &env) != nil || env.Error == nil || env.Error.Type == "" {
		return fmt.Errorf("pspx: %s %s answered %d without an error object", r.Method, pathOnly(r.Path), resp.Status)
	}
	code := env.Error.Code
	if code == "" {
		code = env.Error.Type
	}
	return &app.ProviderError{Status: resp.Status, Code: code, Param: env.Error.Param, UserMessage: env.Error.Message}
}

func pathOnly(p string) string {
	p, _, _ = strings.Cut(p, "?")
	return p
}

// decode reads an answer into a wire type and converts it.
func decode[W interface{ app() (A, error) }, A any](body []byte, err error) (A, error) {
	var a A
	if err != nil {
		return a, err
	}
	var w W
	if err := json.Unmarshal(body, &w); err != nil {
		return a, fmt.Errorf("pspx: the answer is not the expected JSON: %w", err)
	}
	return w.app()
}

// idOf returns a decoder that checks an answer is an object of the kind and returns its id.
func idOf(kind string) func([]byte, error) (string, error) {
	return func(body []byte, err error) (string, error) {
		if err != nil {
			return "", err
		}
		var w idWire
		if err := json.Unmarshal(body, &w); err != nil {
			return "", fmt.Errorf("pspx: the answer is not the expected JSON: %w", err)
		}
		return w.ID, check(kind, w.Object, w.ID)
	}
}

func decodeInvoice(body []byte, err error) (app.PspxInvoice, error) {
	if err != nil {
		return app.PspxInvoice{}, err
	}
	return invoice(body)
}

// ---- customers ----

// CreateCustomer creates a customer with the input's email, name and metadata.
func (c *Client) CreateCustomer(ctx context.Context, key, idem string, in app.PspxCustomerInput) (app.PspxCustomer, error) {
	f := newForm()
	f.opt("email", in.Email)
	f.opt("name", in.Name)
	f.meta("metadata", in.Metadata)
	return decode[customerWire, app.PspxCustomer](c.post(ctx, key, idem, "/v1/customers", f))
}

// Customer reads the customer id.
func (c *Client) Customer(ctx context.Context, key, id string) (app.PspxCustomer, error) {
	p, err := path("/v1/customers/%s", id)
	if err != nil {
		return app.PspxCustomer{}, err
	}
	return decode[customerWire, app.PspxCustomer](c.get(ctx, key, p, nil))
}

// SetDefaultPaymentMethod sets the customer's default payment method for invoices; "" clears it.
func (c *Client) SetDefaultPaymentMethod(ctx context.Context, key, idem, customerID, paymentMethodID string) (app.PspxCustomer, error) {
	p, err := path("/v1/customers/%s", customerID)
	if err != nil {
		return app.PspxCustomer{}, err
	}
	f := newForm()
	f.set("invoice_settings[default_payment_method]", paymentMethodID) // "" clears it
	return decode[customerWire, app.PspxCustomer](c.post(ctx, key, idem, p, f))
}

// PaymentMethods pages through every method attached to the customer.
func (c *Client) PaymentMethods(ctx context.Context, key, customerID string) ([]string, error) {
	p, err := path("/v1/customers/%s/payment_methods", customerID)
	if err != nil {
		return nil, err
	}
	var ids []string
	q := url.Values{"limit": {"100"}}
	for {
		body, err := c.get(ctx, key, p, q)
		if err != nil {
			return nil, err
		}
		var l listWire
		if err := json.Unmarshal(body, &l); err != nil || l.Object != "list" {
			return nil, fmt.Errorf("pspx: expected a list of payment methods (%v)", err)
		}
		for _, raw := range l.Data {
			id, err := idOf("payment_method")(raw, nil)
			if err != nil {
				return nil, err
			}
			ids = append(ids, id)
		}
		if !l.HasMore || len(l.Data) == 0 {
			return ids, nil
		}
		q.Set("starting_after", ids[len(ids)-1])
	}
}

// DetachPaymentMethod detaches the payment method id from its customer.
func (c *Client) DetachPaymentMethod(ctx context.Context, key, idem, id string) error {
	p, err := path("/v1/payment_methods/%s/detach", id)
	if err != nil {
		return err
	}
	_, err = idOf("payment_method")(c.post(ctx, key, idem, p, newForm()))
	return err
}

// ---- catalog ----

// Price reads the price id.
func (c *Client) Price(ctx context.Context, key, id string) (app.PspxPrice, error) {
	p, err := path("/v1/prices/%s", id)
	if err != nil {
		return app.PspxPrice{}, err
	}
	return decode[priceWire, app.PspxPrice](c.get(ctx, key, p, nil))
}

// TaxRate reads the tax rate id.
func (c *Client) TaxRate(ctx context.Context, key, id string) (app.PspxTaxRate, error) {
	p, err := path("/v1/tax_rates/%s", id)
	if err != nil {
		return app.PspxTaxRate{}, err
	}
	return decode[taxRateWire, app.PspxTaxRate](c.get(ctx, key, p, nil))
}

// CreateProduct creates a product of that name and returns its id.
func (c *Client) CreateProduct(ctx context.Context, key, idem, name string) (string, error) {
	f := newForm()
	f.set("name", name)
	return idOf("product")(c.post(ctx, key, idem, "/v1/products", f))
}

// CreatePrice creates a price of the product: recurring when the input has an Interval, one-time otherwise.
func (c *Client) CreatePrice(ctx context.Context, key, idem string, in app.PspxPriceInput) (app.PspxPrice, error) {
	f := newForm()
	f.set("product", in.Product)
	f.int("unit_amount", in.UnitAmount)
	f.set("currency", in.Currency)
	if in.Interval != "" {
		f.set("recurring[interval]", in.Interval)
		f.positive("recurring[interval_count]", in.IntervalCount)
	}
	return decode[priceWire, app.PspxPrice](c.post(ctx, key, idem, "/v1/prices", f))
}

// CreateTaxRate creates a tax rate.
func (c *Client) CreateTaxRate(ctx context.Context, key, idem string, in app.PspxTaxRateInput) (app.PspxTaxRate, error) {
	f := newForm()
	f.set("display_name", in.DisplayName)
	f.percent("percentage", in.Percentage)
	f.bool("inclusive", in.Inclusive)
	f.opt("country", in.Country)
	return decode[taxRateWire, app.PspxTaxRate](c.post(ctx, key, idem, "/v1/tax_rates", f))
}

// ---- checkout ----

// CreateCheckoutSession creates a hosted checkout. A zero Quantity buys one, since the provider
// requires a quantity with every price. The metadata goes on the session and, for the webhook
// ingest, on the subscription or payment intent the session creates.
func (c *Client) CreateCheckoutSession(ctx context.Context, key, idem string, in app.PspxCheckoutInput) (app.PspxCheckoutSession, error) {
	f := newForm()
	f.opt("customer", in.Customer)
	f.set("mode", in.Mode)
	if in.Price != "" {
		f.set("line_items[0][price]", in.Price)
		f.int("line_items[0][quantity]", max(1, in.Quantity))
		f.opt("line_items[0][tax_rates][0]", in.TaxRate)
	}
	f.opt("payment_method_types[0]", in.PaymentMethodType)
	collect := "auto"
	if in.BillingAddressCollection {
		collect = "required"
	}
	f.set("billing_address_collection", collect)
	f.opt("shipping_address_collection[allowed_countries][0]", in.AllowedCountry)
	f.opt("currency", in.Currency)
	f.set("success_url", in.SuccessURL)
	f.opt("cancel_url", in.CancelURL)
	f.opt("client_reference_id", in.ClientReferenceID)
	f.meta("metadata", in.Metadata)
	switch in.Mode {
	case "subscription":
		f.meta("subscription_data[metadata]", in.Metadata)
	case "payment":
		f.meta("payment_intent_data[metadata]", in.Metadata)
	}
	return decode[sessionWire, app.PspxCheckoutSession](c.post(ctx, key, idem, "/v1/checkout/sessions", f))
}

// CheckoutSession reads the checkout session id with its subscription, payment intent and setup
// intent expanded.
func (c *Client) CheckoutSession(ctx context.Context, key, id string) (app.PspxCheckoutSession, error) {
	p, err := path("/v1/checkout/sessions/%s", id)
	if err != nil {
		return app.PspxCheckoutSession{}, err
	}
	q := url.Values{"expand[]": {"subscription", "payment_intent", "setup_intent"}}
	return decode[sessionWire, app.PspxCheckoutSession](c.get(ctx, key, p, q))
}

// ---- subscriptions ----

// Subscription reads the subscription id.
func (c *Client) Subscription(ctx context.Context, key, id string) (app.PspxSubscription, error) {
	p, err := path("/v1/subscriptions/%s", id)
	if err != nil {
		return app.PspxSubscription{}, err
	}
	return decode[subscriptionWire, app.PspxSubscription](c.get(ctx, key, p, nil))
}

// CreateSubscription subscribes the customer to one price.
func (c *Client) CreateSubscription(ctx context.Context, key, idem string, in app.PspxSubscriptionInput) (app.PspxSubscription, error) {
	f := newForm()
	f.set("customer", in.Customer)
	f.set("items[0][price]", in.Price)
	f.positive("items[0][quantity]", in.Quantity)
	f.opt("items[0][tax_rates][0]", in.TaxRate)
	f.opt("default_payment_method", in.DefaultPaymentMethod)
	f.meta("metadata", in.Metadata)
	return decode[subscriptionWire, app.PspxSubscription](c.post(ctx, key, idem, "/v1/subscriptions", f))
}

// UpdateSubscription changes what the update sets. The item is named by ItemID: without it the
// provider would add a second item instead of changing the one there is.
func (c *Client) UpdateSubscription(ctx context.Context, key, idem, id string, in app.PspxSubscriptionUpdate) (app.PspxSubscription, error) {
	p, err := path("/v1/subscriptions/%s", id)
	if err != nil {
		return app.PspxSubscription{}, err
	}
	f := newForm()
	if in.Price != "" || in.Quantity > 0 || in.TaxRate != "" {
		if in.ItemID == "" {
			return app.PspxSubscription{}, errors.New("pspx: changing a subscription's item needs its ItemID")
		}
		f.set("items[0][id]", in.ItemID)
		f.opt("items[0][price]", in.Price)
		f.positive("items[0][quantity]", in.Quantity)
		f.opt("items[0][tax_rates][0]", in.TaxRate)
	}
	f.opt("proration_behavior", in.ProrationBehavior)
	if in.CancelAtPeriodEnd != nil {
		f.bool("cancel_at_period_end", *in.CancelAtPeriodEnd)
	}
	f.meta("metadata", in.Metadata)
	return decode[subscriptionWire, app.PspxSubscription](c.post(ctx, key, idem, p, f))
}

// ---- invoices ----

// CreateInvoiceItem adds a pending item to the customer's next invoice (or to the input's Invoice):
// a price times a quantity, or an amount in a currency.
func (c *Client) CreateInvoiceItem(ctx context.Context, key, idem string, in app.PspxInvoiceItemInput) error {
	f := newForm()
	f.set("customer", in.Customer)
	if in.Price != "" {
		f.set("price", in.Price)
		f.positive("quantity", in.Quantity)
	} else {
		f.set("amount", strconv.FormatInt(in.Amount, 10))
		f.set("currency", in.Currency)
	}
	f.opt("description", in.Description)
	f.opt("tax_rates[0]", in.TaxRate)
	f.opt("invoice", in.Invoice)
	f.meta("metadata", in.Metadata)
	_, err := idOf("invoiceitem")(c.post(ctx, key, idem, "/v1/invoiceitems", f))
	return err
}

// CreateInvoice creates a draft invoice for the customer.
func (c *Client) CreateInvoice(ctx context.Context, key, idem string, in app.PspxInvoiceInput) (app.PspxInvoice, error) {
	f := newForm()
	f.set("customer", in.Customer)
	f.opt("footer", in.Footer)
	f.opt("default_payment_method", in.DefaultPaymentMethod)
	f.meta("metadata", in.Metadata)
	f.opt("pending_invoice_items_behavior", in.PendingItemsBehavior)
	return decodeInvoice(c.post(ctx, key, idem, "/v1/invoices", f))
}

func (c *Client) invoiceAction(ctx context.Context, key, idem, id, action string, f *form) (app.PspxInvoice, error) {
	p, err := path("/v1/invoices/%s/"+action, id)
	if err != nil {
		return app.PspxInvoice{}, err
	}
	return decodeInvoice(c.post(ctx, key, idem, p, f))
}

// FinalizeInvoice finalizes the draft invoice id.
func (c *Client) FinalizeInvoice(ctx context.Context, key, idem, id string) (app.PspxInvoice, error) {
	return c.invoiceAction(ctx, key, idem, id, "finalize", newForm())
}

// PayInvoice pays the invoice id, with paymentMethodID or, when "", the customer's default.
func (c *Client) PayInvoice(ctx context.Context, key, idem, id, paymentMethodID string) (app.PspxInvoice, error) {
	f := newForm()
	f.opt("payment_method", paymentMethodID)
	return c.invoiceAction(ctx, key, idem, id, "pay", f)
}

// VoidInvoice voids the invoice id.
func (c *Client) VoidInvoice(ctx context.Context, key, idem, id string) (app.PspxInvoice, error) {
	return c.invoiceAction(ctx, key, idem, id, "void", newForm())
}

// UpdateInvoiceLine sets the description of one line of a draft invoice.
func (c *Client) UpdateInvoiceLine(ctx context.Context, key, idem, invoiceID, lineID, description string) error {
	p, err := path("/v1/invoices/%s/lines/%s", invoiceID, lineID)
	if err != nil {
		return err
	}
	f := newForm()
	f.set("description", description)
	_, err = idOf("line_item")(c.post(ctx, key, idem, p, f))
	return err
}

// Invoice reads the invoice id.
func (c *Client) Invoice(ctx context.Context, key, id string) (app.PspxInvoice, error) {
	p, err := path("/v1/invoices/%s", id)
	if err != nil {
		return app.PspxInvoice{}, err
	}
	return decodeInvoice(c.get(ctx, key, p, nil))
}

// ListInvoices reads one page of invoices, the customer's when the query names one.
func (c *Client) ListInvoices(ctx context.Context, key string, q app.PspxInvoiceQuery) (app.PspxInvoicePage, error) {
	v := url.Values{}
	if q.Customer != "" {
		v.Set("customer", q.Customer)
	}
	if q.Limit > 0 {
		v.Set("limit", fmt.Sprint(q.Limit))
	}
	if q.StartingAfter != "" {
		v.Set("starting_after", q.StartingAfter)
	}
	if q.EndingBefore != "" {
		v.Set("ending_before", q.EndingBefore)
	}
	body, err := c.get(ctx, key, "/v1/invoices", v)
	if err != nil {
		return app.PspxInvoicePage{}, err
	}
	var l listWire
	if err := json.Unmarshal(body, &l); err != nil || l.Object != "list" {
		return app.PspxInvoicePage{}, fmt.Errorf("pspx: expected a list of invoices (%v)", err)
	}
	page := app.PspxInvoicePage{HasMore: l.HasMore, Invoices: make([]app.PspxInvoice, 0, len(l.Data))}
	for _, raw := range l.Data {
		inv, err := invoice(raw)
		if err != nil {
			return app.PspxInvoicePage{}, err
		}
		page.Invoices = append(page.Invoices, inv)
	}
	return page, nil
}

// PaymentIntent returns the object as the provider sent it, once it is known to be one.
func (c *Client) PaymentIntent(ctx context.Context, key, id string) (json.RawMessage, error) {
	p, err := path("/v1/payment_intents/%s", id)
	if err != nil {
		return nil, err
	}
	body, err := c.get(ctx, key, p, nil)
	if _, err := idOf("payment_intent")(body, err); err != nil {
		return nil, err
	}
	return json.RawMessage(body), nil
}
