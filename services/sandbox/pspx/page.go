package pspx

import (
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

//go:embed checkout.html
var checkoutHTML string

// The test numbers and IBANs of the hosted page, and what each does.
var (
	cardOutcomes = map[string]outcome{"4242424242424242": succeeds, "4000000000000341": declines}
	ibanOutcomes = map[string]outcome{"DE89370400440532013000": settlesPaid, "DE62370400440532013001": settlesFailed}
	expiryFormat = regexp.MustCompile(`^\s*(\d{1,2})\s*/\s*(\d{2}|\d{4})\s*$`)
	cvcFormat    = regexp.MustCompile(`^\d{3,4}$`)
)

type pageData struct {
	Title, Heading, Button, Email string
	Live, Open, Card              bool
	Lines                         []pageLine
	Tax, TaxAmount, Total, Every  string
	Error, Notice, CancelURL      string
	AddressRequired               bool
	Shipping                      []string
	V                             map[string]string // what the payer typed, shown again after an error
}

type pageLine struct{ Name, Quantity, Amount string }

func (s *Server) lookupSession(id string) (*account, *session) {
	a := s.sessions[id]
	if a == nil {
		return nil, nil
	}
	return a, a.sessions[id]
}

// sessionNotFound is the page for an unknown session id, shown and posted to alike.
var sessionNotFound = pageData{Title: "Not found", Heading: "Checkout not found", Notice: "This checkout session does not exist."}

func (s *Server) showCheckout(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, se := s.lookupSession(r.PathValue("id"))
	if se == nil {
		s.renderPage(w, http.StatusNotFound, sessionNotFound)
		return
	}
	status := http.StatusOK
	if se.status == "expired" {
		status = http.StatusGone
	}
	s.renderSession(w, a, se, status, "", nil)
}

// submitCheckout completes a session with the payment details the form sent, then sends the
// payer back to the merchant's success URL with a 303.
func (s *Server) submitCheckout(w http.ResponseWriter, r *http.Request) {
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	formErr := r.ParseForm()
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.flush()
	a, se := s.lookupSession(r.PathValue("id"))
	if se == nil {
		s.renderPage(w, http.StatusNotFound, sessionNotFound)
		return
	}
	c := &call{s: s, a: a, now: s.clock.Now()}
	if se.status == "open" && !c.now.Before(se.expiresAt) {
		c.expireSession(se)
	}
	switch {
	case se.status == "complete":
		s.renderSession(w, a, se, http.StatusConflict, "", nil)
		return
	case se.status == "expired":
		s.renderSession(w, a, se, http.StatusGone, "", nil)
		return
	case formErr != nil:
		s.renderSession(w, a, se, http.StatusBadRequest, "The form could not be read; please try again.", nil)
		return
	}
	m, details, shipping, problem := c.readPayment(se, r.PostForm)
	if problem != "" {
		s.renderSession(w, a, se, http.StatusUnprocessableEntity, problem, r.PostForm)
		return
	}
	if !c.complete(se, m, details, shipping) {
		s.renderSession(w, a, se, http.StatusPaymentRequired, "Your card was declined. Try another card.", r.PostForm)
		return
	}
	http.Redirect(w, r, strings.ReplaceAll(se.successURL, "{CHECKOUT_SESSION_ID}", se.id), http.StatusSeeOther)
}

// readPayment checks the form and creates the payment method it describes; problem is the
// message for the payer when something is missing or not a test number.
func (c *call) readPayment(se *session, v url.Values) (m *paymentMethod, details, shipping *billingDetails, problem string) {
	get := func(k string) string { return strings.TrimSpace(v.Get(k)) }
	m = &paymentMethod{id: newID("pm_", 24), created: c.now, typ: se.pmType}
	details = &billingDetails{name: get("name")}
	var secret string
	if se.pmType == "card" {
		number := strings.ReplaceAll(get("card_number"), " ", "")
		out, ok := cardOutcomes[number]
		month, year, expOK := expiry(get("card_expiry"), c.now)
		switch {
		case number == "":
			return nil, nil, nil, "Enter your card number."
		case !ok:
			return nil, nil, nil, "This card number is not a sandbox test card. Use 4242 4242 4242 4242, or 4000 0000 0000 0341 for a card whose charges are declined."
		case !expOK:
			return nil, nil, nil, "Your card's expiration date is incomplete or in the past."
		case !cvcFormat.MatchString(get("card_cvc")):
			return nil, nil, nil, "Your card's security code is incomplete."
		}
		m.outcome, m.last4, m.expMonth, m.expYear, secret = out, number[12:], month, year, number
	} else {
		iban := strings.ToUpper(strings.ReplaceAll(get("iban"), " ", ""))
		out, ok := ibanOutcomes[iban]
		switch {
		case iban == "":
			return nil, nil, nil, "Enter your IBAN."
		case !ok:
			return nil, nil, nil, "This IBAN is not a sandbox test IBAN. Use DE89 3704 0044 0532 0130 00 (the debit succeeds) or DE62 3704 0044 0532 0130 01 (it fails); either settles at the next clock advance."
		case details.name == "":
			return nil, nil, nil, "Enter the account holder's name."
		}
		m.outcome, m.bankCode, m.last4, secret = out, iban[4:12], iban[len(iban)-4:], iban
	}
	if se.addressRequired {
		addr := &address{line1: get("address_line1"), postalCode: get("address_postal_code"), city: get("address_city"), country: strings.ToUpper(get("address_country"))}
		if details.name == "" || addr.line1 == "" || addr.postalCode == "" || addr.city == "" || !countryFormat.MatchString(addr.country) {
			return nil, nil, nil, "Enter your name and billing address: street, postal code, city and a two-letter country code."
		}
		details.address = addr
	}
	if len(se.shippingCountries) > 0 {
		addr := &address{line1: get("shipping_line1"), postalCode: get("shipping_postal_code"), city: get("shipping_city"), country: get("shipping_country")}
		if get("shipping_name") == "" || addr.line1 == "" || addr.postalCode == "" || addr.city == "" {
			return nil, nil, nil, "Enter the shipping address: name, street, postal code and city."
		}
		if !slices.Contains(se.shippingCountries, addr.country) {
			return nil, nil, nil, "We only ship to " + strings.Join(se.shippingCountries, ", ") + "."
		}
		shipping = &billingDetails{name: get("shipping_name"), address: addr}
	}
	sum := sha256.Sum256([]byte(secret))
	m.fingerprint = hex.EncodeToString(sum[:8])
	m.billing = *details
	c.a.methods[m.id] = m
	return m, details, shipping, ""
}

// expiry reads MM/YY or MM/YYYY and accepts a date from this month to twenty years ahead.
func expiry(s string, now time.Time) (month, year int, ok bool) {
	p := expiryFormat.FindStringSubmatch(s)
	if p == nil {
		return 0, 0, false
	}
	month, _ = strconv.Atoi(p[1])
	year, _ = strconv.Atoi(p[2])
	if year < 100 {
		year += 2000
	}
	current := now.Year()*12 + int(now.Month())
	at := year*12 + month
	return month, year, month >= 1 && month <= 12 && at >= current && year <= now.Year()+20
}

// renderSession renders the page of a session: its summary and, while open, the payment form.
func (s *Server) renderSession(w http.ResponseWriter, a *account, se *session, status int, problem string, typed url.Values) {
	d := pageData{
		Live: a.live, Open: se.status == "open", Card: se.pmType == "card", AddressRequired: se.addressRequired,
		Shipping: se.shippingCountries, CancelURL: se.cancelURL, Error: problem, V: map[string]string{},
		Email: a.customers[se.customer].email,
	}
	for k := range typed {
		d.V[k] = typed.Get(k)
	}
	switch se.mode {
	case "subscription":
		d.Title, d.Heading, d.Button = "Subscribe", "Subscribe", "Subscribe"
	case "payment":
		d.Title, d.Heading = "Pay", "Pay"
	default:
		d.Title, d.Heading, d.Button = "Save payment details", "Save your payment details", "Save"
	}
	if se.mode != "setup" {
		_, taxes, total := a.sessionAmounts(se)
		d.Total = formatMoney(total, se.currency)
		if se.mode == "payment" {
			d.Button = "Pay " + d.Total
		}
		for _, l := range se.lines {
			p := a.prices[l.price]
			d.Lines = append(d.Lines, pageLine{Name: a.products[p.product].name, Quantity: strconv.FormatInt(l.quantity, 10), Amount: formatMoney(p.unitAmount*l.quantity, p.currency)})
			if r := a.taxRates[l.taxRate]; r != nil {
				d.Tax = fmt.Sprintf("%s %s%%", r.displayName, formatPercent(r.percent))
				if r.inclusive {
					d.Tax += " (included)"
				}
			}
			if p.interval != "" {
				d.Every = p.interval
				if p.intervalCount > 1 {
					d.Every = fmt.Sprintf("%d %ss", p.intervalCount, p.interval)
				}
			}
		}
		if d.Tax != "" {
			d.TaxAmount = formatMoney(taxes, se.currency)
		}
	}
	switch se.status {
	case "complete":
		d.Notice = "This checkout is complete. You can close this page."
	case "expired":
		d.Notice = "This checkout session has expired. Return to the merchant to start again."
	}
	s.renderPage(w, status, d)
}

// renderPage writes a page with a policy that allows nothing but the page's own styles. It sets no
// form-action: browsers check it against every redirect that follows the form's post, and the
// merchant's return URL may itself redirect anywhere (Berth's return page sends the payer on to the
// app), which no list here could name.
func (s *Server) renderPage(w http.ResponseWriter, status int, d pageData) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	w.WriteHeader(status)
	if err := s.page.Execute(w, d); err != nil {
		s.log.Error("pspx sandbox: rendering the checkout page", "err", err)
	}
}
