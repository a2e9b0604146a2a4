package app_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/analytics/internal/adapters/memory"
	"github.com/berthhq/berth/services/analytics/internal/app"
	"github.com/berthhq/berth/services/analytics/internal/domain"
)

// auditPage is one ListAuditEntries call: the ids visited, the count announced and the cursor.
func auditPage(t *testing.T, svc *app.Service, appID string, q domain.AuditQuery) (ids []string, count int, next string) {
	t.Helper()
	count = -1
	next, err := svc.ListAuditEntries(context.Background(), appID, q, app.Visitor[domain.AuditEntry]{
		Count: func(n int) error { count = n; return nil },
		Each:  func(e domain.AuditEntry) error { ids = append(ids, e.ID); return nil },
	})
	if err != nil {
		t.Fatalf("ListAuditEntries(%+v): %v", q, err)
	}
	if count != len(ids) {
		t.Fatalf("ListAuditEntries(%+v) announced %d entries and visited %d", q, count, len(ids))
	}
	return ids, count, next
}

// Pages of 2 walk 5 entries (three of them in one microsecond) newest first, each exactly once,
// the last page without a cursor; an entry recorded meanwhile, newer than the first page, shifts
// nothing after it; without a limit the whole range streams and no cursor is given.
func TestAuditPagesWalkTheLogNewestFirstEachEntryOnceAcrossEqualTimes(t *testing.T) {
	store := memory.New()
	svc := service(t, app.Config{Store: store})
	appID := uuid.NewString()
	at := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	var all []domain.AuditEntry
	for _, d := range []time.Duration{0, time.Second, time.Second, time.Second, 2 * time.Second} {
		e := domain.AuditEntry{ID: uuid.NewString(), AppID: appID, At: at.Add(d), Action: "identity.user.updated", TargetType: "user", TargetID: uuid.NewString()}
		all = append(all, e)
		if err := store.RecordAuditEntry(context.Background(), e); err != nil {
			t.Fatal(err)
		}
	}
	slices.SortFunc(all, func(a, b domain.AuditEntry) int {
		if b.Position().Older(a.Position()) {
			return -1
		}
		return 1
	})
	var want []string
	for _, e := range all {
		want = append(want, e.ID)
	}
	q := domain.AuditQuery{From: "2026-03-04", To: "2026-03-04", Limit: 2}

	var walked []string
	sizes := []int{}
	for page := 0; ; page++ {
		if page > len(want) {
			t.Fatalf("the pages never end: %v", walked)
		}
		ids, n, next := auditPage(t, svc, appID, q)
		walked, sizes = append(walked, ids...), append(sizes, n)
		if page == 0 { // recorded after the first page was read: newer, so on no later page
			late := domain.AuditEntry{ID: uuid.NewString(), AppID: appID, At: at.Add(3 * time.Second), Action: "identity.user.updated", TargetType: "app", TargetID: appID}
			if err := store.RecordAuditEntry(context.Background(), late); err != nil {
				t.Fatal(err)
			}
		}
		if next == "" {
			break
		}
		q.Before = next
	}
	if !slices.Equal(walked, want) || !slices.Equal(sizes, []int{2, 2, 1}) {
		t.Fatalf("pages of %v walked %v, want %v in pages of 2, 2, 1", sizes, walked, want)
	}

	ids, _, next := auditPage(t, svc, appID, domain.AuditQuery{From: "2026-03-04", To: "2026-03-04"})
	if len(ids) != len(want)+1 || next != "" {
		t.Fatalf("without a limit: %d entries and cursor %q, want all %d and none", len(ids), next, len(want)+1)
	}
	// A page exactly as long as what is left has no cursor: no empty page follows.
	if _, _, next := auditPage(t, svc, appID, domain.AuditQuery{From: "2026-03-04", To: "2026-03-04", Limit: int32(len(want) + 1)}); next != "" {
		t.Fatalf("a page holding every entry gives the cursor %q", next)
	}
}

func TestAuditPagingRefusesABadLimitOrCursorBeforeReading(t *testing.T) {
	svc := service(t, app.Config{Store: memory.New()})
	for name, q := range map[string]domain.AuditQuery{
		"a negative limit": {From: "2026-03-04", To: "2026-03-04", Limit: -1},
		"a page too long":  {From: "2026-03-04", To: "2026-03-04", Limit: domain.MaxAuditPage + 1},
		"a forged cursor":  {From: "2026-03-04", To: "2026-03-04", Limit: 10, Before: "bm90IGEgY3Vyc29y"},
	} {
		_, err := svc.ListAuditEntries(context.Background(), uuid.NewString(), q, app.Visitor[domain.AuditEntry]{
			Count: func(int) error { t.Fatalf("%s: the store was read", name); return nil },
			Each:  func(domain.AuditEntry) error { return nil },
		})
		if !fault.Is(err, fault.KindInvalid) {
			t.Errorf("%s: err = %v, want InvalidArgument", name, err)
		}
	}
}
