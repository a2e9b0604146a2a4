package console

import (
	"context"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/grpcx"
	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
)

// auditTarget is the user the fake's first audit entry is about.
const auditTarget = "5c071d6c-04e0-45d2-81c7-f97ccc5aabca"

// fakeAudit is analytics' audit log for the console's tests: entries streamed as analytics does
// (the head first, items in chunks, a page's cursor in its last message), a retention to read and
// set, and the calls recorded. Its cursor is the id of a page's last entry (the console passes it
// on unread); one naming no entry is refused as analytics refuses a cursor it never handed out.
// listErr refuses the list when it is read (as a streamed refusal arrives), retentionErr both
// retention calls. The other methods of the two services are never called by the console; the
// embedded nil clients make a call to one fail the test loudly.
type fakeAudit struct {
	analyticsv1.AnalyticsServiceClient
	analyticsv1.AnalyticsAdminServiceClient
	mu           sync.Mutex
	calls        []call
	entries      []*analyticsv1.AuditEntry
	retention    int32
	listErr      error
	retentionErr error
}

// newFakeAudit holds n entries, newest first, the first a write key's change of auditTarget.
func newFakeAudit(n int) *fakeAudit {
	f := &fakeAudit{retention: 365}
	for i := range n {
		e := &analyticsv1.AuditEntry{Id: fmt.Sprintf("01936f2a-7c1e-7b3d-9a4f-%012d", i), At: start.Add(-time.Duration(i) * time.Minute).Format("2006-01-02T15:04:05.000000Z"),
			Action: "tenant.tenant.updated", TargetType: "tenant", TargetId: fmt.Sprintf("tenant-%d", i),
			Actor: &analyticsv1.AuditActor{Kind: "system", Id: "tenant-identity"}, RequestId: fmt.Sprintf("req-%d", i)}
		if i == 0 {
			e.Action, e.TargetType, e.TargetId, e.ClientAddress = "identity.user.updated", "user", auditTarget, "203.0.113.24"
			e.Actor = &analyticsv1.AuditActor{Kind: "api_key", Id: "b1c32b65-e308-4172-bb6a-9acd303c267c", KeyType: "write"}
			e.ChangedFields = []string{"name", "locale"}
		}
		f.entries = append(f.entries, e)
	}
	return f
}

func (f *fakeAudit) record(ctx context.Context, method string, in proto.Message) {
	bearer := ""
	if v := metadata.ValueFromOutgoingContext(ctx, "authorization"); len(v) == 1 {
		bearer = v[0]
	}
	f.calls = append(f.calls, call{method: method, bearer: bearer, req: in})
}

func (f *fakeAudit) ListAuditEntries(ctx context.Context, in *analyticsv1.ListAuditEntriesRequest, _ ...grpc.CallOption) (grpc.ServerStreamingClient[analyticsv1.AuditEntryChunk], error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record(ctx, "ListAuditEntries", in)
	page, next := f.entries, ""
	if in.GetBefore() != "" {
		at := slices.IndexFunc(page, func(e *analyticsv1.AuditEntry) bool { return e.GetId() == in.GetBefore() })
		if at < 0 {
			return &auditStream{err: grpcx.StatusOf(fault.InvalidField("before", "is not a cursor of this list")).Err()}, nil
		}
		page = page[at+1:]
	}
	if n := int(in.GetLimit()); n > 0 && len(page) > n {
		page, next = page[:n], page[n-1].GetId()
	}
	chunks := []*analyticsv1.AuditEntryChunk{{Head: &analyticsv1.ListHead{Kind: "auditEntry", ItemsLength: int32(len(page))}}}
	const size = 16
	for i := 0; i < len(page); i += size {
		chunks = append(chunks, &analyticsv1.AuditEntryChunk{Items: page[i:min(i+size, len(page))]})
	}
	chunks[len(chunks)-1].Next = next
	return &auditStream{chunks: chunks, err: f.listErr}, nil
}

func (f *fakeAudit) AuditRetention(ctx context.Context, in *analyticsv1.AuditRetentionRequest, _ ...grpc.CallOption) (*analyticsv1.AuditRetentionSetting, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record(ctx, "AuditRetention", in)
	if f.retentionErr != nil {
		return nil, f.retentionErr
	}
	return &analyticsv1.AuditRetentionSetting{AppId: in.GetAppId(), RetentionDays: f.retention}, nil
}

func (f *fakeAudit) SetAuditRetention(ctx context.Context, in *analyticsv1.SetAuditRetentionRequest, _ ...grpc.CallOption) (*analyticsv1.AuditRetentionSetting, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.record(ctx, "SetAuditRetention", in)
	if f.retentionErr != nil {
		return nil, f.retentionErr
	}
	f.retention = in.GetRetentionDays()
	return &analyticsv1.AuditRetentionSetting{AppId: in.GetAppId(), RetentionDays: f.retention}, nil
}

func (f *fakeAudit) received(method string) []call {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []call
	for _, c := range f.calls {
		if c.method == method {
			out = append(out, c)
		}
	}
	return out
}

// auditStream hands out its chunks, or err at the first read.
type auditStream struct {
	grpc.ClientStream
	chunks []*analyticsv1.AuditEntryChunk
	err    error
}

func (s *auditStream) Recv() (*analyticsv1.AuditEntryChunk, error) {
	if s.err != nil {
		return nil, s.err
	}
	if len(s.chunks) == 0 {
		return nil, io.EOF
	}
	c := s.chunks[0]
	s.chunks = s.chunks[1:]
	return c, nil
}
