package domain

import (
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
