package natstest_test

import (
	"context"
	"testing"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/testkit/natstest"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

func TestBusesOfTwoTestsDoNotShareEvents(t *testing.T) {
	ctx := context.Background()
	a, _ := natstest.New(t)
	b, _ := natstest.New(t)
	ev, err := events.New("identity", identityv1.EventUserUpdated, "app1", &identityv1.UserChanged{AppId: "app1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Publish(ctx, ev); err != nil {
		t.Fatal(err)
	}
	for bus, want := range map[*events.Bus]uint64{&a: 1, &b: 0} {
		s, err := bus.JS.Stream(ctx, bus.Stream("identity"))
		if err != nil {
			t.Fatal(err)
		}
		info, err := s.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.State.Msgs != want {
			t.Errorf("stream %s holds %d messages, want %d", bus.Stream("identity"), info.State.Msgs, want)
		}
	}
}
