package pspx

import (
	"maps"
	"regexp"
	"slices"
	"strings"
)

var (
	currencyFormat = regexp.MustCompile(`^[a-z]{3}$`)
	countryFormat  = regexp.MustCompile(`^[A-Z]{2}$`)
)

// applyMetadata merges a metadata parameter into m the provider's way: an empty value removes
// its key, metadata= clears them all.
func applyMetadata(c *call, m map[string]string, path ...string) map[string]string {
	set, clearAll, ok := c.p.metadata(path...)
	if !ok {
		return m
	}
	if clearAll || m == nil {
		m = map[string]string{}
	}
	for k, v := range set {
		if v == "" {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	return m
}

func (c *call) customer(id, param string) (*customer, *apiError) {
	if cu := c.a.customers[id]; cu != nil {
		return cu, nil
	}
	return nil, errNoSuch("customer", id, param)
}

func (s *Server) createCustomer(c *call) (any, *apiError) {
	cu := &customer{
		id: newID("cus_", 14), created: c.now, invoicePrefix: strings.ToUpper(newID("", 8)),
		email: c.p.text("email"), name: c.p.text("name"), description: c.p.text("description"),
	}
	cu.metadata = applyMetadata(c, nil, "metadata")
	pm, hasPM := c.p.str("invoice_settings", "default_payment_method")
	if err := c.p.done(); err != nil {
		return nil, err
	}
	if hasPM && pm != "" {
		// A new customer has no payment method attached yet, so none can be its default.
		return nil, errInvalid("invoice_settings[default_payment_method]", "The customer does not have a payment method with the ID %s. The payment method must be attached to the customer.", pm)
	}
	c.a.customers[cu.id] = cu
	c.emit("customer.created", c.a.renderCustomer(cu), nil)
	return c.a.renderCustomer(cu), nil
}

func (s *Server) getCustomer(c *call) (any, *apiError) {
	if err := c.p.done(); err != nil {
		return nil, err
	}
	cu, err := c.customer(c.r.PathValue("id"), "id")
	if err != nil {
		return nil, err
	}
	return c.a.renderCustomer(cu), nil
}

func (s *Server) updateCustomer(c *call) (any, *apiError) {
	cu, err := c.customer(c.r.PathValue("id"), "id")
	if err != nil {
		return nil, err
	}
	next := *cu
	next.metadata = applyMetadata(c, maps.Clone(cu.metadata), "metadata")
	if v, ok := c.p.str("email"); ok {
		next.email = v
	}
	if v, ok := c.p.str("name"); ok {
		next.name = v
	}
	if v, ok := c.p.str("description"); ok {
		next.description = v
	}
	pm, hasPM := c.p.str("invoice_settings", "default_payment_method")
	if err := c.p.done(); err != nil {
		return nil, err
	}
	if hasPM {
		if m := c.a.methods[pm]; pm != "" && (m == nil || m.customer != cu.id) {
			if m == nil {
				return nil, errNoSuch("PaymentMethod", pm, "invoice_settings[default_payment_method]")
			}
			return nil, errInvalid("invoice_settings[default_payment_method]", "The customer does not have a payment method with the ID %s. The payment method must be attached to the customer.", pm)
		}
		next.defaultPM = pm
	}
	before := c.a.renderCustomer(cu)
	*cu = next
	c.emit("customer.updated", c.a.renderCustomer(cu), before)
	return c.a.renderCustomer(cu), nil
}

func (s *Server) listPaymentMethods(c *call) (any, *apiError) {
	cu, err := c.customer(c.r.PathValue("id"), "customer")
	if err != nil {
		return nil, err
	}
	typ, hasType := c.p.str("type")
	if hasType && typ != "card" && typ != "sepa_debit" {
		return nil, errInvalid("type", "Invalid type: must be one of card or sepa_debit.")
	}
	var all []*paymentMethod
	for _, m := range c.a.methods {
		if m.customer == cu.id && (!hasType || m.typ == typ) {
			all = append(all, m)
		}
	}
	slices.SortFunc(all, func(x, y *paymentMethod) int { return newestFirst(x.created, y.created, x.id, y.id) })
	page, more, err := pageOf(c, all, func(m *paymentMethod) string { return m.id }, "payment_method")
	if err != nil {
		return nil, err
	}
	if err := c.p.done(); err != nil {
		return nil, err
	}
	data := make([]paymentMethodJSON, len(page))
	for i, m := range page {
		data[i] = c.a.renderPaymentMethod(m)
	}
	return listJSON{Object: "list", Data: data, HasMore: more, URL: "/v1/customers/" + cu.id + "/payment_methods"}, nil
}

func (s *Server) detachPaymentMethod(c *call) (any, *apiError) {
	if err := c.p.done(); err != nil {
		return nil, err
	}
	id := c.r.PathValue("id")
	m := c.a.methods[id]
	if m == nil {
		return nil, errNoSuch("PaymentMethod", id, "payment_method")
	}
	if m.customer == "" {
		return nil, errState("The payment method you provided is not attached to a customer so detachment is impossible.")
	}
	c.detach(m)
	return c.a.renderPaymentMethod(m), nil
}

// detach removes a payment method from its customer, and from wherever it was the default (the
// customer's invoice settings, its subscriptions), as the provider does.
func (c *call) detach(m *paymentMethod) {
	cu := c.a.customers[m.customer]
	m.customer = ""
	c.emit("payment_method.detached", c.a.renderPaymentMethod(m), nil)
	if cu.defaultPM == m.id {
		before := c.a.renderCustomer(cu)
		cu.defaultPM = ""
		c.emit("customer.updated", c.a.renderCustomer(cu), before)
	}
	for _, sub := range c.a.subsInOrder() {
		if sub.defaultPM == m.id {
			before := c.a.renderSubscription(sub)
			sub.defaultPM = ""
			c.emit("customer.subscription.updated", c.a.renderSubscription(sub), before)
		}
	}
}

// attach gives a payment method to a customer.
func (c *call) attach(m *paymentMethod, customerID string) {
	m.customer = customerID
	c.emit("payment_method.attached", c.a.renderPaymentMethod(m), nil)
}

// ---- products, prices, tax rates ----

func (s *Server) createProduct(c *call) (any, *apiError) {
	p := &product{id: newID("prod_", 14), created: c.now, name: c.p.text("name"), description: c.p.text("description")}
	p.metadata = applyMetadata(c, nil, "metadata")
	if err := c.p.done(); err != nil {
		return nil, err
	}
	if p.name == "" {
		return nil, errMissing("name")
	}
	c.a.products[p.id] = p
	c.emit("product.created", c.a.renderProduct(p), nil)
	return c.a.renderProduct(p), nil
}

func (s *Server) createPrice(c *call) (any, *apiError) {
	p := &price{id: newID("price_", 24), created: c.now, product: c.p.text("product"), nickname: c.p.text("nickname")}
	p.currency = strings.ToLower(c.p.text("currency"))
	amount, hasAmount := c.p.integer("unit_amount")
	p.unitAmount = amount
	p.interval = c.p.text("recurring", "interval")
	count, hasCount := c.p.integer("recurring", "interval_count")
	p.metadata = applyMetadata(c, nil, "metadata")
	if err := c.p.done(); err != nil {
		return nil, err
	}
	switch {
	case p.product == "":
		return nil, errMissing("product")
	case c.a.products[p.product] == nil:
		return nil, errNoSuch("product", p.product, "product")
	case p.currency == "":
		return nil, errMissing("currency")
	case !currencyFormat.MatchString(p.currency):
		return nil, errInvalid("currency", "Invalid currency: %s.", p.currency)
	case !hasAmount:
		return nil, errMissing("unit_amount")
	case amount < 0 || amount > maxUnitAmount:
		return nil, errInvalid("unit_amount", "Invalid unit_amount: must be between 0 and %d.", maxUnitAmount)
	}
	if c.p.has("recurring") || hasCount {
		limits := map[string]int64{"day": 1095, "week": 156, "month": 36, "year": 3}
		limit, ok := limits[p.interval]
		if !ok {
			return nil, errInvalid("recurring[interval]", "Invalid recurring[interval]: must be one of day, week, month, or year.")
		}
		p.intervalCount = 1
		if hasCount {
			p.intervalCount = count
		}
		if p.intervalCount < 1 || p.intervalCount > limit {
			return nil, errInvalid("recurring[interval_count]", "The maximum billing period is three years: interval_count must be between 1 and %d for %s.", limit, p.interval)
		}
	}
	c.a.prices[p.id] = p
	c.emit("price.created", c.a.renderPrice(p), nil)
	return c.a.renderPrice(p), nil
}

func (s *Server) getPrice(c *call) (any, *apiError) {
	if err := c.p.done(); err != nil {
		return nil, err
	}
	id := c.r.PathValue("id")
	p := c.a.prices[id]
	if p == nil {
		return nil, errNoSuch("price", id, "price")
	}
	return c.a.renderPrice(p), nil
}

func (s *Server) createTaxRate(c *call) (any, *apiError) {
	r := &taxRate{
		id: newID("txr_", 24), created: c.now, displayName: c.p.text("display_name"),
		description: c.p.text("description"), country: c.p.text("country"),
	}
	pct, hasPct := c.p.decimal("percentage")
	r.percent = pct
	incl, hasIncl := c.p.boolean("inclusive")
	r.inclusive = incl
	r.metadata = applyMetadata(c, nil, "metadata")
	if err := c.p.done(); err != nil {
		return nil, err
	}
	switch {
	case r.displayName == "":
		return nil, errMissing("display_name")
	case !hasPct:
		return nil, errMissing("percentage")
	case pct > 100*10000:
		return nil, errInvalid("percentage", "Invalid percentage: must be between 0 and 100.")
	case !hasIncl:
		return nil, errMissing("inclusive")
	case r.country != "" && !countryFormat.MatchString(r.country):
		return nil, errInvalid("country", "Country '%s' is unknown. Use a two-letter country code (ISO 3166-1 alpha-2).", r.country)
	}
	c.a.taxRates[r.id] = r
	c.emit("tax_rate.created", c.a.renderTaxRate(r), nil)
	return c.a.renderTaxRate(r), nil
}

func (s *Server) getTaxRate(c *call) (any, *apiError) {
	if err := c.p.done(); err != nil {
		return nil, err
	}
	id := c.r.PathValue("id")
	r := c.a.taxRates[id]
	if r == nil {
		return nil, errNoSuch("tax rate", id, "tax_rate")
	}
	return c.a.renderTaxRate(r), nil
}

// priceRef resolves a price parameter, refusing prices of the wrong type for the use.
func (c *call) priceRef(id, param string, recurring bool) (*price, *apiError) {
	p := c.a.prices[id]
	switch {
	case id == "":
		return nil, errMissing(param)
	case p == nil:
		return nil, errNoSuch("price", id, param)
	case recurring && p.interval == "":
		return nil, errInvalid(param, "The price specified is set to `type=one_time` but this field only accepts prices with `type=recurring`.")
	case !recurring && p.interval != "":
		return nil, errInvalid(param, "The price specified is set to `type=recurring` but this field only accepts prices with `type=one_time`.")
	}
	return p, nil
}

// itemParams is one item of a request as sent (items[i] or line_items[i]), read before any
// validation so unknown parameters are reported first, as the provider does.
type itemParams struct {
	path                  string // items[0]
	id, price             string
	hasPrice, hasQuantity bool
	quantity              int64
	taxRates              []string
	hasTaxRates           bool
}

func (c *call) readItems(key string, withID bool) []itemParams {
	idx, _ := c.p.indices(key)
	out := make([]itemParams, 0, len(idx))
	for _, i := range idx {
		it := itemParams{path: name([]string{key, i})}
		if withID {
			it.id = c.p.text(key, i, "id")
		}
		it.price, it.hasPrice = c.p.str(key, i, "price")
		it.quantity, it.hasQuantity = c.p.integer(key, i, "quantity")
		it.taxRates, it.hasTaxRates = c.p.list(key, i, "tax_rates")
		out = append(out, it)
	}
	return out
}

// resolve checks an item: its price (of the type the use needs), its quantity (1 when not
// sent) and its tax rate (at most one, "" for none).
func (c *call) resolve(it itemParams, recurring bool) (*price, int64, string, *apiError) {
	p, err := c.priceRef(it.price, it.path+"[price]", recurring)
	if err != nil {
		return nil, 0, "", err
	}
	q := int64(1)
	if it.hasQuantity {
		if q = it.quantity; q < 1 || q > maxQuantity {
			return nil, 0, "", errInvalid(it.path+"[quantity]", "Invalid quantity: must be between 1 and %d.", maxQuantity)
		}
	}
	rate, err := c.taxRateRef(it.taxRates, it.path+"[tax_rates]")
	return p, q, rate, err
}

// taxRateRef resolves a tax_rates list of at most one rate ("" for none).
func (c *call) taxRateRef(ids []string, param string) (string, *apiError) {
	switch len(ids) {
	case 0:
		return "", nil
	case 1:
		if c.a.taxRates[ids[0]] == nil {
			return "", errNoSuch("tax_rate", ids[0], param+"[0]")
		}
		return ids[0], nil
	}
	return "", errInvalid(param, "The sandbox supports one tax rate per line.")
}

func newestFirst[T interface{ Compare(T) int }](x, y T, xid, yid string) int {
	if c := y.Compare(x); c != 0 {
		return c
	}
	return strings.Compare(yid, xid)
}
