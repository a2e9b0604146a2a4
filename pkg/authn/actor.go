package authn

import (
	"context"
	"net/netip"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/reqid"
)

// MDClientAddress carries the caller's address as the REST edge saw it (the TCP peer, or
// X-Forwarded-For through trusted proxies). The edge never forwards it from HTTP, so over the edge
// it is the edge's own; a direct gRPC caller without it is named by its connection's peer.
const MDClientAddress = "x-berth-client-address"

// withActor puts the admitted caller into ctx twice: as the Principal the handlers read, and as
// the events.Actor the outbox stamps on every event the call appends, so the audit log learns who
// changed what without any use case passing it along. p is nil for a public route's anonymous
// caller.
func withActor(ctx context.Context, p *Principal) context.Context {
	a := ActorOf(p)
	a.RequestID = reqid.From(ctx)
	a.ClientAddress = clientAddress(ctx)
	ctx = events.WithActor(ctx, a)
	if p == nil {
		return ctx
	}
	return NewContext(ctx, *p)
}

// ActorOf is who a caller is in the audit log: ids only, never a credential. A nil Principal is an
// anonymous caller of a public route (a sign-up, a sign-in, a password reset): its events are its
// own doing, but it has no id until the change gives it one, so it is the system acting on an
// unauthenticated request. The service token is Berth itself calling on.
func ActorOf(p *Principal) events.Actor {
	if p == nil {
		return events.Actor{Kind: events.ActorSystem, ID: "anonymous"}
	}
	switch p.Kind {
	case KindAPIKey:
		return events.Actor{Kind: events.ActorAPIKey, ID: p.KeyID, KeyType: p.KeyType}
	case KindTenantToken:
		return events.Actor{Kind: events.ActorUser, ID: p.UserID}
	case KindOperator:
		return events.Actor{Kind: events.ActorOperator, ID: p.UserID}
	case KindAdmin:
		return events.Actor{Kind: events.ActorAdmin}
	}
	return events.Actor{Kind: events.ActorSystem}
}

// clientAddress is the address the edge forwarded, or the gRPC peer's. Only a parseable address is
// taken from metadata, so the log never holds arbitrary text a caller put there.
func clientAddress(ctx context.Context) string {
	if v := metadata.ValueFromIncomingContext(ctx, MDClientAddress); len(v) > 0 {
		if addr, err := netip.ParseAddr(v[0]); err == nil {
			return addr.String()
		}
	}
	if p, ok := peer.FromContext(ctx); ok && p.Addr != nil {
		if ap, err := netip.ParseAddrPort(p.Addr.String()); err == nil {
			return ap.Addr().Unmap().String()
		}
	}
	return ""
}
