package memory_test

import (
	"testing"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/analytics/internal/adapters/memory"
	"github.com/berthhq/berth/services/analytics/internal/app"
	"github.com/berthhq/berth/services/analytics/internal/app/porttest"
)

func TestStoreConformsToThePorts(t *testing.T) {
	porttest.Run(t, func(*testing.T) (app.Store, events.Inbox) { return memory.New(), events.NewMemoryInbox() },
		porttest.Exempt{
			Case: "EffectsCommitWithTheInboxRecord",
			Reason: "the memory store has no transactions to roll back a handler that fails after writing; " +
				"its own writes cannot fail half-way, so the development run it serves needs none",
		})
}
