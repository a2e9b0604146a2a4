package grpcx

import (
	"context"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/events"
)

func TestOnlyServiceTokenCallsForwardTheActorTheCallerActsFor(t *testing.T) {
	ctx := events.WithActor(context.Background(), events.Actor{Kind: events.ActorProviderEvent, ID: "evt_1"})
	for _, c := range []struct {
		name    string
		token   string
		forward bool
	}{
		{"Berth calling Berth", "service-token", true},
		{"a client without the service token", "", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var sent metadata.MD
			invoker := func(ctx context.Context, _ string, _, _ any, _ *grpc.ClientConn, _ ...grpc.CallOption) error {
				sent, _ = metadata.FromOutgoingContext(ctx)
				return nil
			}
			if err := chainClient(callInterceptors(c.token)...)(ctx, "/x.Y/Z", nil, nil, nil, invoker); err != nil {
				t.Fatal(err)
			}
			if got := len(sent.Get(authn.MDActor)) == 1; got != c.forward {
				t.Fatalf("forwarded the actor: %v, want %v (metadata %v)", got, c.forward, sent)
			}
		})
	}
}
