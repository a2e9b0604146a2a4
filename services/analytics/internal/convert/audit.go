package convert

import (
	"time"

	"github.com/berthhq/berth/services/analytics/internal/domain"

	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
)

// AuditEntry is the audit log item of e; at keeps the event's microseconds, so entries of one
// second still read in their order.
func AuditEntry(e domain.AuditEntry) *analyticsv1.AuditEntry {
	fields := e.ChangedFields
	if fields == nil {
		fields = []string{} // an empty list in JSON, never null
	}
	return &analyticsv1.AuditEntry{
		Id: e.ID, At: e.At.UTC().Format(time.RFC3339Nano), Action: e.Action, TargetType: e.TargetType, TargetId: e.TargetID,
		Actor:     &analyticsv1.AuditActor{Kind: e.ActorKind, Id: e.ActorID, KeyType: e.ActorKeyType},
		RequestId: e.RequestID, ClientAddress: e.ClientAddress, ChangedFields: fields,
	}
}
