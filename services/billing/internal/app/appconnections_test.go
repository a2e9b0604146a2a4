package app_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/sealbox"
	"github.com/berthhq/berth/services/billing/internal/adapters/memory"
	"github.com/berthhq/berth/services/billing/internal/app"
)

func TestAnAppsConnectionIDsAreItsOwnOnly(t *testing.T) {
	ctx := context.Background()
	box, err := sealbox.New(make([]byte, sealbox.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := app.New(app.Config{Store: memory.New(&events.MemoryOutbox{}), Tenants: fakeTenants{}, Pspy: &fakePspy{}, Box: box,
		Clock: func() time.Time { return time.Date(2026, 3, 10, 14, 0, 0, 0, time.UTC) }, NewID: uuid.NewString, PublicURL: "https://berth.example"})
	if err != nil {
		t.Fatal(err)
	}
	appID, otherApp, bare := uuid.NewString(), uuid.NewString(), uuid.NewString()
	var want []string
	for _, c := range []app.NewConnection{
		{AppID: appID, Provider: "pspx", TestSecretKey: "sk_test_aaaaaaaaaaaaaaaaaaaaaaaa"},
		{AppID: appID, Provider: "pspy", TestSecretKey: "test_aaaaaaaaaaaaaaaaaaaaaaaaa"},
		{AppID: otherApp, Provider: "pspy", TestSecretKey: "test_bbbbbbbbbbbbbbbbbbbbbbbbb"},
	} {
		conn, err := svc.CreateConnection(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		if c.AppID == appID {
			want = append(want, conn.ID)
		}
	}
	got, err := svc.AppConnectionIDs(ctx, appID)
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("the app's connections = %v, %v; want %v", got, err, want)
	}
	if got, err := svc.AppConnectionIDs(ctx, bare); err != nil || len(got) != 0 {
		t.Errorf("an app without connections = %v, %v; want none", got, err)
	}
	if _, err := svc.AppConnectionIDs(ctx, "not-an-app"); !fault.Is(err, fault.KindInvalid) {
		t.Errorf("an app id that is no UUID = %v, want invalid", err)
	}
}
