package contract

import (
	"fmt"
	"html"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"testing"

	"github.com/berthhq/berth/pkg/testkit"
)

// auditPage is one page of the demo app's audit log through the REST route: its entries' ids and
// its next cursor ("" when the data has none).
func (e *env) auditPage(t *testing.T, q url.Values) (ids []string, next string) {
	t.Helper()
	data := e.do(http.MethodGet, "/v1/apps/"+e.demo.AppID+"/audit-log?"+q.Encode(), e.read(), "").ok(t, http.StatusOK).(map[string]any)
	items := data["items"].([]any)
	if data["itemsLength"] != float64(len(items)) {
		t.Fatalf("itemsLength %v with %d items", data["itemsLength"], len(items))
	}
	for _, it := range items {
		assertShape(t, "audit entry", it, auditEntryFields)
		ids = append(ids, it.(map[string]any)["id"].(string))
	}
	if n, ok := data["next"]; ok {
		if next, _ = n.(string); next == "" {
			t.Fatalf("data carries an empty next: %v", data)
		}
	}
	return ids, next
}

var (
	auditRow   = regexp.MustCompile(`data-entry="([^"]+)"`)
	olderEntry = regexp.MustCompile(`<a href="([^"]*)" id="older-page"`)
)

// 55 changes of one user are paged through REST 20 at a time (the cursor of each page leads to
// the next, the last page has no next) and through the console's audit page 50 at a time (its
// "Older entries" link carries the filter and the cursor): either way every entry shows exactly
// once, in the order of the whole list; a cursor no page handed out and a limit over 1000 are
// refused in each one's own envelope, and another project's member gets no page of it.
func TestTheAuditLogPagesThroughRESTAndTheConsoleShowingEveryEntryOnce(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			user := e.demo.UserIDs[1]
			const changes = 55
			for i := range changes {
				e.do(http.MethodPut, "/v1/users/"+user, e.write(), fmt.Sprintf(`{"user":{"nickname":"paged-%d"}}`, i)).ok(t, http.StatusOK)
			}
			filter := url.Values{"from": {day(-1)}, "to": {day(1)}, "action": {"identity.user.updated"}, "targetId": {user}}
			var all []string
			testkit.Eventually(t, "every change reaches the audit log", func() bool {
				all, _ = e.auditPage(t, filter)
				return len(all) == changes
			})

			// REST, 20 a page.
			var walked []string
			var sizes []int
			q := url.Values{}
			for k, v := range filter {
				q[k] = v
			}
			q.Set("limit", "20")
			for {
				if len(sizes) > 3 {
					t.Fatalf("the REST pages never end: %v", sizes)
				}
				ids, next := e.auditPage(t, q)
				walked, sizes = append(walked, ids...), append(sizes, len(ids))
				if next == "" {
					break
				}
				q.Set("before", next)
			}
			if !slices.Equal(walked, all) || !slices.Equal(sizes, []int{20, 20, 15}) {
				t.Fatalf("REST pages of %v walked %v\nwant %v", sizes, walked, all)
			}
			for _, bad := range []url.Values{{"limit": {"1001"}}, {"limit": {"-1"}}, {"limit": {"20"}, "before": {"bm90IGEgY3Vyc29y"}}} {
				for k, v := range filter {
					bad[k] = v
				}
				e.do(http.MethodGet, "/v1/apps/"+e.demo.AppID+"/audit-log?"+bad.Encode(), e.read(), "").fails(t, http.StatusBadRequest)
			}

			// The console, 50 a page.
			owner := e.consoleSignIn(t, e.demo.Console.Email, e.demo.Console.Password)
			page := "/console/apps/" + e.demo.AppID + "/audit?" + url.Values{"from": {day(-1)}, "to": {day(1)},
				"action": {"identity.user.updated"}, "target_id": {user}}.Encode()
			walked, sizes = nil, nil
			for link := page; link != ""; {
				if len(sizes) > 2 {
					t.Fatalf("the console's pages never end: %v", sizes)
				}
				p := owner.get(link)
				if p.status != http.StatusOK {
					t.Fatalf("%s = %d:\n%s", link, p.status, p.body)
				}
				rows := auditRow.FindAllStringSubmatch(p.body, -1)
				for _, r := range rows {
					walked = append(walked, r[1])
				}
				sizes = append(sizes, len(rows))
				link = ""
				if m := olderEntry.FindStringSubmatch(p.body); m != nil {
					link = html.UnescapeString(m[1])
				}
			}
			if !slices.Equal(walked, all) || !slices.Equal(sizes, []int{50, 5}) {
				t.Fatalf("console pages of %v walked %v\nwant %v", sizes, walked, all)
			}
			if p := owner.get(page + "&before=bm90IGEgY3Vyc29y"); p.status != http.StatusBadRequest || auditRow.MatchString(p.body) {
				t.Errorf("a forged cursor on the console = %d, want 400 with no entries", p.status)
			}
			outsider := e.consoleMember(t, e.other.ProjectID, "audit-pages-outsider@example.com")
			if p := outsider.get(page); p.status != http.StatusForbidden || auditRow.MatchString(p.body) {
				t.Errorf("another project's member: %s = %d, want 403 with no entries", page, p.status)
			}
		})
	}
}
