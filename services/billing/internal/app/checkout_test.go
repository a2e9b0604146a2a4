package app_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/sealbox"
	"github.com/berthhq/berth/services/billing/internal/adapters/memory"
	"github.com/berthhq/berth/services/billing/internal/app"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// slowTenants holds its first push until released, as a tenant context slow to answer would.
type slowTenants struct {
	app.Tenants
	once    sync.Once
	entered chan struct{}
	release chan struct{}
	mu      sync.Mutex
	pushed  []int64 // revisions, in the order their pushes completed
}

func (s *slowTenants) Apply(_ context.Context, a domain.Account) error {
	first := false
	s.once.Do(func() { first = true })
	if first {
		close(s.entered)
		<-s.release
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pushed = append(s.pushed, a.Revision)
	return nil
}

func TestTheReturnPageHandsOverAChangeTheWebhookSettledFirst(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 10, 14, 0, 0, 0, time.UTC)
	box, err := sealbox.New(make([]byte, sealbox.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	store := memory.New(&events.MemoryOutbox{})
	tenants := &slowTenants{entered: make(chan struct{}), release: make(chan struct{})}
	py := &fakePspy{payments: map[string]app.PspyPayment{}}
	svc, err := app.New(app.Config{Store: store, Tenants: tenants, Pspy: py, Box: box, Clock: func() time.Time { return now },
		NewID: uuid.NewString, PublicURL: "https://berth.example"})
	if err != nil {
		t.Fatal(err)
	}
	appID, tenantID := uuid.NewString(), uuid.NewString()
	conn, err := svc.CreateConnection(ctx, app.NewConnection{AppID: appID, Provider: "pspy", TestSecretKey: "test_aaaaaaaaaaaaaaaaaaaaaaaaa"})
	if err != nil {
		t.Fatal(err)
	}
	returnURL := "https://app.example/paid"
	if _, err := store.UpdateSettings(ctx, appID, func(s *domain.Settings) error { s.PaymentReturnURL = returnURL; return nil }); err != nil {
		t.Fatal(err)
	}
	cs := domain.CheckoutSession{ID: uuid.NewString(), AppID: appID, TenantID: tenantID, ConnectionID: conn.ID, Provider: domain.Pspy,
		Test: true, Mode: domain.ModePayment, Quantity: 2, Method: "card", CustomerID: "cst_1", ProviderSessionID: "tr_first",
		Status: domain.CheckoutOpen, CreatedAt: now, UpdatedAt: now}
	if err := store.CreateCheckout(ctx, cs); err != nil {
		t.Fatal(err)
	}
	py.payments["tr_first"] = app.PspyPayment{ID: "tr_first", Mode: "test", Status: "paid", SequenceType: "oneoff", CustomerID: "cst_1",
		Metadata: map[string]string{"berthCheckoutSessionId": cs.ID}, CreatedAt: now, PaidAt: now}

	// The webhook settles the session first; its push to tenant is slow.
	webhook := make(chan error, 1)
	go func() {
		_, err := svc.ApplyPspyPayment(ctx, conn.ID, "tr_first")
		webhook <- err
	}()
	<-tenants.entered
	// The payer comes back meanwhile: the return page finds the session completed, and the app
	// must read the change in route 5 once the payer lands.
	target, status, err := svc.ReturnCheckout(ctx, cs.ID, "")
	if err != nil || status != domain.CheckoutCompleted || target != returnURL+"?session_id="+cs.ID+"&status=completed" {
		t.Fatalf("return page: %q %q %v", target, status, err)
	}
	tenants.mu.Lock()
	pushed := slices.Clone(tenants.pushed)
	tenants.mu.Unlock()
	if !slices.Equal(pushed, []int64{1}) {
		t.Fatalf("revisions pushed to tenant before the return page answered: %v, want [1]", pushed)
	}
	close(tenants.release)
	if err := <-webhook; err != nil {
		t.Fatal(err)
	}
	if a, err := store.Account(ctx, appID, tenantID); err != nil || a.Revision != 1 || a.State.PaidUnits != 2 {
		t.Fatalf("account %+v, %v", a, err)
	}
}
