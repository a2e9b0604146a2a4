package pspx

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
)

// sessionLifetime is how long a checkout session stays open, the provider's default.
const sessionLifetime = 24 * time.Hour

func (s *Server) createSession(c *call) (any, *apiError) {
	se := &session{
		id: newID(map[bool]string{false: "cs_test_", true: "cs_live_"}[c.a.live], 40), seq: c.s.nextSeq(),
		created: c.now, expiresAt: c.now.Add(sessionLifetime), status: "open", paymentStatus: "unpaid",
		customer: c.p.text("customer"), mode: c.p.text("mode"), currency: strings.ToLower(c.p.text("currency")),
		successURL: c.p.text("success_url"), cancelURL: c.p.text("cancel_url"), clientRef: c.p.text("client_reference_id"),
	}
	items := c.readItems("line_items", false)
	types, _ := c.p.list("payment_method_types")
	collect, hasCollect := c.p.str("billing_address_collection")
	se.shippingCountries, _ = c.p.list("shipping_address_collection", "allowed_countries")
	se.metadata = applyMetadata(c, nil, "metadata")
	hasSubData, hasPIData := c.p.has("subscription_data"), c.p.has("payment_intent_data")
	se.subMetadata = applyMetadata(c, nil, "subscription_data", "metadata")
	se.piMetadata = applyMetadata(c, nil, "payment_intent_data", "metadata")
	expand, eerr := expansions(c, sessionExpansions...)
	if err := c.p.done(); err != nil {
		return nil, err
	}
	if eerr != nil {
		return nil, eerr
	}
	if err := c.checkSession(se, items, types, collect, hasCollect, hasSubData, hasPIData); err != nil {
		return nil, err
	}
	c.a.sessions[se.id] = se
	c.s.sessions[se.id] = c.a
	return c.a.renderSession(se, c.s.base, expand), nil
}

var sessionExpansions = []string{"customer", "invoice", "payment_intent", "setup_intent", "subscription"}

// checkSession validates a new session and completes it from its parameters.
func (c *call) checkSession(se *session, items []itemParams, types []string, collect string, hasCollect, hasSubData, hasPIData bool) *apiError {
	switch {
	case se.customer == "":
		return errMissing("customer")
	case c.a.customers[se.customer] == nil:
		return errNoSuch("customer", se.customer, "customer")
	case se.mode == "":
		return errMissing("mode")
	case se.mode != "payment" && se.mode != "subscription" && se.mode != "setup":
		return errInvalid("mode", "Invalid mode: must be one of payment, setup, or subscription.")
	case se.successURL == "":
		return errMissing("success_url")
	case !validURL(se.successURL):
		return invalidRequest(400, "url_invalid", "success_url", "Not a valid URL")
	case se.cancelURL != "" && !validURL(se.cancelURL):
		return invalidRequest(400, "url_invalid", "cancel_url", "Not a valid URL")
	case len(se.clientRef) > 200:
		return errInvalid("client_reference_id", "client_reference_id can be at most 200 characters long.")
	case hasSubData && se.mode != "subscription":
		return errInvalid("subscription_data", "You can not pass `subscription_data` in `%s` mode.", se.mode)
	case hasPIData && se.mode != "payment":
		return errInvalid("payment_intent_data", "You can not pass `payment_intent_data` in `%s` mode.", se.mode)
	case hasCollect && collect != "auto" && collect != "required":
		return errInvalid("billing_address_collection", "Invalid billing_address_collection: must be one of auto or required.")
	case len(types) > 1:
		return errInvalid("payment_method_types", "The sandbox offers one payment method type per session.")
	}
	se.addressRequired = collect == "required"
	se.pmType = "card"
	if len(types) == 1 {
		se.pmType = types[0]
	}
	if se.pmType != "card" && se.pmType != "sepa_debit" {
		return errInvalid("payment_method_types[0]", "Invalid payment_method_types[0]: must be one of card or sepa_debit.")
	}
	for i, cc := range se.shippingCountries {
		if !countryFormat.MatchString(cc) {
			return errInvalid(name([]string{"shipping_address_collection", "allowed_countries", strconv.Itoa(i)}), "Invalid country: %s.", cc)
		}
	}
	if se.mode == "setup" {
		if len(items) > 0 {
			return errInvalid("line_items", "You can not pass `line_items` in `setup` mode.")
		}
		if se.currency == "" {
			return errMissing("currency")
		}
		se.paymentStatus = "no_payment_required"
	} else if err := c.sessionLines(se, items); err != nil {
		return err
	}
	if !currencyFormat.MatchString(se.currency) {
		return errInvalid("currency", "Invalid currency: %s.", se.currency)
	}
	if se.pmType == "sepa_debit" && se.currency != "eur" {
		return errInvalid("payment_method_types", "The payment method type `sepa_debit` only supports the currency eur.")
	}
	return nil
}

// sessionLines resolves the line items of a payment or subscription session.
func (c *call) sessionLines(se *session, items []itemParams) *apiError {
	if len(items) == 0 {
		return errMissing("line_items")
	}
	if se.mode == "subscription" && len(items) > 1 {
		return errInvalid("line_items", "The sandbox supports subscriptions with a single item.")
	}
	for _, it := range items {
		p, q, rate, err := c.resolve(it, se.mode == "subscription")
		if err != nil {
			return err
		}
		if se.currency == "" {
			se.currency = p.currency
		}
		if p.currency != se.currency {
			return errInvalid(it.path+"[price]", "The price's currency (%s) must match the session's currency (%s).", p.currency, se.currency)
		}
		se.lines = append(se.lines, line{price: p.id, quantity: q, taxRate: rate})
	}
	return nil
}

func validURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && len(s) <= 5000 && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func (s *Server) getSession(c *call) (any, *apiError) {
	expand, eerr := expansions(c, sessionExpansions...)
	if err := c.p.done(); err != nil {
		return nil, err
	}
	if eerr != nil {
		return nil, eerr
	}
	id := c.r.PathValue("id")
	se := c.a.sessions[id]
	if se == nil {
		return nil, errNoSuch("checkout.session", id, "session")
	}
	return c.a.renderSession(se, c.s.base, expand), nil
}

// complete finishes a session paid with m, as the hosted page's form asks. It reports false,
// leaving the session open, when a payment-mode charge was declined.
func (c *call) complete(se *session, m *paymentMethod, details, shipping *billingDetails) bool {
	cu := c.a.customers[se.customer]
	switch se.mode {
	case "payment":
		pi := c.a.intents[se.intent]
		if pi == nil {
			_, _, total := c.a.sessionAmounts(se)
			pi = c.newIntent(total, se.currency, cu.id, m.typ, "", se.piMetadata)
			pi.session = se.id
			se.intent = pi.id
		}
		status := c.confirm(pi, m)
		if status == "requires_payment_method" {
			return false
		}
		c.attach(m, cu.id)
		if status == "succeeded" {
			se.paymentStatus = "paid"
		}
	case "subscription":
		c.attach(m, cu.id)
		l := se.lines[0]
		sub := c.startSubscription(cu, c.a.prices[l.price], l.quantity, l.taxRate, m.id, m, se.subMetadata)
		inv := c.a.invoices[sub.latestInvoice]
		if pi := c.a.intents[inv.intent]; pi != nil {
			pi.session = se.id
		}
		se.subscription, se.invoice = sub.id, inv.id
		if inv.status == "paid" {
			se.paymentStatus = "paid"
		}
	case "setup":
		c.attach(m, cu.id)
		si := &setupIntent{id: newID("seti_", 24), customer: cu.id, pm: m.id, pmType: m.typ, created: c.now}
		si.secret = si.id + "_secret_" + newID("", 25)
		c.a.setups[si.id] = si
		c.emit("setup_intent.created", c.a.renderSetupIntent(si), nil)
		c.emit("setup_intent.succeeded", c.a.renderSetupIntent(si), nil)
		se.seti = si.id
	}
	se.status, se.customerDetails, se.shipping, se.email = "complete", details, shipping, cu.email
	c.emit("checkout.session.completed", c.a.renderSession(se, c.s.base, nil), nil)
	return true
}

// expireSession closes a session left open for its whole lifetime.
func (c *call) expireSession(se *session) {
	if pi := c.a.intents[se.intent]; pi != nil && pi.status == "requires_payment_method" {
		c.cancelIntent(pi)
	}
	se.status = "expired"
	c.emit("checkout.session.expired", c.a.renderSession(se, c.s.base, nil), nil)
}

func (a *account) sessionsInOrder() []*session {
	out := make([]*session, 0, len(a.sessions))
	for _, se := range a.sessions {
		out = append(out, se)
	}
	slices.SortFunc(out, func(x, y *session) int { return int(x.seq - y.seq) })
	return out
}
