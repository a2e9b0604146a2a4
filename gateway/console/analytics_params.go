package console

import (
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// analyticsRanges are the lengths, in days, the analytics page offers: the ones analytics'
// GetDailySeries answers.
var analyticsRanges = []int{7, 30, 90, 365}

// defaultRange is the range a link without days shows.
const defaultRange = 30

// rangeFrom reads the analytics page's range: days, one of analyticsRanges; absent is the default.
func rangeFrom(v url.Values) (int, error) {
	s, ok := v["days"]
	if !ok {
		return defaultRange, nil
	}
	if len(s) != 1 {
		return 0, errField{"days"}
	}
	days, err := strconv.Atoi(s[0])
	if err != nil || !slices.Contains(analyticsRanges, days) || strconv.Itoa(days) != s[0] {
		return 0, errField{"days"}
	}
	return days, nil
}

// revenueCode is the currency of a revenue chart's name, in lower case.
var revenueCode = regexp.MustCompile(`^[a-z]{3}$`)

// chartFrom reads the chart a CSV link names (its file: the chart's name and ".csv"); a name the
// page never links is refused.
func chartFrom(file string) (analyticsChart, error) {
	name, ok := strings.CutSuffix(file, ".csv")
	if !ok {
		return analyticsChart{}, errField{"series"}
	}
	if code, ok := strings.CutPrefix(name, revenuePrefix); ok && revenueCode.MatchString(code) {
		return revenueChart(strings.ToUpper(code)), nil
	}
	for _, c := range []analyticsChart{signInsChart, growthChart, subscriptionsChart, failuresChart} {
		if c.name == name {
			return c, nil
		}
	}
	return analyticsChart{}, errField{"series"}
}
