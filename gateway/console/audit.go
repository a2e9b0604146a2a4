package console

import (
	"context"
	"errors"
	"io"
	"net/http"

	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// AuditPath is an app's audit log page: its entries (GET, filtered by the query) and its retention
// (POST).
const AuditPath = Path + "/apps/{app}/audit"

// AuditURL is the app's audit log page, for links.
func (frame) AuditURL(appID string) string { return Path + "/apps/" + appID + "/audit" }

// auditShown is how many entries the page lists at most: the stream has no paging, so a range
// holding more is cut here and the page asks for a narrower one.
const auditShown = 200

// auditView is an app's audit entries under a filter, newest first, and its retention. Matched is
// how many entries the filter matched (more than shown when Capped); Problem is the field of a
// refused filter, whose page lists nothing.
type auditView struct {
	frame
	App         *identityv1.App
	Filter      auditFilter
	ActorKinds  []string
	TargetTypes []string
	Entries     []*analyticsv1.AuditEntry
	Matched     int
	Capped      bool
	Problem     string
	Retention   int32
	MinDays     int
	MaxDays     int
}

// ActorKindName is the page's text of an actor kind; entries from before actors were recorded
// have none.
func (v auditView) ActorKindName(kind string) string {
	if kind == "" {
		kind = "unknown"
	}
	return v.T("console.audit.kind." + kind)
}

// audit lists the app's audit entries the query's filter matches, newest first, up to auditShown.
// A refused filter is answered on the page itself (400), its field named, so it can be corrected.
func (c *Console) audit(w http.ResponseWriter, r *http.Request, v visit) {
	app, ok := c.pathApp(w, r, v)
	if !ok {
		return
	}
	id := app.GetId()
	retention, err := c.AuditRetention.AuditRetention(v.ctx, &analyticsv1.AuditRetentionRequest{AppId: id})
	if err != nil {
		c.fail(w, r, v, err, "read the app's audit retention")
		return
	}
	view := auditView{frame: c.frame(w, r, v.p, v.member, "console.audit.title"), App: app, ActorKinds: auditActorKinds,
		TargetTypes: auditTargetTypes, Retention: retention.GetRetentionDays(), MinDays: minRetentionDays, MaxDays: maxRetentionDays}
	q := r.URL.Query()
	view.Filter, err = auditFilterFrom(q, c.sessions.now())
	if err != nil {
		view.Problem = refused(err)
		view.Filter = auditFilter{From: q.Get("from"), To: q.Get("to"), ActorKind: q.Get("actor_kind"), ActorID: q.Get("actor_id"),
			TargetType: q.Get("target_type"), TargetID: q.Get("target_id"), Action: q.Get("action")}
		c.render(w, r, http.StatusBadRequest, "audit", view)
		return
	}
	view.Entries, view.Matched, err = c.auditEntries(v.ctx, id, view.Filter)
	if err != nil {
		c.fail(w, r, v, err, "list the app's audit entries")
		return
	}
	view.Capped = view.Matched > len(view.Entries)
	c.render(w, r, http.StatusOK, "audit", view)
}

// auditEntries reads the first auditShown entries of the app's stream under f and how many the
// filter matched (the stream's head counts them). The rest of a longer stream is left unread: the
// call is cancelled once the page has its rows.
func (c *Console) auditEntries(ctx context.Context, appID string, f auditFilter) ([]*analyticsv1.AuditEntry, int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.Audit.ListAuditEntries(ctx, &analyticsv1.ListAuditEntriesRequest{AppId: appID, From: f.From, To: f.To,
		ActorKind: f.ActorKind, ActorId: f.ActorID, TargetType: f.TargetType, TargetId: f.TargetID, Action: f.Action})
	if err != nil {
		return nil, 0, err
	}
	var entries []*analyticsv1.AuditEntry
	matched := 0
	for len(entries) <= auditShown {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, 0, err
		}
		if h := chunk.GetHead(); h != nil {
			matched = int(h.GetItemsLength())
		}
		entries = append(entries, chunk.GetItems()...)
	}
	// A stream without a head (or one counting fewer than it sent) is counted by what arrived.
	matched = max(matched, len(entries))
	return entries[:min(len(entries), auditShown)], matched, nil
}

// changeAuditRetention sets how many days the app's audit entries are kept.
func (c *Console) changeAuditRetention(w http.ResponseWriter, r *http.Request, v visit) {
	id, days, ok := posted(c, w, r, &v, appID, retentionFrom)
	if !ok {
		return
	}
	if _, err := c.AuditRetention.SetAuditRetention(v.ctx, &analyticsv1.SetAuditRetentionRequest{AppId: id, RetentionDays: days}); err != nil {
		c.fail(w, r, v, err, "set the app's audit retention")
		return
	}
	back(w, r, frame{}.AuditURL(id), "retentionSaved")
}
