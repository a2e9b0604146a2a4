package pspx

import (
	"crypto/rand"
	"time"
)

// account is everything one secret key sees.
type account struct {
	key  string
	live bool

	customers map[string]*customer
	products  map[string]*product
	prices    map[string]*price
	taxRates  map[string]*taxRate
	methods   map[string]*paymentMethod
	intents   map[string]*paymentIntent
	setups    map[string]*setupIntent
	sessions  map[string]*session
	subs      map[string]*subscription
	items     map[string]*invoiceItem
	invoices  map[string]*invoice
	events    []*event
	endpoints map[string]*webhookEndpoint

	// lastTick is the time of the last clock advance this account saw; with the time of its
	// latest event it dates the work an advance does "as soon as the advance begins".
	lastTick time.Time
}

func newAccount(key string, live bool, now time.Time) *account {
	return &account{
		key: key, live: live, lastTick: now,
		customers: map[string]*customer{}, products: map[string]*product{}, prices: map[string]*price{},
		taxRates: map[string]*taxRate{}, methods: map[string]*paymentMethod{}, intents: map[string]*paymentIntent{},
		setups: map[string]*setupIntent{}, sessions: map[string]*session{}, subs: map[string]*subscription{},
		items: map[string]*invoiceItem{}, invoices: map[string]*invoice{}, endpoints: map[string]*webhookEndpoint{},
	}
}

type customer struct {
	id, email, name, description string
	currency                     string // set by the first invoice, as the provider does
	created                      time.Time
	metadata                     map[string]string
	defaultPM                    string
	invoicePrefix                string
	numbered                     int   // invoices numbered so far
	balance                      int64 // negative: credit applied to the next invoices
	delinquent                   bool
}

type product struct {
	id, name, description string
	created               time.Time
	metadata              map[string]string
}

type price struct {
	id, product, currency, nickname string
	created                         time.Time
	unitAmount                      int64
	interval                        string // "" for one-time prices
	intervalCount                   int64
	metadata                        map[string]string
}

type taxRate struct {
	id, displayName, description, country string
	created                               time.Time
	percent                               int64 // ten-thousandths of a percent: 19 % is 190000
	inclusive                             bool
	metadata                              map[string]string
}

// outcome is what charging a payment method does; the test number or IBAN it was created
// with decides it.
type outcome int

const (
	succeeds      outcome = iota // card 4242…
	declines                     // card …0341: attaches, every charge is declined
	settlesPaid                  // IBAN …3000: processing, succeeds at the next clock advance
	settlesFailed                // IBAN …3001: processing, fails at the next clock advance
)

type address struct{ line1, postalCode, city, country string }

type billingDetails struct {
	name    string
	address *address
}

type paymentMethod struct {
	id, typ, customer string // typ "card" or "sepa_debit"
	created           time.Time
	outcome           outcome
	last4             string
	expMonth, expYear int    // cards
	bankCode          string // SEPA
	fingerprint       string
	billing           billingDetails
}

type paymentIntent struct {
	id, customer, currency, status, pm, invoice, session, description string
	secret                                                            string
	seq                                                               int64
	created, canceledAt                                               time.Time
	amount, received                                                  int64
	pmType                                                            string
	metadata                                                          map[string]string
	lastError                                                         *apiError
}

type setupIntent struct {
	id, customer, pm, pmType, secret string
	created                          time.Time
}

type line struct {
	price    string
	quantity int64
	taxRate  string
}

type session struct {
	id                                  string
	seq                                 int64
	created, expiresAt                  time.Time
	mode, status, paymentStatus         string
	customer, currency, pmType          string
	lines                               []line
	addressRequired                     bool
	shippingCountries                   []string
	successURL, cancelURL, clientRef    string
	metadata, subMetadata, piMetadata   map[string]string
	subscription, invoice, intent, seti string
	customerDetails, shipping           *billingDetails
	email                               string
}

type subscription struct {
	id, customer, status, currency string
	seq                            int64
	created                        time.Time
	itemID                         string
	itemCreated                    time.Time
	price                          string
	quantity                       int64
	taxRate                        string
	anchor                         time.Time // periods are counted from here
	cycle                          int       // the current period is the cycle-th since anchor
	cancelAtPeriodEnd              bool
	canceledAt, endedAt            time.Time
	latestInvoice, defaultPM       string
	metadata                       map[string]string
}

type invoiceItem struct {
	id, customer, price, taxRate, invoice, subscription, currency, description string
	seq                                                                        int64
	created                                                                    time.Time
	quantity, amount                                                           int64
	proration                                                                  bool
	periodStart, periodEnd                                                     time.Time
	metadata                                                                   map[string]string
}

// invoiceLine is a line of an invoice: one invoice item, or the subscription's next period.
type invoiceLine struct {
	id, typ, item, price, taxRate, description, subscription, subItem string
	quantity, amount, tax                                             int64
	proration                                                         bool
	periodStart, periodEnd                                            time.Time
	metadata                                                          map[string]string
}

type invoice struct {
	id, customer, status, billingReason, subscription, currency string
	seq                                                         int64
	created                                                     time.Time
	lines                                                       []*invoiceLine
	footer, defaultPM, number, intent                           string
	metadata                                                    map[string]string
	startingBalance, amountDue, amountPaid                      int64
	attempts                                                    int
	periodStart, periodEnd                                      time.Time
	// paysStart starts the period a renewal pays for: paying the renewal moves the
	// subscription's period there if it has not moved yet.
	paysStart                                      time.Time
	finalizedAt, paidAt, voidedAt, uncollectibleAt time.Time
	// autoAdvance marks a renewal: a draft the sandbox finalizes and charges by itself once its
	// draft window has passed. hooks are the deliveries of its invoice.created that it waits for.
	autoAdvance bool
	hooks       []invoiceHook
}

type event struct {
	id      string
	typ     string
	created time.Time
	body    []byte
}

// Event is one event the provider would send to the account's webhook endpoints.
type Event struct {
	Account  string // the secret key of the account the event belongs to
	ID       string
	Type     string
	Created  time.Time
	Livemode bool
	Body     []byte // the event object, as GET /v1/events/{id} serves it
}

const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// newID makes an id like the provider's: a type prefix and n random base-62 characters.
func newID(prefix string, n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b) // never fails (crypto/rand panics rather than return an error)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return prefix + string(b)
}
