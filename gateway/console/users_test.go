package console

import (
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

var (
	usersURL = frame{}.UsersURL(testApp)
	userURL  = frame{}.UserURL(testApp, userID)
)

func TestTheUsersPageSearchesWithTheMembersTokenAndLinksTheNextPageWithItsCursor(t *testing.T) {
	b, u := newUsersConsole(t)
	u.next = nextCursor
	rec := b.get(usersURL + "?q=+ADA.l+")
	body := rec.Body.String()
	if rec.Code != http.StatusOK || !strings.Contains(body, `data-user="`+userID+`"`) || !strings.Contains(body, `href="`+userURL+`"`) ||
		!strings.Contains(body, "Ada &lt;Lovelace&gt;") || !strings.Contains(body, "active<br>address verified") || !strings.Contains(body, "2026-11-27 11:00 UTC") {
		t.Fatalf("search = %d:\n%s", rec.Code, body)
	}
	next := `href="` + usersURL + "?after=" + nextCursor + "&amp;q=ADA.l" + `"`
	if !strings.Contains(body, next) || strings.Contains(body, `id="first-page"`) {
		t.Errorf("the first page's links: want %s and no first-page link:\n%s", next, body)
	}
	rec = b.get(usersURL + "?after=" + nextCursor + "&q=ADA.l")
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "There are no more users.") ||
		!strings.Contains(rec.Body.String(), `id="first-page"`) || strings.Contains(rec.Body.String(), `id="next-page"`) {
		t.Errorf("the last page = %d:\n%s", rec.Code, rec.Body)
	}
	calls := u.received("SearchUsers")
	want := []*identityv1.SearchUsersRequest{{AppId: testApp, Query: "ADA.l"}, {AppId: testApp, Query: "ADA.l", After: nextCursor}}
	if len(calls) != len(want) {
		t.Fatalf("SearchUsers calls = %d, want %d", len(calls), len(want))
	}
	for i, call := range calls {
		if !proto.Equal(call.req, want[i]) || call.bearer != "Bearer operator-token-1" {
			t.Errorf("SearchUsers #%d = %v with %q, want %v with the member's token", i, call.req, call.bearer, want[i])
		}
	}
}

func TestAnEmptyResultSaysWhyNothingIsListed(t *testing.T) {
	for _, tc := range []struct {
		name, query, text string
	}{
		{"no match", "?q=nobody%40", "No user matches “nobody@”."},
		{"past the last page", "?q=ada&after=" + nextCursor, "There are no more users."},
		{"an app without users", "", "This app has no users yet."},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, u := newUsersConsole(t)
			if tc.query == "" {
				u.user.Profile.Deleted = true // search lists no deleted user
			}
			rec := b.get(usersURL + tc.query)
			if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), tc.text) || strings.Contains(rec.Body.String(), `id="users"`) {
				t.Errorf("= %d, want %q and no table:\n%s", rec.Code, tc.text, rec.Body)
			}
		})
	}
}

func TestTheUserPageShowsProfileFlagsTenantSessionsProvidersAndFactors(t *testing.T) {
	b, u := newUsersConsole(t)
	rec := b.get(userURL)
	body := rec.Body.String()
	if rec.Code != http.StatusOK {
		t.Fatalf("user page = %d:\n%s", rec.Code, body)
	}
	for _, want := range []string{
		`<dd id="user-email">` + userEmail, "Ada &lt;Lovelace&gt;", `<dd id="user-state">active`,
		`href="` + frame{}.TenantURL(testApp, u.user.GetTenantId()) + `" id="user-tenant"><code>` + u.user.GetTenantId() + "</code>", "198.51.100.7", "Firefox/140", `data-session="s-1"`,
		"ada@provider-b.example", "totp", "Recovery codes left: 7", `<td id="email-verified">yes`,
		`id="freeze"`, `id="send-reset"`, `id="revoke-sessions"`, `id="reset-factors"`, `id="delete"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the user page lacks %q", want)
		}
	}
	// A verified address needs no second verification mail; a live user no unfreezing.
	for _, absent := range []string{`id="resend-verification"`, `id="unfreeze"`} {
		if strings.Contains(body, absent) {
			t.Errorf("the user page offers %s", absent)
		}
	}
	if calls := u.received("GetUserDetail"); len(calls) != 1 || !proto.Equal(calls[0].req, &identityv1.UserRefRequest{AppId: testApp, UserId: userID}) {
		t.Errorf("GetUserDetail calls = %v", calls)
	}
}

func TestAFrozenUserIsOfferedUnfreezingAndADeletedOneNoAction(t *testing.T) {
	b, u := newUsersConsole(t)
	u.user.Profile.Freezed, u.user.Profile.EmailVerified = true, false
	body := b.get(userURL).Body.String()
	if !strings.Contains(body, `<dd id="user-state">frozen`) || !strings.Contains(body, `id="unfreeze"`) || strings.Contains(body, `id="freeze"`) ||
		strings.Contains(body, `id="send-reset"`) || strings.Contains(body, `id="resend-verification"`) {
		t.Errorf("a frozen user's page:\n%s", body)
	}
	u.user.Profile.Deleted = true
	body = b.get(userURL).Body.String()
	if !strings.Contains(body, `<dd id="user-state">deleted`) || strings.Contains(body, `name="action"`) {
		t.Errorf("a deleted user's page offers actions:\n%s", body)
	}
}

func TestEachUserActionCallsItsIdentityRouteAndComesBackWithItsNotice(t *testing.T) {
	ref := &identityv1.UserRefRequest{AppId: testApp, UserId: userID}
	for _, tc := range []struct {
		form   url.Values
		method string
		req    proto.Message
		target string
		notice string
	}{
		{url.Values{"action": {"freeze"}, "confirm": {"yes"}}, "SetAccessStatus",
			&identityv1.SetAccessStatusRequest{AppId: testApp, UserId: userID, AccessStatus: "0"}, userURL, "The user is frozen."},
		{url.Values{"action": {"unfreeze"}}, "SetAccessStatus",
			&identityv1.SetAccessStatusRequest{AppId: testApp, UserId: userID, AccessStatus: "1"}, userURL, "The user is unfrozen."},
		{url.Values{"action": {"revokeSessions"}, "confirm": {"yes"}}, "RevokeSessions",
			&identityv1.RevokeSessionsRequest{AppId: testApp, UserId: userID}, userURL, "Every session of the user ended."},
		{url.Values{"action": {"sendReset"}}, "SendPasswordReset", ref, userURL, "The password reset was mailed."},
		{url.Values{"action": {"resendVerification"}}, "ResendVerification", ref, userURL, "The verification mail was sent again."},
		{url.Values{"action": {"resetFactors"}, "confirm": {"yes"}}, "ResetSecondFactors",
			&identityv1.ResetSecondFactorsRequest{AppId: testApp, UserId: userID}, userURL, "The second factors were removed"},
		{url.Values{"action": {"delete"}, "confirm_email": {strings.ToUpper(userEmail)}}, "DeleteUser",
			&identityv1.DeleteUserRequest{AppId: testApp, UserId: userID}, usersURL, "The user was deleted."},
	} {
		t.Run(tc.form.Get("action"), func(t *testing.T) {
			b, u := newUsersConsole(t)
			rec := b.post(userURL, tc.form)
			location := rec.Header().Get("Location")
			if rec.Code != http.StatusSeeOther || !strings.HasPrefix(location, tc.target+"?notice=") {
				t.Fatalf("= %d %q, want a redirect to %s:\n%s", rec.Code, location, tc.target, rec.Body)
			}
			calls := u.received(tc.method)
			if len(calls) != 1 || !proto.Equal(calls[0].req, tc.req) || calls[0].bearer != "Bearer operator-token-1" {
				t.Fatalf("%s calls = %v, want one %v with the member's token", tc.method, calls, tc.req)
			}
			if page := b.get(location); !strings.Contains(page.Body.String(), tc.notice) {
				t.Errorf("after the redirect: %d, want the notice %q:\n%s", page.Code, tc.notice, page.Body)
			}
		})
	}
}

func TestDeletingRefusesAnotherAddressThanTheUsersAndDeletesNothing(t *testing.T) {
	for _, typed := range []string{"ada.lovelace@example.org", "Ada.Lovelace", "someone@example.com"} {
		b, u := newUsersConsole(t)
		rec := b.post(userURL, url.Values{"action": {"delete"}, "confirm_email": {typed}})
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "The typed address is not the user&#39;s. Nothing was deleted.") ||
			!strings.Contains(rec.Body.String(), `id="delete"`) {
			t.Errorf("typed %q: %d:\n%s", typed, rec.Code, rec.Body)
		}
		if n := len(u.received("DeleteUser")); n != 0 {
			t.Errorf("typed %q: %d deletions", typed, n)
		}
	}
}

func TestAUserActionWithoutItsConfirmationOrCSRFTokenChangesNothing(t *testing.T) {
	b, u := newUsersConsole(t)
	for _, form := range []url.Values{
		{"action": {"freeze"}}, {"action": {"revokeSessions"}, "confirm": {"no"}}, {"action": {"resetFactors"}},
		{"action": {"delete"}}, {"action": {"delete"}, "confirm_email": {"   "}}, {"action": {"wipe"}},
	} {
		rec := b.post(userURL, form)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "A value is missing or not valid.") {
			t.Errorf("%v: %d:\n%s", form, rec.Code, rec.Body)
		}
	}
	rec := b.do(http.MethodPost, userURL, url.Values{"action": {"unfreeze"}})
	if rec.Code != http.StatusForbidden {
		t.Errorf("without the CSRF token: %d", rec.Code)
	}
	for _, m := range []string{"SetAccessStatus", "RevokeSessions", "ResetSecondFactors", "DeleteUser"} {
		if n := len(u.received(m)); n != 0 {
			t.Errorf("%d %s calls from refused forms", n, m)
		}
	}
}

// Another project's app or user is identity's refusal on the problem page: the page shows its
// message and nothing of the user.
func TestARefusedUserCallIsAMessageWithoutTheUsersData(t *testing.T) {
	for _, tc := range []struct {
		method, path string
		form         url.Values
		err          codes.Code
		status       int
	}{
		{"SearchUsers", usersURL, nil, codes.PermissionDenied, http.StatusForbidden},
		{"GetUserDetail", userURL, nil, codes.PermissionDenied, http.StatusForbidden},
		{"GetUserDetail", userURL, nil, codes.NotFound, http.StatusNotFound},
		{"SetAccessStatus", userURL, url.Values{"action": {"unfreeze"}}, codes.PermissionDenied, http.StatusForbidden},
		{"SendPasswordReset", userURL, url.Values{"action": {"sendReset"}}, codes.FailedPrecondition, http.StatusConflict},
		{"ResendVerification", userURL, url.Values{"action": {"resendVerification"}}, codes.ResourceExhausted, http.StatusTooManyRequests},
		{"GetUserDetail", userURL, url.Values{"action": {"delete"}, "confirm_email": {userEmail}}, codes.PermissionDenied, http.StatusForbidden},
	} {
		t.Run(tc.method+" "+tc.err.String(), func(t *testing.T) {
			b, u := newUsersConsole(t)
			u.errs[tc.method] = status.Error(tc.err, "refused")
			rec := b.get(tc.path)
			if tc.form != nil {
				rec = b.post(tc.path, tc.form)
			}
			body := rec.Body.String()
			if rec.Code != tc.status || !strings.Contains(body, `id="problem"`) || strings.Contains(body, userEmail) {
				t.Errorf("= %d, want %d on the problem page without the user's address:\n%s", rec.Code, tc.status, body)
			}
			if n := len(u.received("DeleteUser")); n != 0 {
				t.Errorf("%d deletions", n)
			}
		})
	}
}

func TestUserPagesRefuseAPathThatNamesNoIDBeforeAnyCall(t *testing.T) {
	b, u := newUsersConsole(t)
	for path, field := range map[string]string{
		Path + "/apps/not-an-id/users":              "app",
		Path + "/apps/" + testApp + "/users/ada":    "user",
		Path + "/apps/x/users/" + userID:            "app",
		usersURL + "?q=" + url.QueryEscape("a\x00"): "q",
	} {
		rec := b.get(path)
		if rec.Code != http.StatusBadRequest || !strings.Contains(rec.Body.String(), "("+field+")") {
			t.Errorf("%s: %d, want 400 naming %s:\n%s", path, rec.Code, field, rec.Body)
		}
	}
	if n := len(u.received("SearchUsers")) + len(u.received("GetUserDetail")); n != 0 {
		t.Errorf("%d calls for malformed paths", n)
	}
}

func TestUserFormParsersRefuseBadFieldsNamingThem(t *testing.T) {
	long := strings.Repeat("a", 255)
	for _, tc := range []struct {
		name  string
		parse func(url.Values) error
		form  url.Values
		field string // "" = accepted
	}{
		{"search by prefix", search, url.Values{"q": {"ada@"}}, ""},
		{"search everyone", search, url.Values{}, ""},
		{"a query longer than an address", search, url.Values{"q": {long}}, "q"},
		{"a query with a control character", search, url.Values{"q": {"ada\x07"}}, "q"},
		{"a cursor of broken UTF-8", search, url.Values{"after": {"\xff"}}, "after"},
		{"freeze confirmed", userAction, url.Values{"action": {"freeze"}, "confirm": {"yes"}}, ""},
		{"freeze unconfirmed", userAction, url.Values{"action": {"freeze"}}, "confirm"},
		{"unfreeze", userAction, url.Values{"action": {"unfreeze"}}, ""},
		{"revoke sessions unconfirmed", userAction, url.Values{"action": {"revokeSessions"}}, "confirm"},
		{"reset factors unconfirmed", userAction, url.Values{"action": {"resetFactors"}, "confirm": {"on"}}, "confirm"},
		{"send a reset", userAction, url.Values{"action": {"sendReset"}}, ""},
		{"delete without the address", userAction, url.Values{"action": {"delete"}}, "confirm_email"},
		{"delete with a too long address", userAction, url.Values{"action": {"delete"}, "confirm_email": {long}}, "confirm_email"},
		{"delete with the address", userAction, url.Values{"action": {"delete"}, "confirm_email": {"a@example.com"}}, ""},
		{"an unknown action", userAction, url.Values{"action": {"impersonate"}}, "action"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.parse(tc.form)
			if got := refused(err); got != tc.field || (tc.field != "" && err == nil) {
				t.Errorf("refused field %q (%v), want %q", got, err, tc.field)
			}
		})
	}
}

func search(v url.Values) error     { _, err := searchFrom(v); return err }
func userAction(v url.Values) error { _, err := userActionFrom(v); return err }

func TestTheUsersPagesAnswerUnderTheStrictPolicyWithoutInlineStyleOrScript(t *testing.T) {
	b, _ := newUsersConsole(t)
	inline := regexp.MustCompile(`<style|<script>|<script [^>]*>[^<]|\sstyle=|\son[a-z]+=`)
	for _, path := range []string{usersURL, userURL} {
		rec := b.get(path)
		if csp := rec.Header().Get("Content-Security-Policy"); !strings.HasPrefix(csp, "default-src 'self'; form-action 'self';") {
			t.Errorf("%s: CSP %q", path, csp)
		}
		if rec.Code != http.StatusOK || inline.MatchString(rec.Body.String()) {
			t.Errorf("%s = %d, inline style or script: %q", path, rec.Code, inline.FindString(rec.Body.String()))
		}
	}
}
