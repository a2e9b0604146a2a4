package app

import (
	"slices"
	"testing"
	"time"

	"github.com/berthhq/berth/services/billing/internal/domain"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"
)

func TestOnlyATenantsFirstPaymentEmitsTheFirstPaidEvent(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	a := domain.Account{AppID: "5b1d0f3e-8a55-4c6e-9d1e-2f7a1c3b9e40", TenantID: "0c4f6a2d-1b3e-4f5a-8c7d-9e0f1a2b3c4d"}
	setUp := func(s *domain.State) { s.PaymentMethodSetUp("cus_1", "cs_1", "pm_1") }
	bought := func(s *domain.State) { s.UnitsBought("cus_1", "cs_2", "card", 1, now, true) }
	for i, step := range []struct {
		reason string
		apply  func(*domain.State)
		want   []eventsv1.Type
	}{
		{"checkout.setup", setUp, []eventsv1.Type{billingv1.EventTenantChanged}},
		{"checkout.payment", bought, []eventsv1.Type{billingv1.EventTenantChanged, billingv1.EventPaymentOneTime, billingv1.EventTenantFirstPaid}},
		{"checkout.payment", bought, []eventsv1.Type{billingv1.EventTenantChanged, billingv1.EventPaymentOneTime}},
	} {
		evs, err := changeState(&a, now, step.reason, domain.Payment{}, step.apply)
		if err != nil {
			t.Fatal(err)
		}
		var got []eventsv1.Type
		for _, ev := range evs {
			got = append(got, ev.Type)
		}
		if !slices.Equal(got, step.want) {
			t.Fatalf("step %d (%s): events %v, want %v", i, step.reason, got, step.want)
		}
		if len(evs) == 3 {
			var p billingv1.TenantFirstPaid
			if err := evs[2].Decode(&p); err != nil || p.GetTenantId() != a.TenantID || p.GetAppId() != a.AppID ||
				p.GetReason() != step.reason || p.GetAt() != "2026-03-01T12:00:00Z" {
				t.Fatalf("first paid = %+v, %v", &p, err)
			}
		}
	}
}

func TestAMoneyEventCarriesTheTenantsMoneyStateAfterTheChange(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	a := domain.Account{AppID: "5b1d0f3e-8a55-4c6e-9d1e-2f7a1c3b9e40", TenantID: "0c4f6a2d-1b3e-4f5a-8c7d-9e0f1a2b3c4d", Revision: 4}
	a.State.PaidUnits, a.State.PspxPriceID = 2, "price_monthly"
	pay := domain.Payment{ID: "cs_2", UserID: "4e1b2c3d-0000-4000-8000-000000000001", PriceID: "price_units", Amount: 2970, Currency: "eur"}
	evs, err := changeState(&a, now, "checkout.payment", pay, func(s *domain.State) { s.UnitsBought("cus_1", "cs_2", "card", 3, now.AddDate(1, 0, 0), true) })
	if err != nil {
		t.Fatal(err)
	}
	var m billingv1.MoneyChanged
	if len(evs) < 2 || evs[1].Type != billingv1.EventPaymentOneTime || evs[1].Decode(&m) != nil {
		t.Fatalf("events %v", evs)
	}
	if m.GetUnits() != 3 || m.GetUnitsBefore() != 2 || !m.GetTest() || m.GetRevision() != 5 || m.GetCustomerId() != "cus_1" ||
		m.GetCheckoutSessionId() != "cs_2" || m.GetReason() != "checkout.payment" || m.GetAt() != "2026-03-01T12:00:00Z" || m.GetTenantId() != a.TenantID {
		t.Fatalf("money event %+v", &m)
	}
	// The payment it records: the payer, the checkout, the units' price (not the subscription's)
	// and what the provider collected.
	if m.GetUserId() != pay.UserID || m.GetPaymentId() != "cs_2" || m.GetPriceId() != "price_units" || m.GetAmount() != 2970 || m.GetCurrency() != "eur" {
		t.Fatalf("one-time payment names user %q payment %q price %q amount %d %q", m.GetUserId(), m.GetPaymentId(), m.GetPriceId(), m.GetAmount(), m.GetCurrency())
	}
}

func TestARenewedEventNamesTheRenewalsPaymentAndSubscription(t *testing.T) {
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	a := domain.Account{AppID: "5b1d0f3e-8a55-4c6e-9d1e-2f7a1c3b9e40", TenantID: "0c4f6a2d-1b3e-4f5a-8c7d-9e0f1a2b3c4d"}
	// The subscription ended before its renewal was delivered.
	evs, err := changeState(&a, now, "subscription.renewed", domain.Payment{Amount: 990, Currency: "usd"}, func(s *domain.State) {
		s.Renewed(domain.Renewal{SubscriptionID: "sub_1", InvoiceID: "in_7"}, now.AddDate(0, 1, 0))
	})
	if err != nil {
		t.Fatal(err)
	}
	var m billingv1.MoneyChanged
	if len(evs) < 2 || evs[1].Type != billingv1.EventSubscriptionRenewed || evs[1].Decode(&m) != nil {
		t.Fatalf("events %v", evs)
	}
	if m.GetPaymentId() != "in_7" || m.GetSubscriptionId() != "sub_1" || m.GetPaidUntil() != "2026-04-01T12:00:00Z" || m.GetAmount() != 990 || m.GetCurrency() != "usd" {
		t.Fatalf("renewed %+v", &m)
	}
}
