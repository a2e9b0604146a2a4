package contract

import (
	"net/http"
	"strings"
	"testing"

	"github.com/berthhq/berth/cmd/berth/stacktest"
)

// A member of another project is refused this project's analytics page and every chart's CSV (by
// analytics, whose series route holds a member's token to their own project), and is shown
// nothing of it; the same member reads their own app's analytics, and this project's member
// reads this app's.
func TestConsoleAnalyticsOfAnotherProjectsAppAreRefusedToAMember(t *testing.T) {
	e := start(t, "memory")
	outsider := e.consoleMember(t, e.other.ProjectID, "outsider-"+stacktest.RandomHex(4)+"@example.test")
	owner := e.consoleSignIn(t, e.demo.Console.Email, e.demo.Console.Password)

	demo := "/console/apps/" + e.demo.AppID + "/analytics"
	for _, path := range []string{demo + "?days=7", demo, demo + "/sign-ins.csv?days=7", demo + "/revenue-eur.csv?days=365", demo + "/failures.csv"} {
		p := outsider.get(path)
		status, header, body := p.status, p.header, p.body
		if status != http.StatusForbidden || !strings.Contains(body, "You are not allowed to do this in this project.") {
			t.Errorf("another project's member: GET %s = %d, want the console's 403 page:\n%s", path, status, body)
		}
		if header.Get("Content-Disposition") != "" || !strings.HasPrefix(header.Get("Content-Type"), "text/html") {
			t.Errorf("another project's member: GET %s answered %q %q", path, header.Get("Content-Type"), header.Get("Content-Disposition"))
		}
		if strings.Contains(body, "chart-data") || strings.Contains(body, "<svg") || strings.Contains(body, "Demo app") {
			t.Errorf("another project's member: GET %s shows the app's analytics:\n%s", path, body)
		}
	}

	for _, who := range []struct {
		name   string
		member *consoleBrowser
		app    string
	}{{"the other project's member", outsider, e.other.AppID}, {"this project's member", owner, e.demo.AppID}} {
		page := "/console/apps/" + who.app + "/analytics"
		if p := who.member.get(page + "?days=7"); p.status != http.StatusOK || strings.Count(p.body, `class="chart-data"`) < 4 {
			t.Errorf("%s: own app's analytics = %d:\n%s", who.name, p.status, p.body)
		}
		csv := who.member.get(page + "/sign-ins.csv?days=7")
		status, header, body := csv.status, csv.header, csv.body
		if status != http.StatusOK || !strings.HasPrefix(header.Get("Content-Disposition"), "attachment;") || !strings.HasPrefix(body, "Day,Sign-ins,Active users\r\n") {
			t.Errorf("%s: own app's CSV = %d %q:\n%s", who.name, status, header.Get("Content-Disposition"), body)
		}
	}
}
