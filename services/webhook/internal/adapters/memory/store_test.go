package memory_test

import (
	"testing"

	"github.com/berthhq/berth/services/webhook/internal/adapters/memory"
	"github.com/berthhq/berth/services/webhook/internal/app"
	"github.com/berthhq/berth/services/webhook/internal/app/porttest"
)

func TestStoreConformsToThePorts(t *testing.T) {
	porttest.Run(t, func(*testing.T) app.Store { return memory.New() })
}
