package contract

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"

	"github.com/google/uuid"
)

const sessionsPassword = "correct horse battery staple"

// pageSession signs email in (or up) on the hosted page, as a browser does, and exchanges the code:
// a session whose browser the page saw.
func (e *env) pageSession(t *testing.T, typ, email string) tokens {
	t.Helper()
	res := e.pageSubmit(t, typ, email, sessionsPassword)
	loc, err := url.Parse(res.Header.Get("Location"))
	if res.StatusCode != 303 || err != nil || loc.Query().Get("code") == "" {
		t.Fatalf("hosted %s: %d, Location %q", typ, res.StatusCode, res.Header.Get("Location"))
	}
	return e.exchange(t, map[string]string{"client_id": e.demo.AppID, "grant_type": "authorization_code",
		"code": loc.Query().Get("code"), "redirect_uri": e.demo.RedirectURI})
}

// sessionItems checks a session list's /v1 data and returns its items by id.
func sessionItems(t *testing.T, data any) map[string]map[string]any {
	t.Helper()
	assertShape(t, "session list", data, map[string]string{"kind": str, "itemsLength": num, "items": arr})
	d := data.(map[string]any)
	items := d["items"].([]any)
	if d["kind"] != "session" || d["itemsLength"] != float64(len(items)) {
		t.Fatalf("session list = %v", d)
	}
	out := map[string]map[string]any{}
	for _, it := range items {
		assertShape(t, "session item", it, map[string]string{"id": str, "createdAt": str, "lastUsedAt": str,
			"clientIp": str, "userAgent": str, "appId": str, "current": boo})
		m := it.(map[string]any)
		out[m["id"].(string)] = m
	}
	return out
}

// refreshFails checks that route 1 refuses a refresh token: 400 [E4000] in the /api/v1 family.
func (e *env) refreshFails(t *testing.T, refresh string) {
	t.Helper()
	raw, _ := json.Marshal(map[string]string{"client_id": e.demo.AppID, "grant_type": "refresh_token", "refresh_token": refresh})
	e.apiFails(t, e.do("POST", "/api/v1/tokens", nil, string(raw)), 400, "[E4000]")
}

// A user's sessions through the REST edge: each route with each kind of caller, in the /v1 family.
func TestSessionsRoutesAnswerEveryCallerInTheV1Family(t *testing.T) {
	for _, backend := range []string{"memory", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			e := start(t, backend)
			e.t = t
			first := e.pageSession(t, "signUp", "sessions.user@example.com")
			second := e.pageSession(t, "signIn", "sessions.user@example.com")
			own := bearer(first.access)
			userID := e.do("GET", "/v1/users/me", own, "").ok(t, 200).(map[string]any)["id"].(string)
			stranger := e.newUser(t, "sessions.stranger@example.com")
			strangerID := e.do("GET", "/v1/users/me", bearer(stranger.access), "").ok(t, 200).(map[string]any)["id"].(string)
			path := "/v1/users/" + userID + "/sessions"

			// Listing: a read key sees both sessions, none current; the user's own token (also as
			// me) sees its own session marked current.
			byKey := sessionItems(t, e.do("GET", path, e.read(), "").ok(t, 200))
			if len(byKey) != 2 {
				t.Fatalf("sessions = %v, want two", byKey)
			}
			for id, s := range byKey {
				if s["current"] != false || s["appId"] != e.demo.AppID || s["clientIp"] != "127.0.0.1" ||
					s["userAgent"] != "Go-http-client/1.1" || s["createdAt"] == "" || s["lastUsedAt"] == "" {
					t.Errorf("session %s listed for a read key = %v", id, s)
				}
			}
			var firstID, secondID string
			for _, p := range []string{path, "/v1/users/me/sessions", "/v1/users/" + strings.ToUpper(userID) + "/sessions"} {
				firstID, secondID = "", ""
				for id, s := range sessionItems(t, e.do("GET", p, own, "").ok(t, 200)) {
					if s["current"] == true {
						firstID = id
					} else {
						secondID = id
					}
				}
				if firstID == "" || secondID == "" {
					t.Fatalf("GET %s with the user's token: want one current session of two", p)
				}
			}
			if r := e.do("GET", path, e.read(), ""); r.body.(map[string]any)["message"] != "Sessions retrieved" {
				t.Errorf("message = %v", r.body)
			}

			// Refusals of the list, each in the /v1 error envelope.
			e.do("GET", path, e.write(), "").fails(t, 403)                                     // a write key
			e.do("GET", path, nil, "").fails(t, 401)                                           // no credential
			e.do("GET", path, bearer(stranger.access), "").fails(t, 403)                       // another user's token
			e.do("GET", path, e.otherRead(), "").fails(t, 400)                                 // another app's key: no such user
			e.do("GET", "/v1/users/"+uuid.NewString()+"/sessions", e.read(), "").fails(t, 400) // unknown user
			e.do("GET", "/v1/users/not-a-uuid/sessions", e.read(), "").fails(t, 400)
			e.do("GET", "/v1/users/me/sessions", e.read(), "").fails(t, 400) // me without a token

			// Revoking one: refusals first, nothing revoked by them.
			one := path + "/" + secondID
			e.do("DELETE", one, e.read(), "").fails(t, 403)
			e.do("DELETE", one, nil, "").fails(t, 401)
			e.do("DELETE", one, bearer(stranger.access), "").fails(t, 403)
			e.do("DELETE", one, e.otherWrite(), "").fails(t, 400)
			e.do("DELETE", "/v1/users/"+strangerID+"/sessions/"+secondID, e.write(), "").fails(t, 400) // not that user's session
			e.do("DELETE", path+"/"+uuid.NewString(), e.write(), "").fails(t, 400)
			e.do("DELETE", path+"/not-a-uuid", e.write(), "").fails(t, 400)
			if got := sessionItems(t, e.do("GET", path, e.read(), "").ok(t, 200)); len(got) != 2 {
				t.Fatalf("sessions after refused revocations = %v, want both", got)
			}
			// The user's own token revokes its other session; that session's refresh token then
			// fails at the token exchange, and it is not found any more.
			if data := e.do("DELETE", "/v1/users/me/sessions/"+secondID, own, "").ok(t, 200); data != nil {
				t.Errorf("data = %v, want null", data)
			}
			e.refreshFails(t, second.refresh)
			e.do("DELETE", one, e.write(), "").fails(t, 400)
			if got := sessionItems(t, e.do("GET", path, own, "").ok(t, 200)); len(got) != 1 || got[firstID] == nil {
				t.Fatalf("sessions after revoking the second = %v, want the first alone", got)
			}

			// A refresh is a use: the session stays, and its tokens still name it.
			renewed := e.exchange(t, map[string]string{"client_id": e.demo.AppID, "grant_type": "refresh_token", "refresh_token": first.refresh, "redirect_uri": e.demo.RedirectURI})
			if s := sessionItems(t, e.do("GET", path, bearer(renewed.access), "").ok(t, 200))[firstID]; s == nil || s["current"] != true {
				t.Fatalf("after a refresh the session is %v, want it current for the renewed token", s)
			}

			// Revoking all: refusals, then a write key ends every session.
			e.do("DELETE", path, e.read(), "").fails(t, 403)
			e.do("DELETE", path, nil, "").fails(t, 401)
			e.do("DELETE", path, bearer(stranger.access), "").fails(t, 403)
			e.do("DELETE", path, e.otherWrite(), "").fails(t, 400)
			e.do("DELETE", "/v1/users/not-a-uuid/sessions", e.write(), "").fails(t, 400)
			if data := e.do("DELETE", path, e.write(), "").ok(t, 200); data != nil {
				t.Errorf("data = %v, want null", data)
			}
			e.refreshFails(t, renewed.refresh)
			if got := sessionItems(t, e.do("GET", path, e.read(), "").ok(t, 200)); len(got) != 0 {
				t.Fatalf("sessions after revoking all = %v, want none", got)
			}
			// The stranger's session is untouched; the user's own token may end its own session too.
			e.exchange(t, map[string]string{"client_id": e.demo.AppID, "grant_type": "refresh_token", "refresh_token": stranger.refresh, "redirect_uri": e.demo.RedirectURI})
			e.do("DELETE", "/v1/users/me/sessions", bearer(stranger.access), "").ok(t, 200)
		})
	}
}
