package domain

import (
	"slices"
	"testing"
	"time"
)

func TestApplyBillingTakesOnlyNewerRevisions(t *testing.T) {
	now := time.Date(2026, 11, 22, 10, 0, 0, 0, time.UTC)
	paid := Billing{PaidUnits: "5", FreeUnits: "0", Mode: "payment"}
	cases := []struct {
		name        string
		stored      int64
		rev         int64
		validThru   string
		wantChanged []string
		wantRev     int64
		wantUnits   string
		wantThru    string
	}{
		{"newer revision replaces the state", 1, 2, "", []string{"billing"}, 2, "5", "2027-01-01"},
		{"newer revision with a one-time validity sets it", 1, 3, "2027-11-22", []string{"billing", "pspxOneTimePaymentValidThru"}, 3, "5", "2027-11-22"},
		{"the same revision again changes nothing", 2, 2, "2027-11-22", nil, 2, "0", "2027-01-01"},
		{"an older revision changes nothing", 5, 4, "", nil, 5, "0", "2027-01-01"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tn := Tenant{BillingRevision: c.stored, Billing: Billing{PaidUnits: "0"}, PspxOneTimePaymentValidThru: "2027-01-01"}
			changed := tn.ApplyBilling(c.rev, paid, c.validThru, now)
			if !slices.Equal(changed, c.wantChanged) || tn.BillingRevision != c.wantRev ||
				tn.Billing.PaidUnits != c.wantUnits || tn.PspxOneTimePaymentValidThru != c.wantThru {
				t.Fatalf("changed %v rev %d units %q thru %q", changed, tn.BillingRevision, tn.Billing.PaidUnits, tn.PspxOneTimePaymentValidThru)
			}
		})
	}
}
