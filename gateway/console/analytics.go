package console

import (
	"bytes"
	"html/template"
	"mime"
	"net/http"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/berthhq/berth/gateway/webpage/chart"
	"github.com/berthhq/berth/pkg/locale"
	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// The analytics page of an app ({app}) and its charts' CSV files ({file}: a chart's name and
// ".csv", see chartFrom).
const (
	AnalyticsPath    = Path + "/apps/{app}/analytics"
	AnalyticsCSVPath = Path + "/apps/{app}/analytics/{file}"
)

// AnalyticsURL is the app's analytics page, for links.
func (frame) AnalyticsURL(appID string) string { return Path + "/apps/" + appID + "/analytics" }

// analyticsChart is one chart of the analytics page: its name (the CSV file's and the drawing's
// id), its title (a catalog key, with the revenue charts' currency as its argument), how it draws
// and what it reads of each day's row.
type analyticsChart struct {
	name     string
	title    string
	currency string // the revenue charts' ISO 4217 code, "" for the others
	kind     chart.Kind
	series   []dailyValue
}

// dailyValue is one series of a chart: its name (a catalog key) and its value on a day.
type dailyValue struct {
	name  string
	value func(*analyticsv1.DailyRow) int64
}

// The charts whose series every range has; the revenue charts are one per currency the range saw
// (revenueChart), between subscriptions and failures.
var (
	signInsChart = analyticsChart{name: "sign-ins", title: "console.analytics.signIns", kind: chart.Line, series: []dailyValue{
		{"console.analytics.signInsSeries", (*analyticsv1.DailyRow).GetSignIns},
		{"console.analytics.activeUsers", (*analyticsv1.DailyRow).GetActiveUsers},
	}}
	growthChart = analyticsChart{name: "growth", title: "console.analytics.growth", kind: chart.Bar, series: []dailyValue{
		{"console.analytics.newUsers", (*analyticsv1.DailyRow).GetNewUsers},
		{"console.analytics.newTenants", (*analyticsv1.DailyRow).GetNewTenants},
	}}
	subscriptionsChart = analyticsChart{name: "subscriptions", title: "console.analytics.subscriptions", kind: chart.Line, series: []dailyValue{
		{"console.analytics.activeSubscriptions", (*analyticsv1.DailyRow).GetActiveSubscriptions},
	}}
	failuresChart = analyticsChart{name: "failures", title: "console.analytics.failures", kind: chart.Bar, series: []dailyValue{
		{"console.analytics.paymentFailures", (*analyticsv1.DailyRow).GetPaymentFailures},
		{"console.analytics.frozenTenants", (*analyticsv1.DailyRow).GetFrozenTenants},
	}}
)

// revenuePrefix starts the name of a revenue chart, which ends with its currency in lower case.
const revenuePrefix = "revenue-"

// revenueChart is the recurring and one-time revenue in currency.
func revenueChart(currency string) analyticsChart {
	return analyticsChart{name: revenuePrefix + strings.ToLower(currency), title: "console.analytics.revenue", currency: currency, kind: chart.Bar,
		series: []dailyValue{
			{"console.analytics.recurring", func(r *analyticsv1.DailyRow) int64 { return amountIn(r.GetRecurringRevenue(), currency) }},
			{"console.analytics.oneTime", func(r *analyticsv1.DailyRow) int64 { return amountIn(r.GetOneTimeRevenue(), currency) }},
		}}
}

// isoCode is the form of an ISO 4217 currency code.
var isoCode = regexp.MustCompile(`^[A-Z]{3}$`)

// noCurrency is ISO 4217's code for "no currency": the revenue of payments that named none (which
// analytics keeps under the empty code) is shown under it.
const noCurrency = "XXX"

// currencyOf is the code a revenue amount is charted under.
func currencyOf(code string) string {
	if !isoCode.MatchString(code) {
		return noCurrency
	}
	return code
}

// amountIn sums the amounts of amounts in currency.
func amountIn(amounts []*analyticsv1.CurrencyAmount, currency string) int64 {
	var sum int64
	for _, a := range amounts {
		if currencyOf(a.GetCurrency()) == currency {
			sum += a.GetAmount()
		}
	}
	return sum
}

// currencies are the codes of the revenue the rows hold, sorted.
func currencies(rows []*analyticsv1.DailyRow) []string {
	var out []string
	for _, r := range rows {
		for _, a := range slices.Concat(r.GetRecurringRevenue(), r.GetOneTimeRevenue()) {
			if c := currencyOf(a.GetCurrency()); !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	slices.Sort(out)
	return out
}

// minorDigits are the decimals of the currencies whose minor unit is not the cent (as billing
// reads its providers' amounts); ISO 4217's "no currency" has no minor unit either.
var minorDigits = map[string]int{"JPY": 0, "KRW": 0, "CLP": 0, "ISK": 0, "BHD": 3, "KWD": 3, "JOD": 3, "OMR": 3, "TND": 3, noCurrency: 0}

func decimals(currency string) int {
	if d, ok := minorDigits[currency]; ok {
		return d
	}
	return 2
}

// pageCharts are the charts of the page for rows, in the page's order.
func pageCharts(rows []*analyticsv1.DailyRow) []analyticsChart {
	out := []analyticsChart{signInsChart, growthChart, subscriptionsChart}
	for _, c := range currencies(rows) {
		out = append(out, revenueChart(c))
	}
	return append(out, failuresChart)
}

// draw is the chart of rows in p's language.
func (a analyticsChart) draw(p locale.Printer, s *analyticsv1.DailySeries) chart.Chart {
	var args []any
	if a.currency != "" {
		args = append(args, a.currency)
	}
	title := p.T(a.title, args...)
	c := chart.Chart{ID: "chart-" + a.name, Kind: a.kind, Title: title,
		Description: p.T("console.analytics.description", title, s.GetFrom(), s.GetTo())}
	if a.currency != "" {
		c.Format = chart.Decimal(decimals(a.currency))
	}
	for _, r := range s.GetRows() {
		c.Labels = append(c.Labels, r.GetDay())
	}
	for _, v := range a.series {
		values := make([]int64, len(s.GetRows()))
		for i, r := range s.GetRows() {
			values[i] = v.value(r)
		}
		c.Series = append(c.Series, chart.Series{Name: p.T(v.name), Values: values})
	}
	return c
}

// chartView is one chart as the page shows it: the drawing, its data as a table and its CSV link.
type chartView struct {
	Name  string
	Title string
	SVG   template.HTML
	Table template.HTML
	CSV   string
}

// analyticsView is an app's charts over a range of days.
type analyticsView struct {
	frame
	App       *identityv1.App
	Days      int
	Ranges    []int
	From, To  string
	Charts    []chartView
	NoRevenue bool
}

// RangeURL is the analytics page of the app over days.
func (v analyticsView) RangeURL(days int) string {
	return v.AnalyticsURL(v.App.GetId()) + "?days=" + strconv.Itoa(days)
}

// dailySeries reads the app's daily rows over the page's range (rangeFrom of the query), answering a
// refusal itself.
func (c *Console) dailySeries(w http.ResponseWriter, r *http.Request, v visit) (string, int, *analyticsv1.DailySeries, bool) {
	id, err := appID(r)
	if err != nil {
		c.badForm(w, r, v.p, &v, err)
		return "", 0, nil, false
	}
	days, err := rangeFrom(r.URL.Query())
	if err != nil {
		c.badForm(w, r, v.p, &v, err)
		return "", 0, nil, false
	}
	s, err := c.Analytics.GetDailySeries(v.ctx, &analyticsv1.GetDailySeriesRequest{AppId: id, Days: int32(days)})
	if err != nil {
		c.fail(w, r, v, err, "read the app's daily series")
		return "", 0, nil, false
	}
	return id, days, s, true
}

// analytics shows the app's charts over the chosen range, each with its table and CSV link.
func (c *Console) analytics(w http.ResponseWriter, r *http.Request, v visit) {
	id, days, s, ok := c.dailySeries(w, r, v)
	if !ok {
		return
	}
	app, ok := c.readApp(w, r, v, id)
	if !ok {
		return
	}
	view := analyticsView{frame: c.frame(w, r, v.p, v.member, "console.analytics.title"), App: app, Days: days, Ranges: analyticsRanges,
		From: s.GetFrom(), To: s.GetTo(), NoRevenue: len(currencies(s.GetRows())) == 0}
	for _, a := range pageCharts(s.GetRows()) {
		ch := a.draw(v.p, s)
		view.Charts = append(view.Charts, chartView{Name: a.name, Title: ch.Title, SVG: ch.SVG(), Table: ch.Table(v.p.T("console.analytics.day")).HTML(),
			CSV: view.AnalyticsURL(id) + "/" + a.name + ".csv?days=" + strconv.Itoa(days)})
	}
	c.render(w, r, http.StatusOK, "analytics", view)
}

// analyticsCSV answers one chart's data over the chosen range as a CSV download.
func (c *Console) analyticsCSV(w http.ResponseWriter, r *http.Request, v visit) {
	ch, err := chartFrom(r.PathValue("file"))
	if err != nil {
		c.refuse(w, r, v.p, &v, failure{status: http.StatusNotFound, message: msgNotFound}, err.Error())
		return
	}
	_, _, s, ok := c.dailySeries(w, r, v)
	if !ok {
		return
	}
	var body bytes.Buffer
	if err := ch.draw(v.p, s).Table(v.p.T("console.analytics.day")).WriteCSV(&body); err != nil {
		c.internal(w, r, v.p, err, "write the "+ch.name+" CSV")
		return
	}
	w.Header().Set("Content-Type", "text/csv; charset=utf-8")
	w.Header().Set("Content-Disposition", mime.FormatMediaType("attachment",
		map[string]string{"filename": ch.name + "-" + s.GetFrom() + "-" + s.GetTo() + ".csv"}))
	_, _ = w.Write(body.Bytes())
}
