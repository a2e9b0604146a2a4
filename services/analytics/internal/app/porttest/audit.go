package porttest

import (
	"errors"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/services/analytics/internal/app"
	"github.com/berthhq/berth/services/analytics/internal/domain"
)

// auditCases are the cases of the audit log, run by Run with the others.
var auditCases = []struct {
	name string
	run  func(t *testing.T, s app.Store)
}{
	{"AuditEntriesReadBackAsRecorded", auditReadsBack},
	{"AuditEntriesAreListedNewestFirstWithinHalfOpenBounds", auditNewestFirstWithinBounds},
	{"RecordingAnAuditEntryAgainKeepsTheFirst", auditRecordTwiceKeepsFirst},
	{"AuditEntriesAreScopedToTheirApp", auditScopedToApp},
	{"AuditFiltersMatchActorTargetAndActionExactly", auditFilters},
	{"AuditVisitorErrorStopsTheList", auditVisitorErrorStops},
	{"AuditPagesResumeBelowTheCursorAcrossEqualTimes", auditPagesAcrossEqualTimes},
	{"AuditPageAppliesTheFiltersBeforeTheLimit", auditPageFiltersFirst},
	{"AuditRetentionDefaultsAndCanBeSetPerApp", auditRetention},
	{"PruningDeletesOnlyEntriesBeyondTheirAppsRetention", auditPruning},
	{"ResetKeepsTheAuditLog", auditSurvivesReset},
}

func auditEntry(appID string, at time.Time) domain.AuditEntry {
	return domain.AuditEntry{
		ID: uuid.NewString(), AppID: appID, At: at, Action: "identity.user.updated", TargetType: "user",
		TargetID: uuid.NewString(), ActorKind: "api_key", ActorID: uuid.NewString(), ActorKeyType: "write",
		RequestID: "req-1", ClientAddress: "203.0.113.7", ChangedFields: []string{"name", "locale"},
	}
}

func recordAudit(t *testing.T, s app.Store, es ...domain.AuditEntry) {
	t.Helper()
	for _, e := range es {
		if err := s.RecordAuditEntry(ctx, e); err != nil {
			t.Fatalf("RecordAuditEntry: %v", err)
		}
	}
}

// auditOf lists what f selects, checking the count the visitor was told matches the entries.
func auditOf(t *testing.T, s app.Store, f domain.AuditFilter) []domain.AuditEntry {
	t.Helper()
	var (
		out   []domain.AuditEntry
		count = -1
	)
	err := s.VisitAuditEntries(ctx, f, app.Visitor[domain.AuditEntry]{
		Count: func(n int) error { count = n; return nil },
		Each:  func(e domain.AuditEntry) error { out = append(out, e); return nil },
	})
	if err != nil {
		t.Fatalf("VisitAuditEntries: %v", err)
	}
	if count != len(out) {
		t.Fatalf("count %d, but %d entries visited", count, len(out))
	}
	return out
}

func allOf(appID string) domain.AuditFilter {
	return domain.AuditFilter{AppID: appID, From: base.Add(-1000 * time.Hour), To: base.Add(1000 * time.Hour)}
}

func auditIDs(es []domain.AuditEntry) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

func auditReadsBack(t *testing.T, s app.Store) {
	appID := uuid.NewString()
	full := auditEntry(appID, base)
	bare := domain.AuditEntry{ID: uuid.NewString(), AppID: appID, At: base.Add(-time.Minute), Action: "identity.user.signed_in",
		TargetType: "user", TargetID: uuid.NewString()} // an event from before actors, no changed fields
	recordAudit(t, s, full, bare)
	got := auditOf(t, s, allOf(appID))
	if want := []domain.AuditEntry{full, bare}; !reflect.DeepEqual(got, want) {
		t.Fatalf("listed %+v\nwant %+v", got, want)
	}
	got[0].ChangedFields[0] = "changed by the caller"
	if again := auditOf(t, s, allOf(appID)); again[0].ChangedFields[0] != "name" {
		t.Fatal("a listed entry shares its changed fields with the store")
	}
}

func auditNewestFirstWithinBounds(t *testing.T, s app.Store) {
	appID := uuid.NewString()
	before := auditEntry(appID, base.Add(-time.Microsecond))
	first := auditEntry(appID, base)
	tieA, tieB := auditEntry(appID, base.Add(time.Hour)), auditEntry(appID, base.Add(time.Hour))
	atEnd := auditEntry(appID, base.Add(2*time.Hour))
	recordAudit(t, s, before, first, tieA, tieB, atEnd)
	got := auditIDs(auditOf(t, s, domain.AuditFilter{AppID: appID, From: base, To: base.Add(2 * time.Hour)}))
	hi, lo := tieA.ID, tieB.ID
	if hi < lo {
		hi, lo = lo, hi
	}
	if want := []string{hi, lo, first.ID}; !reflect.DeepEqual(got, want) {
		t.Fatalf("listed %v, want %v (newest first, ties by id descending, [from, to))", got, want)
	}
}

func auditRecordTwiceKeepsFirst(t *testing.T, s app.Store) {
	appID := uuid.NewString()
	e := auditEntry(appID, base)
	again := e
	again.Action, again.ChangedFields = "tenant.tenant.updated", []string{"other"}
	recordAudit(t, s, e, again)
	if got := auditOf(t, s, allOf(appID)); len(got) != 1 || !reflect.DeepEqual(got[0], e) {
		t.Fatalf("listed %+v, want only the first %+v", got, e)
	}
}

func auditScopedToApp(t *testing.T, s app.Store) {
	mine, theirs := uuid.NewString(), uuid.NewString()
	e := auditEntry(mine, base)
	recordAudit(t, s, e, auditEntry(theirs, base))
	if got := auditIDs(auditOf(t, s, allOf(mine))); !reflect.DeepEqual(got, []string{e.ID}) {
		t.Fatalf("listed %v, want only this app's %s", got, e.ID)
	}
}

func auditFilters(t *testing.T, s app.Store) {
	appID := uuid.NewString()
	key := auditEntry(appID, base)
	user := auditEntry(appID, base.Add(time.Minute))
	user.ActorKind, user.ActorID, user.ActorKeyType = "user", user.TargetID, ""
	tenant := auditEntry(appID, base.Add(2*time.Minute))
	tenant.Action, tenant.TargetType = "tenant.tenant.updated", "tenant"
	recordAudit(t, s, key, user, tenant)
	cases := []struct {
		name   string
		filter func(f *domain.AuditFilter)
		want   []string
	}{
		{"actor kind", func(f *domain.AuditFilter) { f.ActorKind = "user" }, []string{user.ID}},
		{"actor id", func(f *domain.AuditFilter) { f.ActorID = key.ActorID }, []string{key.ID}},
		{"target type", func(f *domain.AuditFilter) { f.TargetType = "tenant" }, []string{tenant.ID}},
		{"target id", func(f *domain.AuditFilter) { f.TargetID = user.TargetID }, []string{user.ID}},
		{"action", func(f *domain.AuditFilter) { f.Action = "identity.user.updated" }, []string{user.ID, key.ID}},
		{"actor and action together", func(f *domain.AuditFilter) { f.ActorKind, f.Action = "api_key", "tenant.tenant.updated" }, []string{tenant.ID}},
		{"a prefix is no match", func(f *domain.AuditFilter) { f.ActorID = key.ActorID[:8] }, []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := allOf(appID)
			c.filter(&f)
			got := auditIDs(auditOf(t, s, f))
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("listed %v, want %v", got, c.want)
			}
		})
	}
}

func auditVisitorErrorStops(t *testing.T, s app.Store) {
	appID := uuid.NewString()
	recordAudit(t, s, auditEntry(appID, base), auditEntry(appID, base.Add(time.Second)))
	stop := errors.New("client went away")
	visited := 0
	err := s.VisitAuditEntries(ctx, allOf(appID), app.Visitor[domain.AuditEntry]{
		Count: func(int) error { return nil },
		Each:  func(domain.AuditEntry) error { visited++; return stop },
	})
	if !errors.Is(err, stop) || visited != 1 {
		t.Fatalf("VisitAuditEntries = %v after %d entries; want the visitor's error after the first", err, visited)
	}
}

func auditRetention(t *testing.T, s app.Store) {
	appID, other := uuid.NewString(), uuid.NewString()
	if days, err := s.AuditRetention(ctx, appID); err != nil || days != domain.DefaultAuditRetentionDays {
		t.Fatalf("AuditRetention = %d, %v; want the default %d", days, err, domain.DefaultAuditRetentionDays)
	}
	for _, days := range []int{30, 90} { // set, then changed
		if err := s.SetAuditRetention(ctx, appID, days); err != nil {
			t.Fatal(err)
		}
		if got, err := s.AuditRetention(ctx, appID); err != nil || got != days {
			t.Fatalf("AuditRetention = %d, %v; want %d", got, err, days)
		}
	}
	if days, err := s.AuditRetention(ctx, other); err != nil || days != domain.DefaultAuditRetentionDays {
		t.Fatalf("another app's retention = %d, %v; want the default", days, err)
	}
}

func auditPruning(t *testing.T, s app.Store) {
	short, long := uuid.NewString(), uuid.NewString()
	if err := s.SetAuditRetention(ctx, short, 10); err != nil {
		t.Fatal(err)
	}
	now := base
	shortOld, shortKept := auditEntry(short, now.AddDate(0, 0, -10).Add(-time.Microsecond)), auditEntry(short, now.AddDate(0, 0, -10))
	longOld, longKept := auditEntry(long, now.AddDate(0, 0, -365).Add(-time.Second)), auditEntry(long, now.AddDate(0, 0, -11))
	recordAudit(t, s, shortOld, shortKept, longOld, longKept)
	n, err := s.PruneAuditEntries(ctx, now)
	if err != nil || n != 2 {
		t.Fatalf("PruneAuditEntries = %d, %v; want 2", n, err)
	}
	if got := auditIDs(auditOf(t, s, domain.AuditFilter{AppID: short, From: now.AddDate(-2, 0, 0), To: now})); !reflect.DeepEqual(got, []string{shortKept.ID}) {
		t.Fatalf("the 10-day app keeps %v, want %v", got, []string{shortKept.ID})
	}
	if got := auditIDs(auditOf(t, s, domain.AuditFilter{AppID: long, From: now.AddDate(-2, 0, 0), To: now})); !reflect.DeepEqual(got, []string{longKept.ID}) {
		t.Fatalf("the default app keeps %v, want %v", got, []string{longKept.ID})
	}
}

func auditSurvivesReset(t *testing.T, s app.Store) {
	appID := uuid.NewString()
	e := auditEntry(appID, base)
	recordAudit(t, s, e)
	if err := s.SetAuditRetention(ctx, appID, 30); err != nil {
		t.Fatal(err)
	}
	if err := s.Reset(ctx); err != nil {
		t.Fatal(err)
	}
	if got := auditIDs(auditOf(t, s, allOf(appID))); !reflect.DeepEqual(got, []string{e.ID}) {
		t.Fatalf("after a reset listed %v, want the entry kept", got)
	}
	if days, err := s.AuditRetention(ctx, appID); err != nil || days != 30 {
		t.Fatalf("after a reset the retention is %d, %v; want 30", days, err)
	}
}

// auditPagesAcrossEqualTimes walks pages of 2 by the cursor of each page's last entry: seven
// entries, five of them in one microsecond, are each visited exactly once in the store's order, and
// every page's count is what it visits.
func auditPagesAcrossEqualTimes(t *testing.T, s app.Store) {
	appID := uuid.NewString()
	var es []domain.AuditEntry
	for _, d := range []time.Duration{0, time.Microsecond, time.Microsecond, time.Microsecond, time.Microsecond, time.Microsecond, time.Hour} {
		es = append(es, auditEntry(appID, base.Add(d)))
	}
	recordAudit(t, s, es...)
	want := auditIDs(auditOf(t, s, allOf(appID)))
	if len(want) != len(es) {
		t.Fatalf("the whole list has %d entries, want %d", len(want), len(es))
	}
	var walked []string
	f := allOf(appID)
	f.Limit = 2
	for range len(es) {
		page := auditOf(t, s, f)
		if len(page) > 2 {
			t.Fatalf("a page of 2 visited %d entries", len(page))
		}
		walked = append(walked, auditIDs(page)...)
		if len(page) < 2 {
			break
		}
		last := page[len(page)-1].Position()
		f.Before = &last
	}
	if !slices.Equal(walked, want) {
		t.Fatalf("the pages walked %v\nwant %v (each entry once, newest first)", walked, want)
	}
	// A cursor read back from its text is the same position: the page after it is the same.
	cursor := auditOf(t, s, allOf(appID))[3].Position()
	f = allOf(appID)
	f.Limit, f.Before = 10, &cursor
	if got := auditIDs(auditOf(t, s, f)); !slices.Equal(got, want[4:]) {
		t.Fatalf("below the fourth entry listed %v, want %v", got, want[4:])
	}
}

// auditPageFiltersFirst: a page holds the first entries that match, not the first entries cut and
// then filtered, and the limit counts only what it visits.
func auditPageFiltersFirst(t *testing.T, s app.Store) {
	appID := uuid.NewString()
	match := auditEntry(appID, base)
	other := auditEntry(appID, base.Add(time.Second))
	other.Action = "tenant.tenant.updated"
	recordAudit(t, s, match, other, auditEntry(uuid.NewString(), base.Add(2*time.Second)))
	f := allOf(appID)
	f.Action, f.Limit = "identity.user.updated", 1
	if got := auditIDs(auditOf(t, s, f)); !slices.Equal(got, []string{match.ID}) {
		t.Fatalf("a filtered page of 1 listed %v, want %v", got, []string{match.ID})
	}
}
