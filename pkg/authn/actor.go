package authn

import (
	"context"
	"encoding/json"
	"net/netip"
	"slices"

	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/peer"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/reqid"
)

// MDClientAddress carries the caller's address as the REST edge saw it (the TCP peer, or
// X-Forwarded-For through trusted proxies). The edge never forwards it from HTTP, so over the edge
// it is the edge's own; a direct gRPC caller without it is named by its connection's peer.
const MDClientAddress = "x-berth-client-address"

// MDActor carries, on a call made with the service token, the actor of the request or event the
// calling service is handling (events.Actor as JSON), so a change one service asks of another is
// audited under whoever caused it: a provider's webhook event that billing applies for ingest, an
// API key's request that one service passes on. Only the service token's calls are believed.
const MDActor = "x-berth-actor"

// maxForwardedActor bounds the forwarded actor's JSON: its ids are short, so anything longer is not
// one Berth sent.
const maxForwardedActor = 1024

// withActor puts the admitted caller into ctx twice: as the Principal the handlers read, and as
// the events.Actor the outbox stamps on every event the call appends, so the audit log learns who
// changed what without any use case passing it along. p is nil for a public route's anonymous
// caller.
func withActor(ctx context.Context, p *Principal) context.Context {
	a := ActorOf(p)
	a.RequestID = reqid.From(ctx)
	a.ClientAddress = clientAddress(ctx)
	if p != nil && p.Kind == KindService {
		if fwd, ok := forwardedActor(ctx); ok {
			a = fwd
		}
	}
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

// forwardedActor is the actor a service-token call forwarded (MDActor), when it is one: known kind,
// bounded size.
func forwardedActor(ctx context.Context) (events.Actor, bool) {
	v := metadata.ValueFromIncomingContext(ctx, MDActor)
	if len(v) == 0 || len(v[0]) > maxForwardedActor {
		return events.Actor{}, false
	}
	var a events.Actor
	if err := json.Unmarshal([]byte(v[0]), &a); err != nil || !slices.Contains(actorKinds, a.Kind) {
		return events.Actor{}, false
	}
	return a, true
}

var actorKinds = []events.ActorKind{events.ActorAPIKey, events.ActorUser, events.ActorOperator, events.ActorAdmin,
	events.ActorProviderEvent, events.ActorSystem}

// ForwardActor adds the actor of ctx to a call's outgoing metadata (MDActor); grpcx does it on every
// call made with the service token. A ctx without an actor adds nothing.
func ForwardActor(ctx context.Context) context.Context {
	a, ok := events.ActorFrom(ctx)
	if !ok {
		return ctx
	}
	b, err := json.Marshal(a)
	if err != nil {
		return ctx // an Actor of strings always marshals
	}
	return metadata.AppendToOutgoingContext(ctx, MDActor, string(b))
}
