package memory_test

import (
	"testing"

	"github.com/berthhq/berth/services/analytics/internal/adapters/memory"
	"github.com/berthhq/berth/services/analytics/internal/app"
	"github.com/berthhq/berth/services/analytics/internal/app/porttest"
)

func TestStoreConformsToStorePort(t *testing.T) {
	porttest.Store(t, func(*testing.T) app.Store { return memory.New() })
}
