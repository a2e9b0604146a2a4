package domain

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/berthhq/berth/pkg/fault"
)

// CatalogPrice is a price of a pspy app's catalog: pspy has no price objects, so Berth keeps them.
type CatalogPrice struct {
	ID          string
	AppID       string
	ProductName string
	Amount      int64 // minor units
	Currency    string
	Interval    string // "" = one-time; else "N days|weeks|months"
	CreatedAt   time.Time
}

// CatalogTaxRate is a tax rate of a pspy app's catalog.
type CatalogTaxRate struct {
	ID          string
	AppID       string
	DisplayName string
	BasisPoints int32 // 1900 = 19 %
	Inclusive   bool
	CreatedAt   time.Time
}

var (
	currencyPattern = regexp.MustCompile(`^[A-Z]{3}$`)
	intervalPattern = regexp.MustCompile(`^([1-9][0-9]{0,2}) (day|days|week|weeks|month|months)$`)
)

// CheckInterval validates a subscription interval in pspy's form.
func CheckInterval(s string) error {
	m := intervalPattern.FindStringSubmatch(s)
	if m == nil {
		return fault.InvalidField("interval", `must be "" (one-time) or "N days", "N weeks" or "N months"`)
	}
	if n, _ := strconv.Atoi(m[1]); (n == 1) != !strings.HasSuffix(m[2], "s") {
		return fault.InvalidField("interval", "must use the singular for 1 and the plural otherwise")
	}
	return nil
}

// NewCatalogPrice validates a catalog price.
func NewCatalogPrice(p CatalogPrice) (CatalogPrice, error) {
	p.Currency = strings.ToUpper(p.Currency)
	switch {
	case strings.TrimSpace(p.ProductName) == "" || utf8.RuneCountInString(p.ProductName) > 200:
		return CatalogPrice{}, fault.InvalidField("productName", "must be 1 to 200 characters")
	case p.Amount < 1 || p.Amount > 100_000_000:
		return CatalogPrice{}, fault.InvalidField("amount", "must be between 1 and 100000000 minor units")
	case !currencyPattern.MatchString(p.Currency):
		return CatalogPrice{}, fault.InvalidField("currency", "must be an ISO 4217 code such as EUR")
	}
	if p.Interval != "" {
		if err := CheckInterval(p.Interval); err != nil {
			return CatalogPrice{}, err
		}
	}
	p.CreatedAt = p.CreatedAt.UTC()
	return p, nil
}

// NewCatalogTaxRate validates a catalog tax rate.
func NewCatalogTaxRate(r CatalogTaxRate) (CatalogTaxRate, error) {
	switch {
	case strings.TrimSpace(r.DisplayName) == "" || utf8.RuneCountInString(r.DisplayName) > 100:
		return CatalogTaxRate{}, fault.InvalidField("displayName", "must be 1 to 100 characters")
	case r.BasisPoints < 0 || r.BasisPoints > 10000:
		return CatalogTaxRate{}, fault.InvalidField("basisPoints", "must be between 0 and 10000 (100 %%)")
	}
	r.CreatedAt = r.CreatedAt.UTC()
	return r, nil
}

// minorDigits are the decimals of the currencies whose minor unit is not the cent.
var minorDigits = map[string]int{"JPY": 0, "KRW": 0, "CLP": 0, "ISK": 0, "HUF": 2, "BHD": 3, "KWD": 3, "JOD": 3, "OMR": 3, "TND": 3}

// ParseMinor reads pspy's decimal string of an amount in currency ("10.00" EUR, "1000" JPY) as
// minor units: exactly the currency's minor digits, as FormatMinor writes them.
func ParseMinor(value, currency string) (int64, error) {
	digits, ok := minorDigits[currency]
	if !ok {
		digits = 2
	}
	whole, frac, dotted := strings.Cut(value, ".")
	if whole == "" || len(frac) != digits || dotted != (digits > 0) || strings.Trim(whole+frac, "0123456789") != "" {
		return 0, fmt.Errorf("amount %q is not a %s amount with %d decimals", value, currency, digits)
	}
	return strconv.ParseInt(whole+frac, 10, 64)
}

// FormatMinor renders an amount of minor units as pspy's decimal string: exactly the currency's
// minor digits ("10.00" EUR, "1000" JPY).
func FormatMinor(amount int64, currency string) string {
	digits, ok := minorDigits[currency]
	if !ok {
		digits = 2
	}
	if digits == 0 {
		return strconv.FormatInt(amount, 10)
	}
	unit := int64(1)
	for range digits {
		unit *= 10
	}
	return fmt.Sprintf("%d.%0*d", amount/unit, digits, amount%unit)
}

// Total is the amount charged for quantity of the price with the tax rate (nil for none): an
// exclusive rate adds its tax, rounded half up; an inclusive one is already in the price.
func Total(p CatalogPrice, quantity int64, tax *CatalogTaxRate) int64 {
	total := p.Amount * quantity
	if tax != nil && !tax.Inclusive {
		total += (total*int64(tax.BasisPoints) + 5000) / 10000
	}
	return total
}

// AddInterval moves t on by a catalog interval ("1 month", "14 days", "2 weeks"). A month is a
// calendar month, ending on the target month's last day when it is shorter (31 January plus a
// month is 28 February, not 3 March), as providers bill.
func AddInterval(t time.Time, interval string) time.Time {
	next, _ := addIntervals(t, interval, 1)
	return next
}

// addIntervals moves t on by k intervals at once, counting months from t as AddInterval does
// (31 January plus two months is 31 March, not 28 March); ok is false, and t unchanged, for an
// interval that is not one.
func addIntervals(t time.Time, interval string, k int) (next time.Time, ok bool) {
	m := intervalPattern.FindStringSubmatch(interval)
	if m == nil {
		return t, false
	}
	n, _ := strconv.Atoi(m[1])
	n *= k
	switch strings.TrimSuffix(m[2], "s") {
	case "day":
		return t.AddDate(0, 0, n), true
	case "week":
		return t.AddDate(0, 0, 7*n), true
	}
	next = t.AddDate(0, n, 0)
	if next.Day() != t.Day() {
		// AddDate normalised an overflow into the month after: step back to the last day.
		next = next.AddDate(0, 0, -next.Day())
	}
	return next, true
}
