package domain

import (
	"errors"
	"testing"
	"time"

	"github.com/berthhq/berth/pkg/fault"
)

func TestUpgradeChargeIsTheDifferenceForTheTimeLeft(t *testing.T) {
	start := time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)
	end := start.AddDate(0, 0, 30)
	basic, pro := Plan{UnitAmount: 1000, Quantity: 1}, Plan{UnitAmount: 2500, Quantity: 1}
	cases := []struct {
		name      string
		old, next Plan
		now       time.Time
		want      int64
	}{
		{"at the period's start the whole difference", basic, pro, start, 1500},
		{"half way half the difference", basic, pro, start.AddDate(0, 0, 15), 750},
		{"a third left rounds to the nearest cent", basic, Plan{UnitAmount: 1001, Quantity: 1}, start.AddDate(0, 0, 20), 0},
		{"more seats cost their share", basic, Plan{UnitAmount: 1000, Quantity: 3}, start.AddDate(0, 0, 10), 1333},
		{"a downgrade costs nothing now", pro, basic, start, 0},
		{"the same plan costs nothing", pro, pro, start, 0},
		{"after the period's end nothing is left to charge", basic, pro, end.Add(time.Hour), 0},
		{"a clock before the period's start charges the whole difference only", basic, pro, start.Add(-time.Hour), 1500},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := UpgradeCharge(tc.old, tc.next, start, end, tc.now); got != tc.want {
				t.Fatalf("UpgradeCharge = %d, want %d", got, tc.want)
			}
		})
	}
}

func TestPlanUpgradesOnlyWhenAPeriodCostsMore(t *testing.T) {
	cases := []struct {
		old, next Plan
		want      bool
	}{
		{Plan{1000, 1}, Plan{2000, 1}, true},
		{Plan{1000, 2}, Plan{1000, 3}, true},
		{Plan{2000, 1}, Plan{1000, 2}, false},
		{Plan{2000, 1}, Plan{1000, 1}, false},
	}
	for _, tc := range cases {
		if got := tc.old.Upgrades(tc.next); got != tc.want {
			t.Errorf("%+v.Upgrades(%+v) = %t, want %t", tc.old, tc.next, got, tc.want)
		}
	}
}

func TestRoute13And19BodiesAreValidated(t *testing.T) {
	ok := InvoiceRequest{Price: "price_1", Mode: ModePayment, Quantity: 1}
	cases := []struct {
		name  string
		err   error
		field string
	}{
		{"a valid invoice", ok.Validate(), ""},
		{"setup is no invoice mode", InvoiceRequest{Price: "price_1", Mode: ModeSetup, Quantity: 1}.Validate(), "mode"},
		{"a price is required", InvoiceRequest{Mode: ModePayment, Quantity: 1}.Validate(), "price"},
		{"quantity zero", InvoiceRequest{Price: "price_1", Mode: ModePayment}.Validate(), "quantity"},
		{"a tax rate id has the provider's shape", InvoiceRequest{Price: "price_1", TaxRate: "txr 1", Mode: ModePayment, Quantity: 1}.Validate(), "taxRate"},
		{"a footer is bounded", InvoiceRequest{Price: "price_1", Mode: ModePayment, Quantity: 1, Footer: string(make([]byte, 5001))}.Validate(), "footer"},
		{"a valid plan", PlanRequest{Price: "price_1", Quantity: 2}.Validate(), ""},
		{"a plan quantity above the limit", PlanRequest{Price: "price_1", Quantity: 10_001}.Validate(), "quantity"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := fieldOf(tc.err); got != tc.field {
				t.Fatalf("failed field = %q (%v), want %q", got, tc.err, tc.field)
			}
		})
	}
}

// fieldOf is the field an Invalid fault names, "" for no error.
func fieldOf(err error) string {
	var f *fault.Fault
	if errors.As(err, &f) {
		return f.Field()
	}
	if err != nil {
		return "unexpected: " + err.Error()
	}
	return ""
}
