package memory_test

import (
	"testing"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/outbound/internal/adapters/memory"
	"github.com/berthhq/berth/services/outbound/internal/app"
	"github.com/berthhq/berth/services/outbound/internal/app/porttest"
)

func TestStoreConformsToThePorts(t *testing.T) {
	porttest.Run(t, func(*testing.T) (app.Store, events.OutboxSource) {
		outbox := &events.MemoryOutbox{}
		return memory.New(outbox), outbox
	})
}
