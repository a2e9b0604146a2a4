package contract

import (
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/berthhq/berth/pkg/testkit"
)

// A member of another project signed in to the console sees nothing of this project's audit log
// and cannot change how long it is kept, with a valid CSRF token and a well-formed value: the
// console asks analytics with the member's operator token, and analytics refuses it. This
// project's own member sees the change on the same page and sets the retention.
func TestAMemberOfAnotherProjectIsRefusedThisProjectsAuditLogAndItsRetention(t *testing.T) {
	e := start(t, "memory")
	user := e.demo.UserIDs[0]
	e.do(http.MethodPut, "/v1/users/"+user, e.write(), `{"user":{"nickname":"audit-contract"}}`).ok(t, http.StatusOK)

	owner := e.consoleSignIn(t, e.demo.Console.Email, e.demo.Console.Password)
	outsider := e.consoleMember(t, e.other.ProjectID, "audit-outsider@example.com")
	page := "/console/apps/" + e.demo.AppID + "/audit"
	filtered := page + "?" + url.Values{"target_id": {user}, "action": {"identity.user.updated"}}.Encode()

	testkit.Eventually(t, "the change is on this project's member's audit page", func() bool {
		p := owner.get(filtered)
		if p.status != http.StatusOK {
			t.Fatalf("this project's member: %s = %d:\n%s", filtered, p.status, p.body)
		}
		return strings.Contains(p.body, "data-entry=") && strings.Contains(p.body, "<code>nickname</code>")
	})
	for _, path := range []string{page, filtered} {
		if p := outsider.get(path); p.status != http.StatusForbidden || strings.Contains(p.body, "data-entry=") || strings.Contains(p.body, "<code>nickname</code>") {
			t.Errorf("another project's member: %s = %d, want 403 showing nothing of the log", path, p.status)
		}
	}
	if p := outsider.post(page, url.Values{"days": {"1"}}); p.status != http.StatusForbidden {
		t.Errorf("another project's member: set the retention = %d, want 403", p.status)
	}
	if p := owner.get(page); !strings.Contains(p.body, `value="365"`) {
		t.Errorf("the outsider changed the retention:\n%s", p.body)
	}
	if p := owner.post(page, url.Values{"days": {"30"}}); p.status != http.StatusSeeOther {
		t.Fatalf("this project's member: set the retention = %d:\n%s", p.status, p.body)
	}
	if p := owner.get(page); !strings.Contains(p.body, `value="30"`) {
		t.Errorf("the retention the member set is not shown:\n%s", p.body)
	}
}
