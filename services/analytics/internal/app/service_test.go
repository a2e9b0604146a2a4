package app_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/analytics/internal/adapters/memory"
	"github.com/berthhq/berth/services/analytics/internal/app"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
)

func TestNewRequiresAStoreAndRebuildAnEventLog(t *testing.T) {
	if _, err := app.New(app.Config{}); err == nil {
		t.Error("no store: want error")
	}
	if _, err := service(t, app.Config{Store: memory.New()}).Rebuild(context.Background()); err == nil {
		t.Error("a rebuild without an event log: want error")
	}
}

func TestListSignInsCoversWholeUTCDaysAndAgesEachItem(t *testing.T) {
	store := memory.New()
	var now time.Time
	svc := service(t, app.Config{Store: store, Clock: func() time.Time { return now }})
	appID, userID := uuid.NewString(), uuid.NewString()
	at := func(s string) time.Time {
		v, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	beforeFrom := signedIn(t, appID, userID, "", at("2026-03-03T23:59:59Z"), "a")
	firstInstant := signedIn(t, appID, userID, "", at("2026-03-04T00:00:00Z"), "b")
	lastDay := signedIn(t, appID, userID, "", at("2026-03-09T23:59:59Z"), "c")
	afterTo := signedIn(t, appID, userID, "", at("2026-03-10T00:00:00Z"), "d")
	apply(t, svc, beforeFrom, firstInstant, lastDay, afterTo)

	now = at("2026-03-10T08:00:00Z")
	items, err := svc.ListSignIns(context.Background(), appID, "2026-03-04", "2026-03-09")
	if err != nil {
		t.Fatal(err)
	}
	type seen struct {
		id   string
		days int
	}
	var got []seen
	for _, it := range items {
		got = append(got, seen{it.SignIn.ID, it.DaysSince})
	}
	want := []seen{{lastDay.ID, 1}, {firstInstant.ID, 6}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("listed %+v, want %+v", got, want)
	}

	// The age follows the injected clock, not the wall clock.
	now = at("2026-04-09T00:00:00Z")
	items, err = svc.ListSignIns(context.Background(), appID, "2026-03-09", "2026-03-09")
	if err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].DaysSince != 31 {
		t.Fatalf("listed %+v, want the March 9 sign-in aged 31 days", items)
	}
}

func TestListSignInsRefusesAnInvalidRange(t *testing.T) {
	svc := service(t, app.Config{Store: memory.New()})
	_, err := svc.ListSignIns(context.Background(), uuid.NewString(), "2026-03-05", "2026-03-04")
	if f, ok := fault.As(err); !ok || f.Kind() != fault.KindInvalid || f.Field() != "from" {
		t.Fatalf("err = %v, want an Invalid fault on from", err)
	}
}

func TestListSignInsOfAnAppThatIsNotAUUIDIsEmpty(t *testing.T) {
	items, err := service(t, app.Config{Store: memory.New()}).ListSignIns(context.Background(), "not-an-app", "2026-03-04", "2026-03-04")
	if err != nil || len(items) != 0 {
		t.Fatalf("ListSignIns = %v, %v; want an empty list", items, err)
	}
}

// The streamed lists share the range rule and read whole UTC days.
func TestStreamedListsValidateTheRangeFirstAndCoverWholeUTCDays(t *testing.T) {
	appID, tenantID := uuid.NewString(), uuid.NewString()
	store := memory.New()
	lastInstant := time.Date(2026, 3, 4, 23, 59, 59, 999999000, time.UTC)
	apply(t, service(t, app.Config{Store: store}), money(t, billingv1.EventPaymentOneTime, appID, tenantID, 1, lastInstant, &billingv1.MoneyChanged{Units: 1}))
	svc := service(t, app.Config{Store: store})
	count := func(from, to string) (int, error) {
		n, seen := -1, 0
		err := svc.ListOneTimePayments(context.Background(), appID, from, to, app.Visitor[app.OneTimePaymentRecord]{
			Count: func(c int) error { n = c; return nil },
			Each:  func(app.OneTimePaymentRecord) error { seen++; return nil },
		})
		if err == nil && n != seen {
			t.Fatalf("told %d, visited %d", n, seen)
		}
		return n, err
	}
	tests := []struct {
		name, from, to string
		want           int
		badField       string
	}{
		{"the payment's day", "2026-03-04", "2026-03-04", 1, ""},
		{"ending on the payment's day", "2026-02-01", "2026-03-04", 1, ""},
		{"the next day", "2026-03-05", "2026-03-05", 0, ""},
		{"from after to", "2026-03-05", "2026-03-04", 0, "from"},
		{"a 367-day span", "2025-03-03", "2026-03-04", 0, "to"},
		{"no to", "2026-03-04", "", 0, "to"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n, err := count(tc.from, tc.to)
			if tc.badField != "" {
				if f, ok := fault.As(err); !ok || f.Kind() != fault.KindInvalid || f.Field() != tc.badField || n != -1 {
					t.Fatalf("err = %v (count %d), want an Invalid fault on %s before anything is read", err, n, tc.badField)
				}
				return
			}
			if err != nil || n != tc.want {
				t.Fatalf("count %d, err %v; want %d", n, err, tc.want)
			}
		})
	}
	if n, err := func() (int, error) {
		n := -1
		err := svc.ListTenants(context.Background(), "not-an-app", "2026-03-04", "2026-03-04", app.Visitor[app.TenantRecord]{
			Count: func(c int) error { n = c; return nil }, Each: func(app.TenantRecord) error { return nil },
		})
		return n, err
	}(); err != nil || n != 0 {
		t.Fatalf("an app that is not a UUID: count %d, err %v; want an empty list", n, err)
	}
}
