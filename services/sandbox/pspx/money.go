package pspx

import (
	"math/big"
	"strconv"
	"strings"
	"time"
)

// Bounds that keep every amount computation far from int64 overflow: a line is at most
// maxUnitAmount × maxQuantity, and its tax is that times a percentage in ten-thousandths.
const (
	maxUnitAmount = 99_999_999 // the provider's largest amount: 999,999.99 in a two-decimal currency
	maxQuantity   = 10_000
)

// tax is the tax of a line amount at a rate, rounded half up: added on top when the rate is
// exclusive, the part of the amount that is tax when it is inclusive.
func tax(amount int64, r *taxRate) int64 {
	if r == nil || amount == 0 {
		return 0
	}
	neg := amount < 0
	if neg {
		amount = -amount
	}
	var t int64
	if r.inclusive {
		den := 1_000_000 + r.percent
		t = (2*amount*r.percent + den) / (2 * den)
	} else {
		t = (amount*r.percent + 500_000) / 1_000_000
	}
	if neg {
		return -t
	}
	return t
}

// lineTotal is what a line adds to a total: its amount, plus its tax when the rate is exclusive.
func lineTotal(amount, t int64, r *taxRate) int64 {
	if r != nil && !r.inclusive {
		return amount + t
	}
	return amount
}

// prorate is the share part/whole of a non-negative amount, rounded half up, to the second.
// Big integers, because amount × seconds of a long period can exceed int64.
func prorate(amount int64, part, whole time.Duration) int64 {
	den := big.NewInt(int64(whole / time.Second))
	if den.Sign() <= 0 || part <= 0 {
		return 0
	}
	num := new(big.Int).Mul(big.NewInt(amount), big.NewInt(int64(part/time.Second)))
	num.Mul(num, big.NewInt(2)).Add(num, den)
	return num.Quo(num, den.Mul(den, big.NewInt(2))).Int64()
}

// periodEnd is the end of the n-th period after anchor. Months and years keep the anchor's day
// of the month, clamped to the month's last day (a subscription anchored on the 31st renews on
// the 30th of April and the 31st of May, as the provider does).
func periodEnd(anchor time.Time, interval string, count int64, n int) time.Time {
	k := int(count) * n
	switch interval {
	case "day":
		return anchor.AddDate(0, 0, k)
	case "week":
		return anchor.AddDate(0, 0, 7*k)
	case "year":
		k *= 12
	}
	y, m, d := anchor.Date()
	first := time.Date(y, m+time.Month(k), 1, 0, 0, 0, 0, time.UTC)
	last := first.AddDate(0, 1, -1).Day()
	h, mi, s := anchor.Clock()
	return time.Date(first.Year(), first.Month(), min(d, last), h, mi, s, anchor.Nanosecond(), time.UTC)
}

// zeroDecimal lists the currencies without minor units.
var zeroDecimal = map[string]bool{
	"bif": true, "clp": true, "djf": true, "gnf": true, "jpy": true, "kmf": true, "krw": true, "mga": true,
	"pyg": true, "rwf": true, "ugx": true, "vnd": true, "vuv": true, "xaf": true, "xof": true, "xpf": true,
}

// formatMoney renders minor units for the hosted page: "12.34 EUR".
func formatMoney(amount int64, currency string) string {
	cur := strings.ToUpper(currency)
	if zeroDecimal[currency] {
		return strconv.FormatInt(amount, 10) + " " + cur
	}
	sign := ""
	if amount < 0 {
		sign, amount = "-", -amount
	}
	return sign + strconv.FormatInt(amount/100, 10) + "." + pad2(amount%100) + " " + cur
}

func pad2(n int64) string {
	if n < 10 {
		return "0" + strconv.FormatInt(n, 10)
	}
	return strconv.FormatInt(n, 10)
}

// formatPercent renders ten-thousandths of a percent: 190000 → "19", 72500 → "7.25".
func formatPercent(p int64) string {
	s := strconv.FormatInt(p/10000, 10)
	if frac := p % 10000; frac != 0 {
		s += "." + strings.TrimRight(strconv.FormatInt(10000+frac, 10)[1:], "0")
	}
	return s
}
