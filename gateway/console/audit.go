package console

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/pkg/grpcx"
	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// AuditPath is an app's audit log page: its entries (GET, filtered by the query) and its retention
// (POST).
const AuditPath = Path + "/apps/{app}/audit"

// AuditURL is the app's audit log page, for links.
func (frame) AuditURL(appID string) string { return Path + "/apps/" + appID + "/audit" }

// auditPage is how many entries one page of the audit log shows; analytics pages by its keyset
// cursor, so a page costs the same however far back it is.
const auditPage = 50

// auditView is one page of an app's audit entries under a filter, newest first, and its retention.
// Next is the cursor of the older entries ("" on the last page); Problem is the field of a refused
// filter or cursor, whose page lists nothing.
type auditView struct {
	frame
	App         *identityv1.App
	Filter      auditFilter
	ActorKinds  []string
	TargetTypes []string
	Entries     []*analyticsv1.AuditEntry
	Next        string
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

// PageURL is the audit page under the same filter starting below the cursor before ("" for the
// newest entries).
func (v auditView) PageURL(before string) string {
	f := v.Filter
	q := url.Values{"from": {f.From}, "to": {f.To}}
	for key, value := range map[string]string{"actor_kind": f.ActorKind, "actor_id": f.ActorID, "target_type": f.TargetType,
		"target_id": f.TargetID, "action": f.Action, "before": before} {
		if value != "" {
			q.Set(key, value)
		}
	}
	return v.AuditURL(v.App.GetId()) + "?" + q.Encode()
}

// audit lists a page of the app's audit entries the query's filter matches, newest first, below
// the query's cursor. A refused filter or cursor is answered on the page itself (400), its field
// named, so it can be corrected.
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
	view.Entries, view.Next, err = c.auditEntries(v.ctx, id, view.Filter)
	if st := status.Convert(err); st.Code() == codes.InvalidArgument {
		// Analytics refused what only it checks (a cursor it never handed out): on the page, like
		// a mistyped filter.
		view.Problem = grpcx.FieldOf(st)
		c.render(w, r, http.StatusBadRequest, "audit", view)
		return
	}
	if err != nil {
		c.fail(w, r, v, err, "list the app's audit entries")
		return
	}
	c.render(w, r, http.StatusOK, "audit", view)
}

// auditEntries reads one page of the app's entries under f: at most auditPage, and the cursor of
// the entries after them, which the stream's last message carries.
func (c *Console) auditEntries(ctx context.Context, appID string, f auditFilter) ([]*analyticsv1.AuditEntry, string, error) {
	stream, err := c.Audit.ListAuditEntries(ctx, &analyticsv1.ListAuditEntriesRequest{AppId: appID, From: f.From, To: f.To,
		ActorKind: f.ActorKind, ActorId: f.ActorID, TargetType: f.TargetType, TargetId: f.TargetID, Action: f.Action,
		Limit: auditPage, Before: f.Before})
	if err != nil {
		return nil, "", err
	}
	var (
		entries []*analyticsv1.AuditEntry
		next    string
	)
	for {
		chunk, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return entries, next, nil
		}
		if err != nil {
			return nil, "", err
		}
		// A stream that broke its page would show a page that skips or repeats entries.
		if len(entries)+len(chunk.GetItems()) > auditPage || (next != "" && len(chunk.GetItems()) > 0) {
			return nil, "", errAuditPage
		}
		entries = append(entries, chunk.GetItems()...)
		if n := chunk.GetNext(); n != "" {
			next = n
		}
	}
}

// errAuditPage is a page stream that went past its limit or on after its cursor.
var errAuditPage = errors.New("the audit log answered more than one page")

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
