package app_test

import (
	"context"
	"github.com/berthhq/berth/pkg/fault"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/services/analytics/internal/adapters/memory"
	"github.com/berthhq/berth/services/analytics/internal/app"
)

func TestListSignInsCoversWholeUTCDaysAndAgesEachItem(t *testing.T) {
	store := memory.New()
	p := app.NewProjector(store)
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
	apply(t, p, beforeFrom, firstInstant, lastDay, afterTo)

	now := at("2026-03-10T08:00:00Z")
	svc := app.NewService(store, func() time.Time { return now })
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
	svc := app.NewService(memory.New(), nil)
	_, err := svc.ListSignIns(context.Background(), uuid.NewString(), "2026-03-05", "2026-03-04")
	if f, ok := fault.As(err); !ok || f.Kind() != fault.KindInvalid || f.Field() != "from" {
		t.Fatalf("err = %v, want an Invalid fault on from", err)
	}
}

func TestListSignInsOfAnAppThatIsNotAUUIDIsEmpty(t *testing.T) {
	items, err := app.NewService(memory.New(), nil).ListSignIns(context.Background(), "not-an-app", "2026-03-04", "2026-03-04")
	if err != nil || len(items) != 0 {
		t.Fatalf("ListSignIns = %v, %v; want an empty list", items, err)
	}
}
