package pspx

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
)

// newInvoice creates the draft inv describes (its reason, subscription, currency, lines and
// own fields) and, when pending is set, adds the customer's pending invoice items in the
// invoice's currency (those of another subscription wait for that subscription's invoice).
func (c *call) newInvoice(cu *customer, inv *invoice, pending bool) *invoice {
	inv.id, inv.seq, inv.created, inv.customer, inv.status = newID("in_", 24), c.s.nextSeq(), c.now, cu.id, "draft"
	if inv.periodStart.IsZero() {
		inv.periodStart, inv.periodEnd = c.now, c.now
	}
	if inv.currency == "" {
		inv.currency = cu.currency
	}
	if pending {
		for _, it := range c.a.itemsInOrder() {
			if it.customer != cu.id || it.invoice != "" || (it.subscription != "" && it.subscription != inv.subscription) {
				continue
			}
			if inv.currency == "" {
				inv.currency = it.currency
			}
			if it.currency == inv.currency {
				c.addItem(inv, it)
			}
		}
	}
	if inv.currency == "" {
		inv.currency = "eur" // the sandbox account's default currency
	}
	if cu.currency == "" {
		cu.currency = inv.currency
	}
	c.a.invoices[inv.id] = inv
	id := c.emit("invoice.created", c.a.renderInvoice(inv), nil)
	if inv.autoAdvance {
		c.s.awaitedBy(id, inv)
	}
	return inv
}

// subscriptionInvoice creates a subscription's invoice, collecting its pending items.
func (c *call) subscriptionInvoice(s *subscription, inv *invoice) *invoice {
	inv.subscription, inv.currency = s.id, s.currency
	inv = c.newInvoice(c.a.customers[s.customer], inv, true)
	s.latestInvoice = inv.id
	return inv
}

// addItem puts an invoice item on a draft invoice as a line.
func (c *call) addItem(inv *invoice, it *invoiceItem) {
	it.invoice = inv.id
	inv.lines = append(inv.lines, &invoiceLine{
		id: newID("il_", 24), typ: "invoiceitem", item: it.id, price: it.price, taxRate: it.taxRate, quantity: it.quantity,
		amount: it.amount, tax: tax(it.amount, c.a.taxRates[it.taxRate]), description: it.description,
		subscription: it.subscription, proration: it.proration, periodStart: it.periodStart, periodEnd: it.periodEnd, metadata: it.metadata,
	})
}

func (a *account) itemsInOrder() []*invoiceItem {
	out := make([]*invoiceItem, 0, len(a.items))
	for _, it := range a.items {
		out = append(out, it)
	}
	slices.SortFunc(out, func(x, y *invoiceItem) int { return int(x.seq - y.seq) })
	return out
}

// finalize numbers a draft, applies the customer's credit balance and opens it; an invoice with
// nothing to pay is paid at once.
func (c *call) finalize(inv *invoice) {
	cu := c.a.customers[inv.customer]
	cu.numbered++
	inv.number = fmt.Sprintf("%s-%04d", cu.invoicePrefix, cu.numbered)
	inv.status, inv.finalizedAt = "open", c.now
	inv.startingBalance = cu.balance
	sum := c.a.totals(inv).total + cu.balance
	inv.amountDue, cu.balance = max(0, sum), min(0, sum)
	c.emit("invoice.finalized", c.a.renderInvoice(inv), nil)
	if inv.amountDue == 0 {
		c.invoicePaid(inv)
	}
}

func (c *call) voidInvoice(inv *invoice) {
	if pi := c.a.intents[inv.intent]; pi != nil && pi.status == "requires_payment_method" {
		c.cancelIntent(pi)
	}
	inv.status, inv.voidedAt = "void", c.now
	c.emit("invoice.voided", c.a.renderInvoice(inv), nil)
}

func (c *call) invoice(id string) (*invoice, *apiError) {
	if inv := c.a.invoices[id]; inv != nil {
		return inv, nil
	}
	return nil, errNoSuch("invoice", id, "invoice")
}

func (s *Server) createInvoiceItem(c *call) (any, *apiError) {
	custID := c.p.text("customer")
	it := c.readItemFields()
	amount, hasAmount := c.p.integer("amount")
	currency := strings.ToLower(c.p.text("currency"))
	invID, hasInv := c.p.str("invoice")
	description := c.p.text("description")
	metadata := applyMetadata(c, nil, "metadata")
	if err := c.p.done(); err != nil {
		return nil, err
	}
	if custID == "" {
		return nil, errMissing("customer")
	}
	cu, err := c.customer(custID, "customer")
	if err != nil {
		return nil, err
	}
	item := &invoiceItem{id: newID("ii_", 24), seq: c.s.nextSeq(), customer: cu.id, description: description,
		created: c.now, quantity: 1, periodStart: c.now, periodEnd: c.now, metadata: metadata}
	switch {
	case it.hasPrice && hasAmount:
		return nil, errInvalid("amount", "You may only specify one of these parameters: amount, price.")
	case it.hasPrice:
		p, quantity, rate, err := c.resolveAny(it)
		if err != nil {
			return nil, err
		}
		item.price, item.taxRate, item.currency, item.quantity, item.amount = p.id, rate, p.currency, quantity, p.unitAmount*quantity
		if description == "" {
			item.description = c.a.products[p.product].name
		}
	case hasAmount:
		// A custom amount: the provider's way to charge what no price describes (a prorated
		// difference, say). It needs a currency and a description.
		switch {
		case currency == "":
			return nil, errMissing("currency")
		case !currencyFormat.MatchString(currency):
			return nil, errInvalid("currency", "Invalid currency: %s.", currency)
		case amount == 0 || amount > maxUnitAmount || amount < -maxUnitAmount:
			return nil, errInvalid("amount", "Invalid integer: %d.", amount)
		case description == "":
			return nil, errMissing("description")
		}
		rate, err := c.taxRateRef(it.taxRates, "tax_rates")
		if err != nil {
			return nil, err
		}
		item.taxRate, item.currency, item.amount = rate, currency, amount
	default:
		return nil, errMissing("price")
	}
	if hasInv {
		inv, err := c.invoice(invID)
		if err != nil {
			return nil, err
		}
		switch {
		case inv.customer != cu.id:
			return nil, errInvalid("invoice", "The invoice %s belongs to another customer.", invID)
		case inv.status != "draft":
			return nil, invalidRequest(400, "invoice_not_editable", "invoice", "You can only add invoice items to draft invoices; %s is %s.", invID, inv.status)
		case len(inv.lines) > 0 && inv.currency != item.currency:
			return nil, errInvalid("currency", "The item's currency (%s) must match the invoice's currency (%s).", item.currency, inv.currency)
		}
		if len(inv.lines) == 0 {
			inv.currency = item.currency
		}
		c.a.items[item.id] = item
		c.addItem(inv, item)
	} else {
		c.a.items[item.id] = item
	}
	c.emit("invoiceitem.created", c.a.renderItem(item), nil)
	return c.a.renderItem(item), nil
}

// readItemFields reads the top-level price, quantity and tax_rates of an invoice item.
func (c *call) readItemFields() itemParams {
	var it itemParams
	it.price, it.hasPrice = c.p.str("price")
	it.quantity, it.hasQuantity = c.p.integer("quantity")
	it.taxRates, it.hasTaxRates = c.p.list("tax_rates")
	return it
}

// resolveAny resolves an invoice item, whose price may be one-time or recurring and whose
// parameters sit at the top level.
func (c *call) resolveAny(it itemParams) (*price, int64, string, *apiError) {
	p := c.a.prices[it.price]
	if p == nil {
		return nil, 0, "", errNoSuch("price", it.price, "price")
	}
	q := int64(1)
	if it.hasQuantity {
		if q = it.quantity; q < 1 || q > maxQuantity {
			return nil, 0, "", errInvalid("quantity", "Invalid quantity: must be between 1 and %d.", maxQuantity)
		}
	}
	rate, err := c.taxRateRef(it.taxRates, "tax_rates")
	return p, q, rate, err
}

func (s *Server) createInvoice(c *call) (any, *apiError) {
	custID := c.p.text("customer")
	footer := c.p.text("footer")
	pmID, hasPM := c.p.str("default_payment_method")
	metadata := applyMetadata(c, nil, "metadata")
	behavior, hasBehavior := c.p.str("pending_invoice_items_behavior")
	if err := c.p.done(); err != nil {
		return nil, err
	}
	if custID == "" {
		return nil, errMissing("customer")
	}
	cu, err := c.customer(custID, "customer")
	if err != nil {
		return nil, err
	}
	if !hasBehavior {
		behavior = "exclude" // the default since the provider's 2022-08-01 version
	}
	if behavior != "include" && behavior != "exclude" {
		return nil, errInvalid("pending_invoice_items_behavior", "Invalid pending_invoice_items_behavior: must be one of exclude or include.")
	}
	if hasPM && pmID != "" {
		if m := c.a.methods[pmID]; m == nil {
			return nil, errNoSuch("PaymentMethod", pmID, "default_payment_method")
		} else if m.customer != cu.id {
			return nil, errInvalid("default_payment_method", "The customer does not have a payment method with the ID %s. The payment method must be attached to the customer.", pmID)
		}
	}
	inv := c.newInvoice(cu, &invoice{billingReason: "manual", footer: footer, defaultPM: pmID, metadata: metadata}, behavior == "include")
	return c.a.renderInvoice(inv), nil
}

func (s *Server) getInvoice(c *call) (any, *apiError) {
	if err := c.p.done(); err != nil {
		return nil, err
	}
	inv, err := c.invoice(c.r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	return c.a.renderInvoice(inv), nil
}

func (s *Server) listInvoices(c *call) (any, *apiError) {
	custID, hasCust := c.p.str("customer")
	var all []*invoice
	for _, inv := range c.a.invoices {
		if !hasCust || inv.customer == custID {
			all = append(all, inv)
		}
	}
	slices.SortFunc(all, func(x, y *invoice) int { return int(y.seq - x.seq) })
	page, more, err := pageOf(c, all, func(inv *invoice) string { return inv.id }, "invoice")
	if perr := c.p.done(); perr != nil {
		return nil, perr
	}
	if err != nil {
		return nil, err
	}
	if hasCust && c.a.customers[custID] == nil {
		return nil, errNoSuch("customer", custID, "customer")
	}
	data := make([]invoiceJSON, len(page))
	for i, inv := range page {
		data[i] = c.a.renderInvoice(inv)
	}
	return listJSON{Object: "list", Data: data, HasMore: more, URL: "/v1/invoices"}, nil
}

func (s *Server) finalizeInvoice(c *call) (any, *apiError) {
	if err := c.p.done(); err != nil {
		return nil, err
	}
	inv, err := c.invoice(c.r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	if inv.status != "draft" {
		return nil, errState("This invoice is already finalized, you can't re-finalize a non-draft invoice.")
	}
	c.finalize(inv)
	return c.a.renderInvoice(inv), nil
}

func (s *Server) payInvoice(c *call) (any, *apiError) {
	pmID, hasPM := c.p.str("payment_method")
	if err := c.p.done(); err != nil {
		return nil, err
	}
	inv, err := c.invoice(c.r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	switch inv.status {
	case "paid":
		return nil, errState("Invoice is already paid")
	case "void":
		return nil, errState("You cannot pay a void invoice.")
	}
	if pi := c.a.intents[inv.intent]; pi != nil && pi.status == "processing" {
		return nil, errState("This invoice's payment is processing; wait for it to settle.")
	}
	m := c.methodFor(inv)
	if hasPM {
		if m = c.a.methods[pmID]; m == nil {
			return nil, errNoSuch("PaymentMethod", pmID, "payment_method")
		}
		if m.customer != inv.customer {
			return nil, errInvalid("payment_method", "The PaymentMethod %s does not belong to the Customer %s. Please use a PaymentMethod attached to this Customer.", pmID, inv.customer)
		}
	}
	if m == nil {
		return nil, errInvalid("", "This customer has no attached payment source or default payment method. Please consider adding a default payment method.")
	}
	if inv.status == "draft" {
		c.finalize(inv)
		if inv.status == "paid" {
			return c.a.renderInvoice(inv), nil
		}
	}
	if c.chargeInvoice(inv, m) == "failed" {
		return nil, errDeclined()
	}
	return c.a.renderInvoice(inv), nil
}

func (s *Server) voidInvoice(c *call) (any, *apiError) {
	if err := c.p.done(); err != nil {
		return nil, err
	}
	inv, err := c.invoice(c.r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	if inv.status != "open" && inv.status != "uncollectible" {
		return nil, errState("You can only void open or uncollectible invoices; this invoice is %s.", inv.status)
	}
	if pi := c.a.intents[inv.intent]; pi != nil && pi.status == "processing" {
		return nil, errState("This invoice's payment is processing; it cannot be voided now.")
	}
	c.voidInvoice(inv)
	return c.a.renderInvoice(inv), nil
}

// updateInvoiceLine changes the description or metadata of a draft invoice's line, as a webhook
// receiver does while a renewal waits in its draft window; a line of an invoice item changes the
// item too.
func (s *Server) updateInvoiceLine(c *call) (any, *apiError) {
	inv, err := c.invoice(c.r.PathValue("id"))
	if err != nil {
		return nil, err
	}
	id := c.r.PathValue("line_id")
	i := slices.IndexFunc(inv.lines, func(l *invoiceLine) bool { return l.id == id })
	description, hasDescription := c.p.str("description")
	var metadata map[string]string
	if i >= 0 {
		metadata = applyMetadata(c, maps.Clone(inv.lines[i].metadata), "metadata")
	} else {
		applyMetadata(c, nil, "metadata")
	}
	if perr := c.p.done(); perr != nil {
		return nil, perr
	}
	switch {
	case i < 0:
		return nil, errNoSuch("invoice line item", id, "line_item")
	case inv.status != "draft":
		return nil, invalidRequest(http.StatusBadRequest, "invoice_not_editable", "", "You can only update the lines of a draft invoice; %s is %s.", inv.id, inv.status)
	}
	before := c.a.renderInvoice(inv)
	l := inv.lines[i]
	if hasDescription {
		l.description = description
	}
	l.metadata = metadata
	if it := c.a.items[l.item]; it != nil {
		it.description, it.metadata = l.description, l.metadata
	}
	c.emit("invoice.updated", c.a.renderInvoice(inv), before)
	return c.a.renderLine(inv, l), nil
}
