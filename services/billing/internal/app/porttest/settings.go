package porttest

import (
	"errors"
	"testing"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/billing/internal/app"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// settingsCases are the Settings port's cases.
var settingsCases = []testCase{
	{"SettingsStartAtTheDefaultsAndPersist", settingsPersist},
}

func settingsPersist(t *testing.T, s app.Store, _ events.OutboxSource) {
	appID := uuid.NewString()
	if got := must(s.Settings(ctx, appID)); got != domain.DefaultSettings(appID) {
		t.Fatalf("defaults: %+v", got)
	}
	want := domain.Settings{AppID: appID, ConnectionID: "c", PaymentReturnURL: "https://app.example/paid",
		FailedPaymentsToFreeze: 5, OneTimePaymentValidDays: 30, ReferralPromotionID: "p"}
	must(s.UpdateSettings(ctx, appID, func(st *domain.Settings) error { *st = want; return nil }))
	if got := must(s.Settings(ctx, appID)); got != want {
		t.Fatalf("read back %+v, want %+v", got, want)
	}
	if _, err := s.UpdateSettings(ctx, appID, func(st *domain.Settings) error { st.ConnectionID = "x"; return errors.New("no") }); err == nil {
		t.Fatal("a failing update succeeded")
	}
	if got := must(s.Settings(ctx, appID)); got != want {
		t.Fatalf("a failed update changed settings: %+v", got)
	}
}
