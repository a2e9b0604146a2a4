package postgres_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/pgxx"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	"github.com/berthhq/berth/services/outbound/internal/adapters/postgres"
	"github.com/berthhq/berth/services/outbound/internal/app"
	"github.com/berthhq/berth/services/outbound/internal/app/porttest"
	"github.com/berthhq/berth/services/outbound/internal/domain"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestStoreConformsToThePorts(t *testing.T) {
	porttest.Run(t, func(t *testing.T) (app.Store, events.OutboxSource) {
		pool := pgtest.New(t, "outbound", postgres.Migrate)
		return postgres.New(pool), events.NewPGOutbox(pool)
	})
}

// Without foreign keys, the store itself keeps deliveries from outliving their endpoint: a delete
// that comes while a consumer's transaction records deliveries for the endpoint waits for it, and
// then takes those deliveries and their attempts too.
func TestADeleteDuringAConsumersTransactionLeavesNoDeliveryOrAttemptBehind(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.New(t, "outbound-delete", postgres.Migrate)
	store := postgres.New(pool)
	now := time.Now().UTC().Truncate(time.Microsecond)
	e := domain.Endpoint{ID: uuid.NewString(), AppID: uuid.NewString(), URL: "https://example.com/hooks", Events: []string{"*"},
		Secret: []byte("sealed"), CreatedAt: now, UpdatedAt: now}
	if err := store.CreateEndpoint(ctx, e); err != nil {
		t.Fatal(err)
	}
	attempted := domain.Delivery{ID: uuid.NewString(), AppID: e.AppID, EndpointID: e.ID, Type: "user.created", Body: []byte(`{}`),
		Status: domain.StatusPending, NextAttemptAt: now, CreatedAt: now}
	if err := store.AddDeliveries(ctx, attempted); err != nil {
		t.Fatal(err)
	}
	attempted.Status, attempted.Attempts = domain.StatusFailed, 1
	if err := store.RecordAttempts(ctx, app.Recorded{Delivery: attempted, Attempt: domain.Attempt{At: now, Status: 500}}); err != nil {
		t.Fatal(err)
	}

	deleted := make(chan error, 1)
	err := pgxx.InTx(ctx, pool, func(ctx context.Context, _ pgx.Tx) error {
		eps, err := store.EndpointsToDeliver(ctx, e.AppID)
		if err != nil || len(eps) != 1 {
			return fmt.Errorf("endpoints to deliver: %v, %v", eps, err)
		}
		go func() { deleted <- store.DeleteEndpoint(context.Background(), e.AppID, e.ID) }()
		select {
		case err := <-deleted:
			return fmt.Errorf("the delete did not wait for the consumer's transaction: %v", err)
		case <-time.After(200 * time.Millisecond):
		}
		return store.AddDeliveries(ctx, domain.Delivery{ID: uuid.NewString(), AppID: e.AppID, EndpointID: e.ID, Type: "user.created",
			Body: []byte(`{}`), Status: domain.StatusPending, NextAttemptAt: now, CreatedAt: now})
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := <-deleted; err != nil {
		t.Fatalf("delete: %v", err)
	}
	var deliveries, attempts int
	if err := pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM deliveries), (SELECT count(*) FROM delivery_attempts)`).Scan(&deliveries, &attempts); err != nil {
		t.Fatal(err)
	}
	if deliveries != 0 || attempts != 0 {
		t.Errorf("after the delete %d deliveries and %d attempts are left, want none", deliveries, attempts)
	}
}
