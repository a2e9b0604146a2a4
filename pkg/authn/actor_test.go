package authn

import (
	"context"
	"net"
	"testing"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/reqid"
)

func TestTheAuditActorNamesEachKindOfCallerByIdsOnly(t *testing.T) {
	cases := []struct {
		name   string
		caller *Principal
		want   events.Actor
	}{
		{"write API key", &Principal{Kind: KindAPIKey, AppID: "a1", KeyID: "k1", KeyType: "write"}, events.Actor{Kind: events.ActorAPIKey, ID: "k1", KeyType: "write"}},
		{"read API key", &Principal{Kind: KindAPIKey, AppID: "a1", KeyID: "k2", KeyType: "read"}, events.Actor{Kind: events.ActorAPIKey, ID: "k2", KeyType: "read"}},
		{"end user", &Principal{Kind: KindTenantToken, AppID: "a1", UserID: "u1", TenantID: "t1", SessionID: "s1"}, events.Actor{Kind: events.ActorUser, ID: "u1"}},
		{"operator", &Principal{Kind: KindOperator, AppID: "a1", ProjectID: "p1", UserID: "m1"}, events.Actor{Kind: events.ActorOperator, ID: "m1"}},
		{"admin token", &Principal{Kind: KindAdmin}, events.Actor{Kind: events.ActorAdmin}},
		{"service token", &Principal{Kind: KindService}, events.Actor{Kind: events.ActorSystem}},
		{"anonymous caller of a public route", nil, events.Actor{Kind: events.ActorSystem, ID: "anonymous"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ActorOf(c.caller); got != c.want {
				t.Fatalf("ActorOf = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestTheAuditActorCarriesTheRequestIdAndTheCallersAddress(t *testing.T) {
	tcpPeer := &peer.Peer{Addr: &net.TCPAddr{IP: net.ParseIP("192.0.2.10"), Port: 40000}}
	cases := []struct {
		name      string
		forwarded string // MDClientAddress; "" sends none
		peer      *peer.Peer
		want      string
	}{
		{"the address the edge forwarded", "203.0.113.7", tcpPeer, "203.0.113.7"},
		{"an IPv6 address the edge forwarded", "2001:db8::1", tcpPeer, "2001:db8::1"},
		{"the gRPC peer without a forwarded address", "", tcpPeer, "192.0.2.10"},
		{"the gRPC peer instead of forwarded text that is no address", "<script>", tcpPeer, "192.0.2.10"},
		{"nothing without either", "", nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := reqid.With(context.Background(), "req-42")
			if c.forwarded != "" {
				ctx = metadata.NewIncomingContext(ctx, metadata.Pairs(MDClientAddress, c.forwarded))
			}
			if c.peer != nil {
				ctx = peer.NewContext(ctx, c.peer)
			}
			p := &Principal{Kind: KindAPIKey, KeyID: "k1", KeyType: "write"}
			ctx = withActor(ctx, p)
			got, ok := events.ActorFrom(ctx)
			want := events.Actor{Kind: events.ActorAPIKey, ID: "k1", KeyType: "write", RequestID: "req-42", ClientAddress: c.want}
			if !ok || got != want {
				t.Fatalf("actor = %+v, want %+v", got, want)
			}
			if pr, ok := FromContext(ctx); !ok || pr.KeyID != "k1" {
				t.Fatalf("principal = %+v, %v; want the admitted key", pr, ok)
			}
		})
	}
}

func TestOnlyAServiceTokenCallMayForwardTheActorItActsFor(t *testing.T) {
	provider := `{"kind":"provider_event","id":"evt_1","requestId":"req-9","clientAddress":"192.0.2.5"}`
	cases := []struct {
		name      string
		caller    Principal
		forwarded string
		want      events.Actor
	}{
		{"a service forwarding a provider event", Principal{Kind: KindService}, provider,
			events.Actor{Kind: events.ActorProviderEvent, ID: "evt_1", RequestID: "req-9", ClientAddress: "192.0.2.5"}},
		{"a service forwarding nothing", Principal{Kind: KindService}, "",
			events.Actor{Kind: events.ActorSystem, RequestID: "req-42"}},
		{"a service forwarding an unknown kind", Principal{Kind: KindService}, `{"kind":"root"}`,
			events.Actor{Kind: events.ActorSystem, RequestID: "req-42"}},
		{"a service forwarding text that is no actor", Principal{Kind: KindService}, `not json`,
			events.Actor{Kind: events.ActorSystem, RequestID: "req-42"}},
		{"an API key claiming to forward one", Principal{Kind: KindAPIKey, KeyID: "k1", KeyType: "write"}, provider,
			events.Actor{Kind: events.ActorAPIKey, ID: "k1", KeyType: "write", RequestID: "req-42"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := reqid.With(context.Background(), "req-42")
			if c.forwarded != "" {
				ctx = metadata.NewIncomingContext(ctx, metadata.Pairs(MDActor, c.forwarded))
			}
			got, _ := events.ActorFrom(withActor(ctx, &c.caller))
			if got != c.want {
				t.Fatalf("actor = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestForwardActorPutsTheContextsActorIntoTheCallsMetadata(t *testing.T) {
	a := events.Actor{Kind: events.ActorAPIKey, ID: "k1", KeyType: "write", RequestID: "r1"}
	out, _ := metadata.FromOutgoingContext(ForwardActor(events.WithActor(context.Background(), a)))
	in := metadata.NewIncomingContext(context.Background(), metadata.Pairs(MDActor, out.Get(MDActor)[0]))
	if got, ok := forwardedActor(in); !ok || got != a {
		t.Fatalf("forwarded %+v, %v; want %+v", got, ok, a)
	}
	if _, ok := metadata.FromOutgoingContext(ForwardActor(context.Background())); ok {
		t.Fatal("a context without an actor forwarded metadata")
	}
}
