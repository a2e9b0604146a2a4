package pspx

import (
	"strings"
	"testing"
	"time"
)

func TestParamsDecodeTheProvidersNestedKeys(t *testing.T) {
	p, err := parseParams("line_items[0][price]=price_1&line_items[0][tax_rates][0]=txr_1&line_items[1][price]=price_2" +
		"&expand[]=subscription&expand[]=payment_intent&metadata[tenantId]=t1&metadata[appId]=&invoice_settings[default_payment_method]=")
	if err != nil {
		t.Fatal(err)
	}
	idx, _ := p.indices("line_items")
	rates, _ := p.list("line_items", "0", "tax_rates")
	expand, _ := p.list("expand")
	set, clearAll, ok := p.metadata("metadata")
	pm, hasPM := p.str("invoice_settings", "default_payment_method")
	if strings.Join(idx, ",") != "0,1" || p.text("line_items", "0", "price") != "price_1" || p.text("line_items", "1", "price") != "price_2" ||
		strings.Join(rates, ",") != "txr_1" || strings.Join(expand, ",") != "subscription,payment_intent" ||
		!ok || clearAll || set["tenantId"] != "t1" || set["appId"] != "" || len(set) != 2 || pm != "" || !hasPM {
		t.Fatalf("decoded %v %v %v %v %v %v", idx, rates, expand, set, pm, hasPM)
	}
	if err := p.done(); err != nil {
		t.Fatalf("everything was read, yet: %v", err)
	}
}

func TestParamsNobodyReadAreReportedUnknownInSortedOrder(t *testing.T) {
	p, _ := parseParams("b[y]=1&a=1&b[x]=2")
	p.text("a")
	if err := p.done(); err == nil || err.Param != "b[x]" || err.Code != "parameter_unknown" {
		t.Fatalf("got %+v", err)
	}
}

func TestArraysAreOrderedNumericallyAndRejectNonIndexKeys(t *testing.T) {
	p, _ := parseParams("a[10]=ten&a[2]=two&b[x]=1")
	if got, _ := p.list("a"); strings.Join(got, ",") != "two,ten" {
		t.Fatalf("order %v", got)
	}
	p.indices("b")
	if err := p.done(); err == nil || err.Param != "b" {
		t.Fatalf("hash accepted as an array: %+v", err)
	}
}

func TestDecimalsHaveAtMostFourFractionalDigits(t *testing.T) {
	cases := map[string]int64{"19": 190000, "7.25": 72500, "0.0001": 1, "100": 1000000}
	for in, want := range cases {
		p, _ := parseParams("x=" + in)
		if got, ok := p.decimal("x"); !ok || got != want || p.err != nil {
			t.Errorf("%s: %d %v %v, want %d", in, got, ok, p.err, want)
		}
	}
	for _, in := range []string{"1.23456", "-1", "+1", "abc", ".5", "NaN", "1e3"} {
		p, _ := parseParams("x=" + in)
		if _, ok := p.decimal("x"); ok || p.err == nil {
			t.Errorf("%s accepted", in)
		}
	}
}

// FuzzParseParams: any body decodes or is refused with an error object, never a panic, and
// reading every parameter then finishing never panics either.
func FuzzParseParams(f *testing.F) {
	for _, s := range []string{"a=1", "a[b][0]=1&a[b][]=2", "a[]=1&a[]=2", "a[=1", "a]=1", "[a]=1", "a[b]c=1", "a=%zz",
		"a[0][1][2][3][4][5][6]=x", "metadata=&metadata[k]=v", "a[]b=1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		p, err := parseParams(body)
		if err != nil {
			if err.Type == "" || err.Message == "" {
				t.Fatalf("empty error for %q", body)
			}
			return
		}
		var walk func(path []string, n *pnode)
		walk = func(path []string, n *pnode) {
			if n.leaf {
				p.str(path...)
				p.integer(path...)
				p.decimal(path...)
				return
			}
			p.indices(path...)
			p.metadata(path...)
			for k, kid := range n.kids {
				walk(append(append([]string{}, path...), k), kid)
			}
		}
		for k, kid := range p.root.kids {
			walk([]string{k}, kid)
		}
		_ = p.done()
		_ = canonical(body)
	})
}

func TestPeriodsKeepTheAnchorDayClampedToShortMonths(t *testing.T) {
	jan31 := time.Date(2027, 1, 31, 9, 30, 0, 0, time.UTC)
	feb29 := time.Date(2028, 2, 29, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		anchor   time.Time
		interval string
		count    int64
		n        int
		want     time.Time
	}{
		{jan31, "month", 1, 1, time.Date(2027, 2, 28, 9, 30, 0, 0, time.UTC)},
		{jan31, "month", 1, 2, time.Date(2027, 3, 31, 9, 30, 0, 0, time.UTC)},
		{jan31, "month", 3, 1, time.Date(2027, 4, 30, 9, 30, 0, 0, time.UTC)},
		{feb29, "year", 1, 1, time.Date(2029, 2, 28, 0, 0, 0, 0, time.UTC)},
		{feb29, "year", 1, 4, time.Date(2032, 2, 29, 0, 0, 0, 0, time.UTC)},
		{jan31, "week", 2, 1, time.Date(2027, 2, 14, 9, 30, 0, 0, time.UTC)},
		{jan31, "day", 1, 3, time.Date(2027, 2, 3, 9, 30, 0, 0, time.UTC)},
	}
	for _, c := range cases {
		if got := periodEnd(c.anchor, c.interval, c.count, c.n); !got.Equal(c.want) {
			t.Errorf("%v + %d×%d %s = %v, want %v", c.anchor, c.n, c.count, c.interval, got, c.want)
		}
	}
}

func TestProrationRoundsHalfUpWithoutOverflow(t *testing.T) {
	day := 24 * time.Hour
	cases := []struct {
		amount      int64
		part, whole time.Duration
		want        int64
	}{
		{1000, 15 * day, 30 * day, 500},
		{1, day, 2 * day, 1},
		{1, day, 3 * day, 0},
		{maxUnitAmount * maxQuantity, 1000 * day, 1095 * day, 913_242_000_000},
		{1000, 0, 30 * day, 0},
	}
	for _, c := range cases {
		if got := prorate(c.amount, c.part, c.whole); got != c.want {
			t.Errorf("prorate(%d, %v, %v) = %d, want %d", c.amount, c.part, c.whole, got, c.want)
		}
	}
}
