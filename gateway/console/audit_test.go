package console

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
)

var auditURL = frame{}.AuditURL(testApp)

// newAuditConsole is a signed-in browser on a console whose analytics holds audit.
func newAuditConsole(t *testing.T, audit *fakeAudit) *browser {
	t.Helper()
	c, _ := newConsole(t, newFake(), func(b *Backends) { b.Audit, b.AuditRetention = audit, audit })
	b := newBrowser(t, c)
	b.signIn()
	return b
}

func TestTheAuditPageListsTheLastSevenDaysWithWhoChangedWhichFields(t *testing.T) {
	audit := newFakeAudit(3)
	b := newAuditConsole(t, audit)
	rec := b.get(auditURL)
	page := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("audit page = %d:\n%s", rec.Code, page)
	}
	calls := audit.received("ListAuditEntries")
	if len(calls) != 1 || calls[0].bearer != "Bearer operator-token-1" {
		t.Fatalf("ListAuditEntries calls = %+v", calls)
	}
	want := &analyticsv1.ListAuditEntriesRequest{AppId: testApp, From: "2026-11-21", To: "2026-11-27", Limit: auditPage}
	if got := calls[0].req.(*analyticsv1.ListAuditEntriesRequest); got.String() != want.String() {
		t.Errorf("ListAuditEntries(%v), want the last 7 days %v", got, want)
	}
	for _, s := range []string{`data-entry="01936f2a-7c1e-7b3d-9a4f-000000000000"`, "API key (write key)", "b1c32b65-e308-4172-bb6a-9acd303c267c",
		"<code>identity.user.updated</code>", auditTarget, "<code>name</code> <code>locale</code>", "203.0.113.24", "req-2", "Berth<br><code>tenant-identity</code>",
		`value="2026-11-21"`, `value="2026-11-27"`, "kept 365 days", `name="days"`, `value="365"`} {
		if !strings.Contains(page, s) {
			t.Errorf("the audit page lacks %q:\n%s", s, page)
		}
	}
	if first, last := strings.Index(page, "000000000000"), strings.Index(page, "000000000002"); first > last {
		t.Error("the entries are not in analytics' order, newest first")
	}
	if strings.Contains(page, "console.audit.") || strings.Contains(page, `id="older-page"`) || strings.Contains(page, `id="newest-page"`) {
		t.Errorf("the page shows an untranslated key or a link to a page there is not:\n%s", page)
	}
	if got := b.get(frame{}.AppURL(testApp)).Body.String(); !strings.Contains(got, `href="`+auditURL+`" id="audit-link"`) {
		t.Error("the app page does not link to its audit log")
	}
}

func TestTheAuditFilterReachesAnalyticsAsChosenAndStaysInTheForm(t *testing.T) {
	audit := newFakeAudit(1)
	b := newAuditConsole(t, audit)
	q := url.Values{"from": {"2026-01-01"}, "to": {"2026-12-31"}, "actor_kind": {"api_key"}, "actor_id": {" b1c32b65-e308-4172-bb6a-9acd303c267c "},
		"target_type": {"user"}, "target_id": {auditTarget}, "action": {"identity.user.updated"}}
	rec := b.get(auditURL + "?" + q.Encode())
	if rec.Code != http.StatusOK {
		t.Fatalf("filtered audit page = %d:\n%s", rec.Code, rec.Body)
	}
	want := &analyticsv1.ListAuditEntriesRequest{AppId: testApp, From: "2026-01-01", To: "2026-12-31", ActorKind: "api_key",
		ActorId: "b1c32b65-e308-4172-bb6a-9acd303c267c", TargetType: "user", TargetId: auditTarget, Action: "identity.user.updated", Limit: auditPage}
	if got := audit.received("ListAuditEntries")[0].req.(*analyticsv1.ListAuditEntriesRequest); got.String() != want.String() {
		t.Errorf("ListAuditEntries(%v), want %v", got, want)
	}
	for _, s := range []string{`<option value="api_key" selected>`, `<option value="user" selected>`, `value="identity.user.updated"`, `id="target_id" name="target_id" maxlength="256" value="` + auditTarget + `"`} {
		if !strings.Contains(rec.Body.String(), s) {
			t.Errorf("the filter form lacks %q", s)
		}
	}
}

func TestABadAuditFilterIsNamedOnThePageAndNothingIsAsked(t *testing.T) {
	for _, tc := range []struct {
		name, query, field string
	}{
		{"a day that does not exist", "from=2026-02-30", "from"},
		{"a day in another format", "to=27.11.2026", "to"},
		{"from after to", "from=2026-11-28&to=2026-11-27", "from"},
		{"more than 366 days", "from=2025-11-26&to=2026-11-27", "from"},
		{"an unknown actor kind", "actor_kind=robot", "actor_kind"},
		{"an unknown target type", "target_type=table", "target_type"},
		{"an action that is no event type", "action=DROP+TABLE", "action"},
		{"an actor id over the limit", "actor_id=" + strings.Repeat("a", maxAuditID+1), "actor_id"},
		{"a target id with a control character", "target_id=a%00b", "target_id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			audit := newFakeAudit(1)
			b := newAuditConsole(t, audit)
			rec := b.get(auditURL + "?" + tc.query)
			page := rec.Body.String()
			if rec.Code != http.StatusBadRequest || !strings.Contains(page, `id="audit-problem"`) || !strings.Contains(page, "filter&#39;s "+tc.field+" is not valid") {
				t.Errorf("%s = %d, want 400 naming %s:\n%s", tc.query, rec.Code, tc.field, page)
			}
			if n := len(audit.received("ListAuditEntries")); n != 0 || strings.Contains(page, "data-entry=") {
				t.Errorf("a refused filter still listed entries (%d calls)", n)
			}
			if !strings.Contains(page, `id="filter"`) || !strings.Contains(page, `id="set-retention"`) {
				t.Error("the page with a refused filter lost its forms")
			}
		})
	}
}

// hrefs are the page's link targets with the given id, unescaped.
func hrefOf(t *testing.T, page, id string) string {
	t.Helper()
	m := regexp.MustCompile(`<a href="([^"]*)" id="` + id + `"`).FindStringSubmatch(page)
	if m == nil {
		return ""
	}
	return html.UnescapeString(m[1])
}

// 120 entries under a filter are 50, 50 and 20 a page: "Older entries" carries the filter and the
// cursor, every entry shows exactly once, the last page has no older link, and "Newest" leads back
// to the first page under the same filter.
func TestTheAuditPageWalksOlderPagesOfFiftyWithTheFilterAndSeesEveryEntryOnce(t *testing.T) {
	audit := newFakeAudit(120)
	b := newAuditConsole(t, audit)
	first := auditURL + "?" + url.Values{"from": {"2026-11-01"}, "to": {"2026-11-27"}, "actor_kind": {"system"}}.Encode()
	seen := map[string]int{}
	var rows []int
	next := first
	for next != "" {
		if len(rows) > 3 {
			t.Fatalf("the pages never end: %v", rows)
		}
		rec := b.get(next)
		page := rec.Body.String()
		if rec.Code != http.StatusOK {
			t.Fatalf("%s = %d:\n%s", next, rec.Code, page)
		}
		ids := regexp.MustCompile(`data-entry="([^"]+)"`).FindAllStringSubmatch(page, -1)
		rows = append(rows, len(ids))
		for _, m := range ids {
			seen[m[1]]++
		}
		if newest := hrefOf(t, page, "newest-page"); (len(rows) > 1) != (newest != "") || (newest != "" && newest != first) {
			t.Errorf("page %d links to the newest entries at %q, want %q on every page but the first", len(rows), newest, first)
		}
		next = hrefOf(t, page, "older-page")
	}
	if !slices.Equal(rows, []int{50, 50, 20}) {
		t.Fatalf("the pages showed %v entries, want 50, 50, 20", rows)
	}
	for _, e := range audit.entries {
		if seen[e.GetId()] != 1 {
			t.Errorf("entry %s showed %d times", e.GetId(), seen[e.GetId()])
		}
	}
	calls := audit.received("ListAuditEntries")
	for i, c := range calls {
		req := c.req.(*analyticsv1.ListAuditEntriesRequest)
		if req.GetLimit() != auditPage || req.GetActorKind() != "system" || req.GetFrom() != "2026-11-01" || (i > 0) != (req.GetBefore() != "") {
			t.Errorf("page %d asked %v, want the filter, pages of %d and the cursor after the first", i+1, req, auditPage)
		}
	}
}

// A cursor analytics never handed out is named on the page like a bad filter, with no entries.
func TestAnAuditCursorAnalyticsRefusesIsNamedOnThePage(t *testing.T) {
	b := newAuditConsole(t, newFakeAudit(3))
	rec := b.get(auditURL + "?before=forged")
	page := rec.Body.String()
	if rec.Code != http.StatusBadRequest || !strings.Contains(page, `id="audit-problem"`) || !strings.Contains(page, "filter&#39;s before is not valid") ||
		strings.Contains(page, "data-entry=") {
		t.Errorf("a forged cursor = %d, want 400 naming before:\n%s", rec.Code, page)
	}
}

func TestAMemberSetsTheAuditRetentionWithinItsBounds(t *testing.T) {
	audit := newFakeAudit(0)
	b := newAuditConsole(t, audit)
	rec := b.post(auditURL, url.Values{"days": {"90"}})
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != auditURL+"?notice=retentionSaved" {
		t.Fatalf("set retention = %d %q:\n%s", rec.Code, rec.Header().Get("Location"), rec.Body)
	}
	calls := audit.received("SetAuditRetention")
	if len(calls) != 1 || calls[0].bearer != "Bearer operator-token-1" ||
		calls[0].req.(*analyticsv1.SetAuditRetentionRequest).GetRetentionDays() != 90 || calls[0].req.(*analyticsv1.SetAuditRetentionRequest).GetAppId() != testApp {
		t.Fatalf("SetAuditRetention calls = %+v", calls)
	}
	if page := b.get(auditURL + "?notice=retentionSaved").Body.String(); !strings.Contains(page, "kept 90 days") || !strings.Contains(page, "retention was set") {
		t.Errorf("the page after the change does not show it:\n%s", page)
	}
	for _, days := range []string{"0", "3651", "-5", "90.5", "+90", "090", "", "ninety", "99999999999"} {
		if rec := b.post(auditURL, url.Values{"days": {days}}); rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "(days)") {
			t.Errorf("days=%q = %d, want 400 naming days", days, rec.Code)
		}
	}
	noToken := b.do(http.MethodPost, auditURL, url.Values{"days": {"30"}})
	if noToken.Code != http.StatusForbidden {
		t.Errorf("a retention form without its CSRF token = %d, want 403", noToken.Code)
	}
	if n := len(audit.received("SetAuditRetention")); n != 1 {
		t.Errorf("refused forms reached analytics: %d calls", n)
	}
}

func TestARefusedAuditCallShowsTheRefusalAndNoEntries(t *testing.T) {
	denied := status.Error(codes.PermissionDenied, "not this project's app")
	list := newFakeAudit(2)
	list.listErr = denied
	if rec := newAuditConsole(t, list).get(auditURL); rec.Code != http.StatusForbidden || strings.Contains(rec.Body.String(), "data-entry=") ||
		!strings.Contains(rec.Body.String(), `id="problem"`) {
		t.Errorf("a refused list = %d:\n%s", rec.Code, rec.Body)
	}
	retention := newFakeAudit(2)
	retention.retentionErr = denied
	b := newAuditConsole(t, retention)
	if rec := b.get(auditURL); rec.Code != http.StatusForbidden || strings.Contains(rec.Body.String(), "data-entry=") {
		t.Errorf("a refused retention read = %d:\n%s", rec.Code, rec.Body)
	}
	if rec := b.post(auditURL, url.Values{"days": {"30"}}); rec.Code != http.StatusForbidden || !strings.Contains(rec.Body.String(), `id="problem"`) {
		t.Errorf("a refused retention change = %d:\n%s", rec.Code, rec.Body)
	}
}

func TestTheAuditPageAnswersUnderTheStrictPolicyWithoutInlineStyleOrScript(t *testing.T) {
	b := newAuditConsole(t, newFakeAudit(3))
	inline := regexp.MustCompile(`<style|<script>|<script [^>]*>[^<]|\sstyle=|\son[a-z]+=`)
	for _, path := range []string{auditURL, auditURL + "?from=bad"} {
		rec := b.get(path)
		if inline.MatchString(rec.Body.String()) || !strings.HasPrefix(rec.Header().Get("Content-Security-Policy"), "default-src 'self'") {
			t.Errorf("%s = %d, CSP %q, inline style or script: %q", path, rec.Code, rec.Header().Get("Content-Security-Policy"), inline.FindString(rec.Body.String()))
		}
	}
}
