package postgres_test

import (
	"testing"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/testkit/pgtest"
	"github.com/berthhq/berth/services/outbound/internal/adapters/postgres"
	"github.com/berthhq/berth/services/outbound/internal/app"
	"github.com/berthhq/berth/services/outbound/internal/app/porttest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestStoreConformsToThePorts(t *testing.T) {
	porttest.Run(t, func(t *testing.T) (app.Store, events.OutboxSource) {
		pool := pgtest.New(t, "outbound", postgres.Migrate)
		return postgres.New(pool), events.NewPGOutbox(pool)
	})
}
