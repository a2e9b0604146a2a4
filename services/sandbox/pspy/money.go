package pspy

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// minorDigits are the currencies the sandbox accepts, with the number of decimals the provider
// requires in an amount's value: "10.00" EUR, "1000" JPY.
var minorDigits = map[string]int{
	"EUR": 2, "USD": 2, "GBP": 2, "CHF": 2, "SEK": 2, "NOK": 2, "DKK": 2, "PLN": 2,
	"JPY": 0,
}

// valuePatterns bound the integral part to ten digits, so the minor units always fit an int64.
var valuePatterns = map[int]*regexp.Regexp{
	0: regexp.MustCompile(`^(0|[1-9][0-9]{0,9})$`),
	2: regexp.MustCompile(`^(0|[1-9][0-9]{0,9})\.[0-9]{2}$`),
}

// money is an amount in minor units: arithmetic on refunds stays exact.
type money struct {
	currency string
	minor    int64
}

// amountIn is an amount as a request carries it.
type amountIn struct {
	Currency string `json:"currency"`
	Value    string `json:"value"`
}

// amountOut is an amount as the provider renders it.
type amountOut struct {
	Value    string `json:"value"`
	Currency string `json:"currency"`
}

// parseAmount validates a positive amount; field names the request field for the problem.
func parseAmount(a *amountIn, field string) (money, *fieldError) {
	if a == nil {
		return money{}, &fieldError{field, "The amount is required."}
	}
	digits, ok := minorDigits[a.Currency]
	if !ok {
		return money{}, &fieldError{field + ".currency", fmt.Sprintf("The currency %q is not supported.", a.Currency)}
	}
	if !valuePatterns[digits].MatchString(a.Value) {
		if digits == 0 {
			return money{}, &fieldError{field + ".value", fmt.Sprintf("The amount value for %s must be a whole number without decimals.", a.Currency)}
		}
		return money{}, &fieldError{field + ".value", fmt.Sprintf("The amount value for %s must have exactly %d decimals, such as \"10.00\".", a.Currency, digits)}
	}
	minor, _ := strconv.ParseInt(strings.Replace(a.Value, ".", "", 1), 10, 64) // the pattern admits digits only
	if minor <= 0 {
		return money{}, &fieldError{field + ".value", "The amount must be higher than zero."}
	}
	return money{currency: a.Currency, minor: minor}, nil
}

// value renders the minor units with the currency's decimals.
func (m money) value() string {
	digits := minorDigits[m.currency]
	if digits == 0 {
		return strconv.FormatInt(m.minor, 10)
	}
	unit := int64(1)
	for range digits {
		unit *= 10
	}
	return fmt.Sprintf("%d.%0*d", m.minor/unit, digits, m.minor%unit)
}

func (m money) out() amountOut { return amountOut{Value: m.value(), Currency: m.currency} }

func (m money) String() string { return m.currency + " " + m.value() }
