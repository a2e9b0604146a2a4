package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/cmd/berthctl/target"
	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/config"

	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
)

// auditActorKinds are the audit log's actor kinds (docs/audit-log.md).
var auditActorKinds = []string{"api_key", "user", "operator", "admin", "provider_event", "system"}

// maxAuditPage is the most entries a page of the audit log holds (docs/audit-log.md).
const maxAuditPage = 1000

// auditTargetTypes are the audit log's target types (docs/audit-log.md).
var auditTargetTypes = []string{"user", "tenant", "api_key", "app", "subscription", "payment", "promotion", "endpoint"}

// runAnalytics calls the analytics admin API over conn, and the audit log with the app's read key.
func runAnalytics(ctx context.Context, conn grpc.ClientConnInterface, inv *invocation) (proto.Message, error) {
	fs := inv.fs
	var (
		appID      = fs.String("app", "", "app id")
		days       = fs.Int("days", 0, "days the app's audit entries are kept (1 to 3650)")
		from       = fs.String("from", "", "first day, YYYY-MM-DD (UTC)")
		to         = fs.String("to", "", "last day, YYYY-MM-DD (UTC), at most 366 days after -from counting both")
		actorKind  = fs.String("actor-kind", "", "only entries of this kind of actor")
		actor      = fs.String("actor", "", "only entries of this actor id (an API key, user, member or provider event id)")
		targetType = fs.String("target-type", "", "only entries about this type of target")
		targetID   = fs.String("target", "", "only entries about this target id")
		action     = fs.String("action", "", "only entries of this event type, e.g. identity.user.updated")
		limit      = fs.Int("limit", 0, "one page of at most this many entries (1 to 1000), its next cursor printed as next; 0 lists the whole range")
		before     = fs.String("before", "", "the next cursor of the previous page: the entries older than it")
	)
	if err := inv.parse(); err != nil {
		return nil, err
	}
	admin := analyticsv1.NewAnalyticsAdminServiceClient(conn)
	switch inv.cmd.name {
	case "audit-retention":
		return admin.AuditRetention(ctx, &analyticsv1.AuditRetentionRequest{AppId: *appID})
	case "audit-retention-set":
		return admin.SetAuditRetention(ctx, &analyticsv1.SetAuditRetentionRequest{AppId: *appID, RetentionDays: int32(*days)})
	case "audit-log":
		key := strings.TrimSpace(config.OS(target.APIKeyVar))
		if key == "" {
			return nil, usageError{errors.New(target.APIKeyVar + " must hold a read API key of the app (berthctl key-create -type read)")}
		}
		// Analytics checks the limit again; this only keeps the value inside int32.
		if *limit < 0 || *limit > maxAuditPage {
			return nil, usageError{fmt.Errorf("-limit must be between 1 and %d, or 0 for the whole range", maxAuditPage)}
		}
		ctx = metadata.AppendToOutgoingContext(ctx, authn.MDAPIKey, key, authn.MDAPIKeyType, "read", authn.MDClientID, *appID)
		stream, err := analyticsv1.NewAnalyticsServiceClient(conn).ListAuditEntries(ctx, &analyticsv1.ListAuditEntriesRequest{
			AppId: *appID, From: *from, To: *to, ActorKind: *actorKind, ActorId: *actor, TargetType: *targetType, TargetId: *targetID, Action: *action,
			Limit: int32(*limit), Before: *before})
		if err != nil {
			return nil, err
		}
		return collectAudit(stream)
	}
	return admin.RebuildReadModels(ctx, &analyticsv1.RebuildReadModelsRequest{})
}

// collectAudit gathers the stream's chunks into one, to print as one list: the CLI's range is
// bounded, and a terminal reads no faster than the list arrives. A page's cursor, in its last
// chunk, is kept as the list's next.
func collectAudit(stream grpc.ServerStreamingClient[analyticsv1.AuditEntryChunk]) (*analyticsv1.AuditEntryChunk, error) {
	all := &analyticsv1.AuditEntryChunk{}
	for {
		c, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return all, nil
		}
		if err != nil {
			return nil, err
		}
		if c.GetHead() != nil {
			all.Head = c.GetHead()
		}
		all.Items = append(all.Items, c.GetItems()...)
		if c.GetNext() != "" {
			all.Next = c.GetNext()
		}
	}
}
