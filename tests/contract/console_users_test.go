package contract

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/berthhq/berth/cmd/berth/stacktest"
)

// A member of another project gets the console's refusal page, never the data, for this project's
// users list, a user's page and every action on the user; afterwards the user is as before: not
// frozen, not deleted, no mail sent, the sessions untouched. This project's own member sees the
// user on the same pages, so the refusals are not a broken page.
func TestAMemberOfAnotherProjectGetsARefusalPageForThisProjectsUsers(t *testing.T) {
	e := start(t, "memory")
	user := e.demo.UserIDs[0]
	profile := e.do(http.MethodGet, "/v1/users/"+user, e.read(), "").ok(t, http.StatusOK).(map[string]any)
	email, _ := profile["email"].(string)
	if email == "" {
		t.Fatalf("the demo user has no email: %v", profile)
	}
	owner := e.consoleSignIn(t, e.demo.Console.Email, e.demo.Console.Password)
	outsider := e.consoleMember(t, e.other.ProjectID, "outsider-"+stacktest.RandomHex(4)+"@example.com")

	usersPath := "/console/apps/" + e.demo.AppID + "/users"
	userPath := usersPath + "/" + user
	list := usersPath + "?q=" + url.QueryEscape(email)
	for _, path := range []string{list, userPath} {
		if p := owner.get(path); p.status != http.StatusOK || !strings.Contains(p.body, email) {
			t.Fatalf("this project's member: GET %s = %d without the user:\n%s", path, p.status, p.body)
		}
	}
	sessionsBefore := strings.Count(owner.get(userPath).body, "data-session=")
	mailsBefore := e.mailsTo(email)

	refused := func(what string, p consolePage) {
		t.Helper()
		if p.status != http.StatusForbidden || !strings.Contains(p.body, `id="problem"`) || strings.Contains(p.body, email) {
			t.Errorf("another project's member: %s = %d, want 403 on the problem page without the user's address:\n%s", what, p.status, p.body)
		}
	}
	refused("the users list", outsider.get(list))
	refused("the users list without a query", outsider.get(usersPath))
	refused("the user's page", outsider.get(userPath))
	for _, form := range []url.Values{
		{"action": {"freeze"}, "confirm": {"yes"}},
		{"action": {"unfreeze"}},
		{"action": {"revokeSessions"}, "confirm": {"yes"}},
		{"action": {"sendReset"}},
		{"action": {"resendVerification"}},
		{"action": {"resetFactors"}, "confirm": {"yes"}},
		{"action": {"delete"}, "confirm_email": {email}},
	} {
		refused("POST "+form.Get("action"), outsider.post(userPath, form))
	}
	// This project's user named under the outsider's own app is no user of that app.
	if p := outsider.get("/console/apps/" + e.other.AppID + "/users/" + user); p.status != http.StatusNotFound || strings.Contains(p.body, email) {
		t.Errorf("this project's user under the other project's app = %d:\n%s", p.status, p.body)
	}

	after := e.do(http.MethodGet, "/v1/users/"+user, e.read(), "").ok(t, http.StatusOK).(map[string]any)
	if after["freezed"] != false || after["deleted"] != false {
		t.Errorf("after the refused actions the user is freezed %v, deleted %v", after["freezed"], after["deleted"])
	}
	page := owner.get(userPath)
	if n := strings.Count(page.body, "data-session="); page.status != http.StatusOK || n != sessionsBefore {
		t.Errorf("after the refused actions the user has %d sessions, had %d", n, sessionsBefore)
	}
	if n := e.mailsTo(email); n != mailsBefore {
		t.Errorf("the refused actions mailed the user %d times", n-mailsBefore)
	}
}
