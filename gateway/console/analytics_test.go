package console

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/pkg/locale"
	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
)

const analyticsPage = Path + "/apps/" + testApp + "/analytics"

// shopFigures is a week of an app: a sign-in more each day, revenue in euros and yen and failures
// on the last day.
func shopFigures(i int, r *analyticsv1.DailyRow) {
	r.SignIns, r.ActiveUsers, r.NewUsers, r.NewTenants, r.ActiveSubscriptions = int64(i+1), 1, 2, 1, 3
	if r.GetDay() == "2026-11-27" {
		r.RecurringRevenue = []*analyticsv1.CurrencyAmount{{Currency: "EUR", Amount: 1234}, {Currency: "JPY", Amount: 500}}
		r.OneTimeRevenue = []*analyticsv1.CurrencyAmount{{Currency: "EUR", Amount: -5}}
		r.PaymentFailures, r.FrozenTenants = 2, 1
	}
}

// signedInWithAnalytics is a signed-in browser on a console whose analytics backend is a.
func signedInWithAnalytics(t *testing.T, a *fakeAnalytics) (*browser, *fake) {
	t.Helper()
	f := newFake()
	c, _ := newConsole(t, f)
	c.Analytics = a
	b := newBrowser(t, c)
	b.signIn()
	return b, f
}

// tableOf is the HTML of the data table of the chart section id on page.
func tableOf(t *testing.T, page, id string) string {
	t.Helper()
	_, section, ok := strings.Cut(page, `<section class="chart-box" id="`+id+`">`)
	if !ok {
		t.Fatalf("no chart %q on the page:\n%s", id, page)
	}
	section, _, _ = strings.Cut(section, "</section>")
	_, table, _ := strings.Cut(section, `<table class="chart-data">`)
	return table
}

func TestTheAnalyticsPageDrawsEachChartWithItsTableAndCSVLinkOverTheChosenRange(t *testing.T) {
	a := &fakeAnalytics{fill: shopFigures}
	b, _ := signedInWithAnalytics(t, a)
	rec := b.get(analyticsPage + "?days=7")
	page := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("analytics = %d:\n%s", rec.Code, page)
	}
	calls := a.received()
	if len(calls) != 1 || calls[0].bearer != "Bearer operator-token-1" {
		t.Fatalf("GetDailySeries calls = %+v, want one with the member's token", calls)
	}
	if req := calls[0].req.(*analyticsv1.GetDailySeriesRequest); req.GetAppId() != testApp || req.GetDays() != 7 || req.GetEnd() != "" {
		t.Errorf("GetDailySeries(%v), want the app's 7 days to today", req)
	}
	charts := []string{"sign-ins", "growth", "subscriptions", "revenue-eur", "revenue-jpy", "failures"}
	if n := strings.Count(page, "<svg "); n != len(charts) {
		t.Errorf("the page draws %d charts, want %d", n, len(charts))
	}
	for _, id := range charts {
		if !strings.Contains(page, `href="`+analyticsPage+"/"+id+`.csv?days=7" download`) {
			t.Errorf("chart %s has no CSV link of the range", id)
		}
		if !strings.Contains(page, `<svg xmlns="http://www.w3.org/2000/svg" class="chart" viewBox="0 0 480 240" width="100%" role="img" aria-labelledby="chart-`+id+`-title chart-`+id+`-desc"`) {
			t.Errorf("chart %s is not drawn as an accessible SVG", id)
		}
	}
	for _, tc := range []struct{ chart, row string }{
		{"sign-ins", `<th scope="row">2026-11-21</th><td>1</td><td>1</td>`},
		{"sign-ins", `<th scope="row">2026-11-27</th><td>7</td><td>1</td>`},
		{"growth", `<th scope="row">2026-11-24</th><td>2</td><td>1</td>`},
		{"subscriptions", `<th scope="row">2026-11-27</th><td>3</td>`},
		{"revenue-eur", `<th scope="row">2026-11-27</th><td>12.34</td><td>-0.05</td>`},
		{"revenue-eur", `<th scope="row">2026-11-26</th><td>0.00</td><td>0.00</td>`},
		{"revenue-jpy", `<th scope="row">2026-11-27</th><td>500</td><td>0</td>`},
		{"failures", `<th scope="row">2026-11-27</th><td>2</td><td>1</td>`},
	} {
		if table := tableOf(t, page, tc.chart); !strings.Contains(table, tc.row) {
			t.Errorf("the %s table lacks %s:\n%s", tc.chart, tc.row, table)
		}
	}
	if !strings.Contains(page, `id="range-7" aria-current="page"`) || strings.Contains(page, `id="range-30" aria-current`) {
		t.Error("the range chooser does not mark 7 days as the current range")
	}
	for _, days := range []string{"7", "30", "90", "365"} {
		if !strings.Contains(page, `href="`+analyticsPage+"?days="+days+`"`) {
			t.Errorf("the range chooser has no link to %s days", days)
		}
	}
	if strings.Contains(page, `id="no-revenue"`) {
		t.Error("a range with revenue says it has none")
	}
}

// The page answers under the console's policy without inline style or script, so the charts must
// carry their looks as SVG attributes.
func TestTheAnalyticsPageNeedsNoInlineStyleOrScript(t *testing.T) {
	b, _ := signedInWithAnalytics(t, &fakeAnalytics{fill: shopFigures})
	rec := b.get(analyticsPage + "?days=365")
	if csp := rec.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "unsafe-inline") {
		t.Errorf("Content-Security-Policy = %q", csp)
	}
	page := rec.Body.String()
	if m := regexp.MustCompile(`(?i)<style|\sstyle=|<script>|\son[a-z]+=`).FindString(page); m != "" {
		t.Errorf("the page carries inline style or script: %q", m)
	}
}

func TestAnAnalyticsLinkWithoutARangeShowsThirtyDays(t *testing.T) {
	a := &fakeAnalytics{}
	b, _ := signedInWithAnalytics(t, a)
	rec := b.get(analyticsPage)
	if rec.Code != http.StatusOK {
		t.Fatalf("analytics = %d:\n%s", rec.Code, rec.Body)
	}
	if calls := a.received(); len(calls) != 1 || calls[0].req.(*analyticsv1.GetDailySeriesRequest).GetDays() != 30 {
		t.Errorf("GetDailySeries calls = %+v, want 30 days", calls)
	}
	page := rec.Body.String()
	if !strings.Contains(page, `id="range-30" aria-current="page"`) {
		t.Error("the range chooser does not mark 30 days")
	}
	if !strings.Contains(page, `id="no-revenue"`) || strings.Contains(page, `id="revenue-`) {
		t.Error("a range without revenue does not say so, or draws a revenue chart")
	}
	if !strings.Contains(page, "UTC days from 2026-10-29 to 2026-11-27.") {
		t.Error("the page does not name its range's days")
	}
}

func TestTheAnalyticsRangeIsOneOfTheOfferedLengths(t *testing.T) {
	for _, tc := range []struct {
		query string
		days  int
		ok    bool
	}{
		{"", 30, true}, {"days=7", 7, true}, {"days=30", 30, true}, {"days=90", 90, true}, {"days=365", 365, true},
		{"days=", 0, false}, {"days=14", 0, false}, {"days=0", 0, false}, {"days=-7", 0, false}, {"days=+7", 0, false},
		{"days=07", 0, false}, {"days=7.0", 0, false}, {"days=seven", 0, false}, {"days=7&days=30", 0, false},
		{"days=99999999999999999999", 0, false},
	} {
		v, _ := url.ParseQuery(tc.query)
		days, err := rangeFrom(v)
		if (err == nil) != tc.ok || days != tc.days {
			t.Errorf("rangeFrom(%q) = %d, %v; want %d, ok %v", tc.query, days, err, tc.days, tc.ok)
		}
		if err != nil && refused(err) != "days" {
			t.Errorf("rangeFrom(%q) refused field %q, want days", tc.query, refused(err))
		}
	}
}

func TestABadAppOrRangeIsRefusedNamingTheFieldWithoutACall(t *testing.T) {
	a := &fakeAnalytics{}
	b, _ := signedInWithAnalytics(t, a)
	for _, tc := range []struct{ target, field string }{
		{analyticsPage + "?days=14", "days"},
		{analyticsPage + "/sign-ins.csv?days=abc", "days"},
		{Path + "/apps/not-an-app/analytics", "app"},
		{Path + "/apps/" + testApp[:35] + "g/analytics/growth.csv", "app"},
	} {
		rec := b.get(tc.target)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "A value is missing or not valid. ("+tc.field+")") {
			t.Errorf("%s = %d, want 400 naming %s:\n%s", tc.target, rec.Code, tc.field, rec.Body)
		}
	}
	if calls := a.received(); len(calls) != 0 {
		t.Errorf("a refused range still asked analytics: %+v", calls)
	}
}

func TestAChartsCSVIsAnAttachmentOfItsDaysInTheMembersLanguage(t *testing.T) {
	b, _ := signedInWithAnalytics(t, &fakeAnalytics{fill: shopFigures})
	for _, tc := range []struct {
		file, query, filename string
		lines                 []string
	}{
		{"sign-ins.csv", "days=7", "sign-ins-2026-11-21-2026-11-27.csv", []string{
			"Day,Sign-ins,Active users", "2026-11-21,1,1", "2026-11-22,2,1", "2026-11-23,3,1", "2026-11-24,4,1",
			"2026-11-25,5,1", "2026-11-26,6,1", "2026-11-27,7,1"}},
		{"failures.csv", "days=7&language=de", "failures-2026-11-21-2026-11-27.csv", []string{
			"Tag,Fehlgeschlagene Zahlungen,Gesperrte Mandanten", "2026-11-21,0,0", "2026-11-22,0,0", "2026-11-23,0,0",
			"2026-11-24,0,0", "2026-11-25,0,0", "2026-11-26,0,0", "2026-11-27,2,1"}},
		{"revenue-eur.csv", "days=7&language=en", "revenue-eur-2026-11-21-2026-11-27.csv", []string{
			"Day,Recurring,One-time", "2026-11-21,0.00,0.00", "2026-11-22,0.00,0.00", "2026-11-23,0.00,0.00",
			"2026-11-24,0.00,0.00", "2026-11-25,0.00,0.00", "2026-11-26,0.00,0.00", "2026-11-27,12.34,-0.05"}},
		// A currency the range did not see is a range of zeros.
		{"revenue-usd.csv", "days=7", "revenue-usd-2026-11-21-2026-11-27.csv", []string{
			"Day,Recurring,One-time", "2026-11-21,0.00,0.00", "2026-11-22,0.00,0.00", "2026-11-23,0.00,0.00",
			"2026-11-24,0.00,0.00", "2026-11-25,0.00,0.00", "2026-11-26,0.00,0.00", "2026-11-27,0.00,0.00"}},
	} {
		rec := b.get(analyticsPage + "/" + tc.file + "?" + tc.query)
		if rec.Code != http.StatusOK {
			t.Fatalf("%s = %d:\n%s", tc.file, rec.Code, rec.Body)
		}
		if ct := rec.Header().Get("Content-Type"); ct != "text/csv; charset=utf-8" {
			t.Errorf("%s: Content-Type %q", tc.file, ct)
		}
		if cd := rec.Header().Get("Content-Disposition"); cd != `attachment; filename=`+tc.filename {
			t.Errorf("%s: Content-Disposition %q, want an attachment named %s", tc.file, cd, tc.filename)
		}
		if want := strings.Join(tc.lines, "\r\n") + "\r\n"; rec.Body.String() != want {
			t.Errorf("%s =\n%q\nwant\n%q", tc.file, rec.Body.String(), want)
		}
	}
}

func TestAFileThePageNeverLinksIsNotFoundWithoutACall(t *testing.T) {
	a := &fakeAnalytics{}
	b, _ := signedInWithAnalytics(t, a)
	for _, file := range []string{"users.csv", "sign-ins", "sign-ins.json", "sign-ins.csv.csv", "revenue-euro.csv",
		"revenue-EUR.csv", "revenue-.csv", "revenue-e1r.csv", "%2e%2e.csv", "Sign-ins.csv"} {
		rec := b.get(analyticsPage + "/" + file + "?days=7")
		if rec.Code != http.StatusNotFound || !strings.Contains(rec.Body.String(), "This does not exist") {
			t.Errorf("%s = %d, want the console's 404 page:\n%s", file, rec.Code, rec.Body)
		}
	}
	if calls := a.received(); len(calls) != 0 {
		t.Errorf("an unknown file still asked analytics: %+v", calls)
	}
}

func TestARefusedSeriesIsAMessageOnThePageNeverABare5xx(t *testing.T) {
	for _, tc := range []struct {
		err     error
		status  int
		message string
	}{
		{status.Error(codes.PermissionDenied, "another project's app"), http.StatusForbidden, "You are not allowed to do this in this project."},
		{status.Error(codes.NotFound, "no such app"), http.StatusNotFound, "This does not exist, or it belongs to another project."},
		{status.Error(codes.Unavailable, "analytics is down"), http.StatusServiceUnavailable, "id=\"problem\""},
		{status.Error(codes.Internal, "boom"), http.StatusInternalServerError, "id=\"problem\""},
	} {
		b, _ := signedInWithAnalytics(t, &fakeAnalytics{err: tc.err})
		for _, target := range []string{analyticsPage + "?days=90", analyticsPage + "/growth.csv?days=90"} {
			rec := b.get(target)
			if rec.Code != tc.status || !strings.Contains(rec.Body.String(), tc.message) || strings.Contains(rec.Body.String(), status.Convert(tc.err).Message()) {
				t.Errorf("%s refused with %v = %d, want %d with %q and not the backend's text:\n%s", target, status.Code(tc.err), rec.Code, tc.status, tc.message, rec.Body)
			}
			if ct := rec.Header().Get("Content-Type"); ct != "text/html; charset=utf-8" {
				t.Errorf("%s refused: Content-Type %q, want the console's page", target, ct)
			}
		}
	}
}

func TestARefusedTokenSendsTheAnalyticsPageToTheSignIn(t *testing.T) {
	b, _ := signedInWithAnalytics(t, &fakeAnalytics{err: status.Error(codes.Unauthenticated, "signed out")})
	rec := b.get(analyticsPage + "/sign-ins.csv")
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != SignInPath+"?notice=ended" {
		t.Errorf("CSV with a refused token = %d %q, want the sign-in page", rec.Code, rec.Header().Get("Location"))
	}
}

func TestTheAnalyticsPagesNeedASession(t *testing.T) {
	a := &fakeAnalytics{}
	c, _ := newConsole(t, newFake())
	c.Analytics = a
	b := newBrowser(t, c)
	for _, target := range []string{analyticsPage, analyticsPage + "/sign-ins.csv?days=7"} {
		if rec := b.get(target); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != SignInPath {
			t.Errorf("%s without a session = %d %q", target, rec.Code, rec.Header().Get("Location"))
		}
	}
	if calls := a.received(); len(calls) != 0 {
		t.Errorf("analytics was asked without a session: %+v", calls)
	}
}

func TestTheAppPageLinksToItsAnalytics(t *testing.T) {
	b, _ := signedInWithAnalytics(t, &fakeAnalytics{})
	rec := b.get(Path + "/apps/" + testApp)
	if !strings.Contains(rec.Body.String(), `<a href="`+analyticsPage+`" id="analytics-link">Analytics</a>`) {
		t.Errorf("the app page does not link to its analytics:\n%s", rec.Body)
	}
}

func TestRevenueIsChartedPerCurrencyWithItsMinorUnit(t *testing.T) {
	rows := []*analyticsv1.DailyRow{
		{RecurringRevenue: []*analyticsv1.CurrencyAmount{{Currency: "USD", Amount: 100}, {Currency: "", Amount: 7}}},
		{OneTimeRevenue: []*analyticsv1.CurrencyAmount{{Currency: "KWD", Amount: 1500}, {Currency: "usd", Amount: 3}, {Currency: "EUR", Amount: 1}}},
	}
	if got, want := currencies(rows), []string{"EUR", "KWD", "USD", "XXX"}; strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("currencies = %v, want %v (a payment without a valid code under XXX)", got, want)
	}
	for _, tc := range []struct {
		currency string
		amount   int64
		shown    string
	}{
		{"USD", 100, "1.00"}, {"KWD", 1500, "1.500"}, {"JPY", 1500, "1500"}, {"XXX", 10, "10"}, {"EUR", -5, "-0.05"},
	} {
		if got := revenueChart(tc.currency).draw(locale.For("en"), &analyticsv1.DailySeries{}).Format(tc.amount); got != tc.shown {
			t.Errorf("%d %s shown as %q, want %q", tc.amount, tc.currency, got, tc.shown)
		}
	}
	if got := amountIn(rows[1].GetOneTimeRevenue(), "XXX"); got != 3 {
		t.Errorf("the amounts of no valid code sum to %d, want 3", got)
	}
	if got := amountIn(rows[0].GetRecurringRevenue(), "XXX"); got != 7 {
		t.Errorf("the amounts without a currency sum to %d, want 7", got)
	}
}

func TestEveryChartsTextsAreInTheCatalog(t *testing.T) {
	for _, c := range append(pageCharts(nil), revenueChart("EUR")) {
		keys := []string{c.title}
		for _, s := range c.series {
			keys = append(keys, s.name)
		}
		for _, k := range keys {
			if !locale.Has(k) {
				t.Errorf("chart %s: %q is not in the catalog", c.name, k)
			}
		}
	}
}
