package contract

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/testkit"
)

// A member of another project signed in to the console sees none of this project's events pages
// and changes nothing through any of their forms, with valid CSRF tokens and well-formed values:
// the console asks the services with the member's operator token, and they refuse it. This
// project's own member, on the same pages and forms, is served.
func TestAMemberOfAnotherProjectIsRefusedThisProjectsEventsPagesAndEveryAction(t *testing.T) {
	e := start(t, "memory")
	endpoints := "/v1/apps/" + e.demo.AppID + "/webhook-endpoints"
	const hookURL = "https://hooks.example.com/berth-contract"
	created := e.do(http.MethodPost, endpoints, e.write(), `{"url":"`+hookURL+`","events":["user.updated"]}`).ok(t, http.StatusCreated).(map[string]any)
	endpoint := endpoints + "/" + created["id"].(string)
	e.do(http.MethodPut, "/v1/users/"+e.demo.UserIDs[0], e.write(), `{"user":{"nickname":"events-contract"}}`).ok(t, http.StatusOK)
	var deliveryID string
	testkit.Eventually(t, "the change is queued for the endpoint", func() bool {
		items := e.do(http.MethodGet, endpoint+"/deliveries", e.write(), "").ok(t, http.StatusOK).(map[string]any)["items"].([]any)
		if len(items) == 0 {
			return false
		}
		deliveryID = items[0].(map[string]any)["id"].(string)
		return true
	})
	before := e.do(http.MethodGet, endpoint, e.write(), "").ok(t, http.StatusOK).(map[string]any)

	owner := e.consoleSignIn(t, e.demo.Console.Email, e.demo.Console.Password)
	outsider := e.consoleMember(t, e.other.ProjectID, "events-outsider@example.com")
	eventsPage := "/console/apps/" + e.demo.AppID + "/events"
	endpointPage := eventsPage + "/" + created["id"].(string)

	for _, page := range []string{eventsPage, endpointPage} {
		if p := owner.get(page); p.status != http.StatusOK || !strings.Contains(p.body, hookURL) {
			t.Errorf("this project's member: %s = %d, without the endpoint", page, p.status)
		}
		if p := outsider.get(page); p.status != http.StatusForbidden || strings.Contains(p.body, hookURL) {
			t.Errorf("another project's member: %s = %d, want 403 showing nothing of the endpoint", page, p.status)
		}
	}
	actions := []struct {
		page string
		form url.Values
	}{
		{eventsPage, url.Values{"action": {"create"}, "url": {"https://hooks.example.com/outsider"}, "events": {"*"}}},
		{endpointPage, url.Values{"action": {"update"}, "url": {"https://hooks.example.com/outsider"}, "events": {"*"}, "description": {"taken"}}},
		{endpointPage, url.Values{"action": {"disable"}, "confirm": {"yes"}}},
		{endpointPage, url.Values{"action": {"enable"}}},
		{endpointPage, url.Values{"action": {"rotate"}, "confirm": {"yes"}}},
		{endpointPage, url.Values{"action": {"retry"}, "delivery": {deliveryID}}},
		{endpointPage, url.Values{"action": {"recover"}, "since": {"2020-01-01T00:00"}}},
		{endpointPage, url.Values{"action": {"delete"}, "confirm": {"yes"}}},
	}
	for _, a := range actions {
		if p := outsider.post(a.page, a.form); p.status != http.StatusForbidden || strings.Contains(p.body, "whsec_") {
			t.Errorf("another project's member: %s %s = %d, want 403 without a secret", a.page, a.form.Get("action"), p.status)
		}
	}
	// Replaying a received provider call: the outsider is refused before any call is looked up;
	// this project's member is admitted and told the made-up call does not exist.
	replay := url.Values{"action": {"replay"}, "event": {uuid.NewString()}}
	if p := outsider.post(eventsPage, replay); p.status != http.StatusForbidden {
		t.Errorf("another project's member: replay = %d, want 403", p.status)
	}
	if p := owner.post(eventsPage, replay); p.status != http.StatusNotFound {
		t.Errorf("this project's member: replay of an unknown call = %d, want 404", p.status)
	}
	list := e.do(http.MethodGet, endpoints, e.write(), "").ok(t, http.StatusOK).(map[string]any)["items"].([]any)
	after := e.do(http.MethodGet, endpoint, e.write(), "").ok(t, http.StatusOK).(map[string]any)
	if len(list) != 1 || after["url"] != hookURL || after["disabled"] != false || after["updatedAt"] != before["updatedAt"] {
		t.Errorf("the outsider changed the app's endpoints: %d listed, now %v (was %v)", len(list), after, before)
	}

	// The same forms are this project's member's to use.
	for _, a := range actions[1:] {
		if p := owner.post(a.page, a.form); p.status != http.StatusSeeOther && p.status != http.StatusOK {
			t.Errorf("this project's member: %s %s = %d\n%s", a.page, a.form.Get("action"), p.status, p.body)
		}
	}
	if left := e.do(http.MethodGet, endpoints, e.write(), "").ok(t, http.StatusOK).(map[string]any)["items"].([]any); len(left) != 0 {
		t.Errorf("this project's member's delete left %d endpoints", len(left))
	}
}
