package postgres_test

import (
	"testing"

	"github.com/berthhq/berth/pkg/testkit/pgtest"
	"github.com/berthhq/berth/services/outbound/internal/adapters/postgres"
	"github.com/berthhq/berth/services/outbound/internal/app"
	"github.com/berthhq/berth/services/outbound/internal/app/porttest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestStoreConformsToThePorts(t *testing.T) {
	porttest.Run(t, func(t *testing.T) app.Store {
		return postgres.New(pgtest.New(t, "outbound", postgres.Migrate))
	})
}
