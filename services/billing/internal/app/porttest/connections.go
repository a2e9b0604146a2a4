package porttest

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/billing/internal/app"
	"github.com/berthhq/berth/services/billing/internal/domain"
)

// connectionCases are the Connections port's cases.
var connectionCases = []testCase{
	{"ConnectionsRoundTripEveryField", connectionsRoundTrip},
	{"FailedConnectionUpdateStoresNothing", failedConnectionUpdate},
}

// connectionFor stores a connection of a new app, which customers and sessions refer to.
func connectionFor(t *testing.T, s app.Store) domain.Connection {
	t.Helper()
	c := domain.Connection{ID: uuid.NewString(), AppID: uuid.NewString(), Provider: domain.Pspx, TestKey: []byte{1}, CreatedAt: instant, UpdatedAt: instant}
	if err := s.CreateConnection(ctx, c); err != nil {
		t.Fatal(err)
	}
	return c
}

func connectionsRoundTrip(t *testing.T, s app.Store, _ events.OutboxSource) {
	c := domain.Connection{
		ID: uuid.NewString(), AppID: uuid.NewString(), Provider: domain.Pspx,
		TestKey: []byte{1, 2, 3}, LiveKey: []byte{4, 5},
		WebhookSecrets: []domain.WebhookSecret{{ID: uuid.NewString(), Test: true, Sealed: []byte{9}, CreatedAt: instant}},
		CreatedAt:      instant, UpdatedAt: instant,
	}
	if err := s.CreateConnection(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got := must(s.Connection(ctx, c.ID)); !reflect.DeepEqual(got, c) {
		t.Fatalf("read back:\n got %+v\nwant %+v", got, c)
	}
	list := must(s.Connections(ctx, c.AppID))
	if len(list) != 1 || !reflect.DeepEqual(list[0], c) {
		t.Fatalf("list: %+v", list)
	}
	if others := must(s.Connections(ctx, uuid.NewString())); len(others) != 0 {
		t.Fatalf("another app sees %d connections", len(others))
	}
	if _, err := s.Connection(ctx, uuid.NewString()); !errors.Is(err, domain.ErrConnectionNotFound) {
		t.Fatalf("unknown connection: %v", err)
	}
	updated := must(s.UpdateConnection(ctx, c.ID, func(c *domain.Connection) error {
		c.LiveKey, c.WebhookSecrets, c.UpdatedAt = []byte{7}, nil, instant.Add(time.Hour)
		return nil
	}))
	if got := must(s.Connection(ctx, c.ID)); !reflect.DeepEqual(got, updated) || len(got.WebhookSecrets) != 0 {
		t.Fatalf("after update:\n got %+v\nwant %+v", got, updated)
	}
}

func failedConnectionUpdate(t *testing.T, s app.Store, _ events.OutboxSource) {
	c := domain.Connection{ID: uuid.NewString(), AppID: uuid.NewString(), Provider: domain.Pspy, TestKey: []byte{1}, CreatedAt: instant, UpdatedAt: instant}
	if err := s.CreateConnection(ctx, c); err != nil {
		t.Fatal(err)
	}
	boom := errors.New("boom")
	if _, err := s.UpdateConnection(ctx, c.ID, func(c *domain.Connection) error { c.TestKey = []byte{2}; return boom }); !errors.Is(err, boom) {
		t.Fatalf("err %v", err)
	}
	if got := must(s.Connection(ctx, c.ID)); !reflect.DeepEqual(got, c) {
		t.Fatalf("a failed update changed the connection: %+v", got)
	}
}
