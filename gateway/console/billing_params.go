package console

import (
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Limits of the billing forms. Billing checks every value again (codes, currencies, intervals,
// date order, a maximum below the uses made); these bound what the console sends and refuse a
// number or date that is not one with the field named, before any call.
const (
	maxProductName  = 200 // characters, as billing's catalog
	maxTaxName      = 100
	maxPromoCode    = 64
	maxPromoName    = 200
	maxPromoDescr   = 2000
	maxInterval     = 16 // "999 months"
	maxAmount       = 100_000_000
	maxBasisPoints  = 10_000
	maxFreeUnits    = 1_000_000
	maxFreeDays     = 3660
	maxRedemptions  = 1<<31 - 1 // int32
	maxUseCursor    = 200
	maxBoundLength  = 40 // an RFC 3339 time with fractions and an offset
	redemptionsPage = 20
)

// plainDigits are a plain decimal number: no sign, no spaces, no exponent.
var plainDigits = regexp.MustCompile(`^[0-9]{1,10}$`)

// countField reads a whole number in [lo, hi]; an optional field left empty is 0 (none, or
// unlimited for a maximum).
func countField(v url.Values, key string, lo, hi int64, optional bool) (int64, error) {
	s := strings.TrimSpace(v.Get(key))
	if s == "" && optional {
		return 0, nil
	}
	if !plainDigits.MatchString(s) {
		return 0, errField{key}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, errField{key}
	}
	return n, nil
}

// boundField reads a validity bound: "" (none), a YYYY-MM-DD day or an RFC 3339 time, as typed.
func boundField(v url.Values, key string) (string, error) {
	s := strings.TrimSpace(v.Get(key))
	if s == "" {
		return "", nil
	}
	if len(s) > maxBoundLength {
		return "", errField{key}
	}
	if _, err := time.Parse(time.DateOnly, s); err == nil {
		return s, nil
	}
	if _, err := time.Parse(time.RFC3339, s); err == nil {
		return s, nil
	}
	return "", errField{key}
}

// optionalIDField reads a UUID or "" (none).
func optionalIDField(v url.Values, key string) (string, error) {
	if v.Get(key) == "" {
		return "", nil
	}
	return id(v, key)
}

// promotionID is the path's promotion id, checked: billing decides whether it is the app's.
func promotionID(v url.Values) (string, error) { return id(v, "promotion") }

// useCursorPattern is a page cursor as billing encodes it (base64url without padding).
var useCursorPattern = regexp.MustCompile(`^[A-Za-z0-9_-]*$`)

// redemptionsCursor reads the redemptions page's cursor ("" for the newest).
func redemptionsCursor(v url.Values) (string, error) {
	s := v.Get("cursor")
	if len(s) > maxUseCursor || !useCursorPattern.MatchString(s) {
		return "", errField{"cursor"}
	}
	return s, nil
}

// The billing page's actions.
const (
	billingReferral  = "referral"
	billingSettings  = "settings"
	billingPrice     = "price"
	billingTaxRate   = "taxRate"
	billingPromotion = "promotion"
)

// limitsForm is a promotion's limits: the most redemptions (0 unlimited) and its validity ("" no
// bound).
type limitsForm struct {
	MaxRedemptions        int32
	ValidFrom, ValidUntil string
}

func limitsFrom(v url.Values) (limitsForm, error) {
	m, err := countField(v, "max_redemptions", 0, maxRedemptions, true)
	if err != nil {
		return limitsForm{}, err
	}
	f := limitsForm{MaxRedemptions: int32(m)}
	if f.ValidFrom, err = boundField(v, "valid_from"); err != nil {
		return limitsForm{}, err
	}
	if f.ValidUntil, err = boundField(v, "valid_until"); err != nil {
		return limitsForm{}, err
	}
	return f, nil
}

// priceForm is a catalog price: its amount in minor units of currency, and its interval ("" for
// a one-time price, else "N days|weeks|months").
type priceForm struct {
	ProductName, Currency, Interval string
	Amount                          int64
}

// taxRateForm is a catalog tax rate in basis points (1900 = 19 %).
type taxRateForm struct {
	DisplayName string
	BasisPoints int32
	Inclusive   bool
}

// promotionForm is a new promotion: what it grants and its limits.
type promotionForm struct {
	Code, Name, Description string
	FreeUnits, FreeDays     int32
	limitsForm
}

// billingForm is a posted action of the billing page.
type billingForm struct {
	Action            string
	ReferralPromotion string // referral: a promotion's id, "" for none
	Settings          settingsForm
	Price             priceForm
	TaxRate           taxRateForm
	Promotion         promotionForm
}

func billingFrom(v url.Values) (billingForm, error) {
	a, err := oneOf(v, "action", billingReferral, billingSettings, billingPrice, billingTaxRate, billingPromotion)
	if err != nil {
		return billingForm{}, err
	}
	f := billingForm{Action: a}
	switch a {
	case billingReferral:
		f.ReferralPromotion, err = optionalIDField(v, "referral_promotion")
	case billingSettings:
		f.Settings, err = settingsFrom(v)
	case billingPrice:
		f.Price, err = priceFrom(v)
	case billingTaxRate:
		f.TaxRate, err = taxRateFrom(v)
	case billingPromotion:
		f.Promotion, err = newPromotionFrom(v)
	}
	if err != nil {
		return billingForm{}, err
	}
	return f, nil
}

func priceFrom(v url.Values) (priceForm, error) {
	var (
		p   priceForm
		err error
	)
	if p.ProductName, err = textField(v, "product_name", maxProductName, true); err != nil {
		return priceForm{}, err
	}
	if p.Amount, err = countField(v, "amount", 1, maxAmount, false); err != nil {
		return priceForm{}, err
	}
	if p.Currency, err = textField(v, "currency", 3, true); err != nil {
		return priceForm{}, err
	}
	p.Currency = strings.ToUpper(p.Currency)
	if p.Interval, err = textField(v, "interval", maxInterval, false); err != nil {
		return priceForm{}, err
	}
	return p, nil
}

func taxRateFrom(v url.Values) (taxRateForm, error) {
	name, err := textField(v, "display_name", maxTaxName, true)
	if err != nil {
		return taxRateForm{}, err
	}
	bp, err := countField(v, "basis_points", 0, maxBasisPoints, false)
	if err != nil {
		return taxRateForm{}, err
	}
	inclusive, err := oneOf(v, "inclusive", "", "yes")
	if err != nil {
		return taxRateForm{}, err
	}
	return taxRateForm{DisplayName: name, BasisPoints: int32(bp), Inclusive: inclusive == "yes"}, nil
}

func newPromotionFrom(v url.Values) (promotionForm, error) {
	var (
		p   promotionForm
		err error
	)
	if p.Code, err = textField(v, "code", maxPromoCode, true); err != nil {
		return promotionForm{}, err
	}
	if p.Name, err = textField(v, "name", maxPromoName, true); err != nil {
		return promotionForm{}, err
	}
	if p.Description, err = textField(v, "description", maxPromoDescr, false); err != nil {
		return promotionForm{}, err
	}
	units, err := countField(v, "free_units", 0, maxFreeUnits, true)
	if err != nil {
		return promotionForm{}, err
	}
	days, err := countField(v, "free_days", 0, maxFreeDays, true)
	if err != nil {
		return promotionForm{}, err
	}
	p.FreeUnits, p.FreeDays = int32(units), int32(days)
	if p.limitsForm, err = limitsFrom(v); err != nil {
		return promotionForm{}, err
	}
	return p, nil
}

// The promotion page's actions.
const (
	promotionLimits     = "limits"
	promotionActivate   = "activate"
	promotionDeactivate = "deactivate"
)

// promotionChange is a posted action of a promotion's page.
type promotionChange struct {
	Action string
	Limits limitsForm // limits
}

func promotionChangeFrom(v url.Values) (promotionChange, error) {
	a, err := oneOf(v, "action", promotionLimits, promotionActivate, promotionDeactivate)
	if err != nil {
		return promotionChange{}, err
	}
	c := promotionChange{Action: a}
	if a == promotionLimits {
		if c.Limits, err = limitsFrom(v); err != nil {
			return promotionChange{}, err
		}
	}
	return c, nil
}

// settingsForm is the app's billing settings as the page posts them: the connection checkouts use,
// where the return page sends the browser ("" the app's first redirect URI), how many failed
// payments freeze a tenant, how long a one-time payment stays valid, and a renewal line's text
// ("" the provider's own).
type settingsForm struct {
	ConnectionID, PaymentReturnURL, RenewalLine string
	FailedPaymentsToFreeze, OneTimeValidDays    int32
}

// The bounds billing holds the settings to; it checks them again, with the return URL's form.
const (
	maxFailedPayments = 100
	maxValidDays      = 3660
	maxRenewalLine    = 500
)

func settingsFrom(v url.Values) (settingsForm, error) {
	var (
		f   settingsForm
		err error
	)
	if f.ConnectionID, err = id(v, "connection_id"); err != nil {
		return settingsForm{}, err
	}
	if f.PaymentReturnURL, err = textField(v, "payment_return_url", maxOrigin, false); err != nil {
		return settingsForm{}, err
	}
	n, err := countField(v, "failed_payments_to_freeze", 1, maxFailedPayments, false)
	if err != nil {
		return settingsForm{}, err
	}
	f.FailedPaymentsToFreeze = int32(n)
	if n, err = countField(v, "one_time_valid_days", 1, maxValidDays, false); err != nil {
		return settingsForm{}, err
	}
	f.OneTimeValidDays = int32(n)
	if f.RenewalLine, err = textField(v, "renewal_line", maxRenewalLine, false); err != nil {
		return settingsForm{}, err
	}
	return f, nil
}
