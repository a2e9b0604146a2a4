package grpcapi

import (
	"context"

	"google.golang.org/grpc"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/services/analytics/internal/app"
	"github.com/berthhq/berth/services/analytics/internal/convert"
	"github.com/berthhq/berth/services/analytics/internal/domain"

	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
)

// chunkItems is how many items one stream message carries: large enough that per-message costs
// (framing, the edge's flush) vanish, small enough that a message stays far below gRPC's 4 MiB
// limit with the largest items (tenants with their users).
const chunkItems = 128

// ListSubscriptions is route 6.
func (s *Server) ListSubscriptions(req *analyticsv1.ListRangeRequest, stream grpc.ServerStreamingServer[analyticsv1.SubscriptionChunk]) error {
	return streamList(stream, "analyticsSubscription", ranged(req, s.svc.ListSubscriptions), convert.Subscription,
		func(c *analyticsv1.SubscriptionChunk, h *analyticsv1.ListHead, items []*analyticsv1.Subscription, _ string) {
			c.Head, c.Items = h, items // unpaged: never a cursor
		})
}

// ListOneTimePayments is route 7.
func (s *Server) ListOneTimePayments(req *analyticsv1.ListRangeRequest, stream grpc.ServerStreamingServer[analyticsv1.OneTimePaymentChunk]) error {
	return streamList(stream, "analyticsOneTimePayment", ranged(req, s.svc.ListOneTimePayments), convert.OneTimePayment,
		func(c *analyticsv1.OneTimePaymentChunk, h *analyticsv1.ListHead, items []*analyticsv1.OneTimePayment, _ string) {
			c.Head, c.Items = h, items // unpaged: never a cursor
		})
}

// ListTenants is route 9.
func (s *Server) ListTenants(req *analyticsv1.ListRangeRequest, stream grpc.ServerStreamingServer[analyticsv1.TenantChunk]) error {
	return streamList(stream, "analyticsTenant", ranged(req, s.svc.ListTenants), convert.TenantItem,
		func(c *analyticsv1.TenantChunk, h *analyticsv1.ListHead, items []*analyticsv1.TenantItem, _ string) {
			c.Head, c.Items = h, items // unpaged: never a cursor
		})
}

// ListAuditEntries is the audit log of the app in the path.
func (s *Server) ListAuditEntries(req *analyticsv1.ListAuditEntriesRequest, stream grpc.ServerStreamingServer[analyticsv1.AuditEntryChunk]) error {
	q := domain.AuditQuery{From: req.GetFrom(), To: req.GetTo(), ActorKind: req.GetActorKind(), ActorID: req.GetActorId(),
		TargetType: req.GetTargetType(), TargetID: req.GetTargetId(), Action: req.GetAction(),
		Limit: req.GetLimit(), Before: req.GetBefore()}
	visit := func(ctx context.Context, appID string, v app.Visitor[domain.AuditEntry]) (string, error) {
		return s.svc.ListAuditEntries(ctx, appID, q, v)
	}
	return streamList(stream, "auditEntry", visit, convert.AuditEntry,
		func(c *analyticsv1.AuditEntryChunk, h *analyticsv1.ListHead, items []*analyticsv1.AuditEntry, next string) {
			c.Head, c.Items, c.Next = h, items, next
		})
}

// list is a use case answering a streamed list: the caller's app and the visitor. A paged list
// answers the cursor of its next page ("" on the last page, and for a list that is not paged).
type list[R any] func(ctx context.Context, appID string, v app.Visitor[R]) (next string, err error)

// ranged is the list of a use case over the request's range (routes 6, 7 and 9), which are not paged.
func ranged[R any](req *analyticsv1.ListRangeRequest, uc func(ctx context.Context, appID, from, to string, v app.Visitor[R]) error) list[R] {
	return func(ctx context.Context, appID string, v app.Visitor[R]) (string, error) {
		return "", uc(ctx, appID, req.GetFrom(), req.GetTo(), v)
	}
}

// streamList answers a list for the caller's app as chunks of type C: the head (kind and count) in
// the first, then chunkItems items per message, converted one by one, so neither the records nor
// the items of the whole list are ever held. fill sets a chunk's head, items and next page's
// cursor; the cursor is known once the list is read, so it rides in the last message (one of its
// own when the items filled the one before exactly).
func streamList[R, I, C any](stream grpc.ServerStreamingServer[C], kind string,
	uc list[R], item func(R) I, fill func(c *C, h *analyticsv1.ListHead, items []I, next string)) error {
	appID, err := authn.CallerApp(stream.Context())
	if err != nil {
		return err
	}
	var (
		head    *analyticsv1.ListHead
		items   = make([]I, 0, chunkItems)
		pending bool // the head has not been sent yet
	)
	send := func(next string) error {
		var c C
		fill(&c, head, items, next)
		head, pending = nil, false
		if err := stream.Send(&c); err != nil {
			return err
		}
		items = items[:0] // Send has marshalled the message: the slice may be reused
		return nil
	}
	next, err := uc(stream.Context(), appID, app.Visitor[R]{
		Count: func(n int) error {
			head, pending = &analyticsv1.ListHead{Kind: kind, ItemsLength: int32(n)}, true
			return nil
		},
		Each: func(rec R) error {
			items = append(items, item(rec))
			if len(items) == chunkItems {
				return send("")
			}
			return nil
		},
	})
	if err != nil {
		return err
	}
	if pending || len(items) > 0 || next != "" {
		return send(next)
	}
	return nil
}
