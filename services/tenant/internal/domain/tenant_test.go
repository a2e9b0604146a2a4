package domain_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/berthhq/berth/services/tenant/internal/domain"
)

func TestMarkDeleted(t *testing.T) {
	created := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	now := created.Add(time.Hour)
	cases := []struct {
		name        string
		before      domain.Tenant
		wantChanged []string
		wantCancel  bool
	}{
		{name: "without a subscription only the tenant is flagged",
			before:      domain.Tenant{},
			wantChanged: []string{"deleted"}},
		{name: "a subscription is set to cancel at period end",
			before:      domain.Tenant{Billing: domain.Billing{PspxSubscriptionID: "sub_1"}},
			wantChanged: []string{"deleted", "pspxSubscriptionCancelAtPeriodEnd"}, wantCancel: true},
		{name: "a subscription already cancelling stays as it is",
			before:      domain.Tenant{Billing: domain.Billing{PspxSubscriptionID: "sub_1", PspxSubscriptionCancelAtPeriodEnd: true}},
			wantChanged: []string{"deleted"}, wantCancel: true},
		{name: "a deleted tenant is left alone",
			before:     domain.Tenant{Deleted: true, Billing: domain.Billing{PspxSubscriptionID: "sub_1", PspxSubscriptionCancelAtPeriodEnd: true}},
			wantCancel: true},
		{name: "a deleted tenant whose subscription came later still cancels it",
			before:      domain.Tenant{Deleted: true, Billing: domain.Billing{PspxSubscriptionID: "sub_1"}},
			wantChanged: []string{"pspxSubscriptionCancelAtPeriodEnd"}, wantCancel: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tn := tc.before
			tn.CreatedAt, tn.UpdatedAt = created, created
			changed := tn.MarkDeleted(now)
			if !reflect.DeepEqual(changed, tc.wantChanged) {
				t.Fatalf("changed = %v, want %v", changed, tc.wantChanged)
			}
			if !tn.Deleted || tn.Billing.PspxSubscriptionCancelAtPeriodEnd != tc.wantCancel {
				t.Fatalf("deleted = %v, cancelAtPeriodEnd = %v", tn.Deleted, tn.Billing.PspxSubscriptionCancelAtPeriodEnd)
			}
			wantUpdated := created
			if len(tc.wantChanged) > 0 {
				wantUpdated = now
			}
			if !tn.UpdatedAt.Equal(wantUpdated) {
				t.Fatalf("updatedAt = %v, want %v", tn.UpdatedAt, wantUpdated)
			}
		})
	}
}
