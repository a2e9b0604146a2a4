package console

import (
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/berthhq/berth/pkg/reqid"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// msgDeleteMismatch answers a deletion whose typed address is not the user's.
const msgDeleteMismatch = "console.users.deleteMismatch"

// usersView is one page of an app's users, found by the search.
type usersView struct {
	frame
	App    *identityv1.App
	Search searchForm
	Users  []*identityv1.UserSummary
	Next   string // the next page's cursor, "" on the last
}

// userView is one user of an app with the actions on them; Message is a refused deletion's text.
type userView struct {
	frame
	AppID   string
	Detail  *identityv1.UserDetail
	Message string // a catalog key
}

// UsersURL is the users page of an app.
func (frame) UsersURL(appID string) string { return Path + "/apps/" + appID + "/users" }

// UserURL is one user's page.
func (f frame) UserURL(appID, userID string) string { return f.UsersURL(appID) + "/" + userID }

// PageURL is the users page showing the page after the cursor next ("" for the first page), for
// the same query.
func (v usersView) PageURL(next string) string {
	q := url.Values{}
	if next != "" {
		q.Set("after", next)
	}
	if v.Search.Query != "" {
		q.Set("q", v.Search.Query)
	}
	if len(q) == 0 {
		return v.UsersURL(v.App.GetId())
	}
	return v.UsersURL(v.App.GetId()) + "?" + q.Encode()
}

// userRef reads the path's app and user ids, checked: identity decides whether the member may see
// them.
func userRef(r *http.Request) (*identityv1.UserRefRequest, error) {
	path := url.Values{"app": {r.PathValue("app")}, "user": {r.PathValue("user")}}
	app, err := id(path, "app")
	if err != nil {
		return nil, err
	}
	user, err := id(path, "user")
	if err != nil {
		return nil, err
	}
	return &identityv1.UserRefRequest{AppId: app, UserId: user}, nil
}

// users lists an app's users matching the search (an email prefix or an id), a page at a time:
// identity's keyset cursor goes into the next page's link.
func (c *Console) users(w http.ResponseWriter, r *http.Request, v visit) {
	app, search, ok := queried(c, w, r, &v, appID, searchFrom)
	if !ok {
		return
	}
	a, ok := c.readApp(w, r, v, app)
	if !ok {
		return
	}
	page, err := c.Users.SearchUsers(v.ctx, &identityv1.SearchUsersRequest{AppId: app, Query: search.Query, After: search.After})
	if err != nil {
		c.fail(w, r, v, err, "search the app's users")
		return
	}
	c.render(w, r, http.StatusOK, "users", usersView{frame: c.frame(w, r, v.p, v.member, "console.users.title"),
		App: a, Search: search, Users: page.GetUsers(), Next: page.GetNext()})
}

// user shows one user: profile, verified flags, tenant, live sessions, linked providers and
// second factors (one GetUserDetail, which carries the sessions route ListSessions lists).
func (c *Console) user(w http.ResponseWriter, r *http.Request, v visit) {
	ref, err := userRef(r)
	if err != nil {
		c.badForm(w, r, v.p, &v, err)
		return
	}
	d, err := c.Users.GetUserDetail(v.ctx, ref)
	if err != nil {
		c.fail(w, r, v, err, "read the user")
		return
	}
	c.renderUser(w, r, v, ref, d, http.StatusOK, "")
}

// renderUser answers the user page with status and message (a catalog key, "" for none).
func (c *Console) renderUser(w http.ResponseWriter, r *http.Request, v visit, ref *identityv1.UserRefRequest, d *identityv1.UserDetail, status int, message string) {
	c.render(w, r, status, "user", userView{frame: c.frame(w, r, v.p, v.member, "console.user.title"),
		AppID: ref.GetAppId(), Detail: d, Message: message})
}

// changeUser runs one action of the user page through identity and goes back to the page (the
// users list after a deletion) with its notice.
func (c *Console) changeUser(w http.ResponseWriter, r *http.Request, v visit) {
	ref, in, ok := posted(c, w, r, &v, userRef, userActionFrom)
	if !ok {
		return
	}
	var err error
	app, user := ref.GetAppId(), ref.GetUserId()
	target := frame{}.UserURL(app, user)
	switch in.Action {
	case userFreeze, userUnfreeze:
		status := "1"
		if in.Action == userFreeze {
			status = "0" // route 16's value for freezed
		}
		_, err = c.Identity.SetAccessStatus(v.ctx, &identityv1.SetAccessStatusRequest{AppId: app, UserId: user, AccessStatus: status})
	case userRevokeSessions:
		_, err = c.Identity.RevokeSessions(v.ctx, &identityv1.RevokeSessionsRequest{AppId: app, UserId: user})
	case userSendReset:
		_, err = c.Users.SendPasswordReset(v.ctx, ref)
	case userResendVerification:
		_, err = c.Users.ResendVerification(v.ctx, ref)
	case userResetFactors:
		_, err = c.Admin.ResetSecondFactors(v.ctx, &identityv1.ResetSecondFactorsRequest{AppId: app, UserId: user})
	case userDelete:
		if !c.deletionConfirmed(w, r, v, ref, in.ConfirmEmail) {
			return
		}
		_, err = c.Identity.DeleteUser(v.ctx, &identityv1.DeleteUserRequest{AppId: app, UserId: user})
		target = frame{}.UsersURL(app)
	}
	if err != nil {
		c.fail(w, r, v, err, "change the user ("+in.Action+")")
		return
	}
	back(w, r, target, in.Action)
}

// deletionConfirmed reports whether typed is the user's address (as addresses compare, ignoring
// case). Otherwise the user page answers again with the refusal and nothing is deleted.
func (c *Console) deletionConfirmed(w http.ResponseWriter, r *http.Request, v visit, ref *identityv1.UserRefRequest, typed string) bool {
	d, err := c.Users.GetUserDetail(v.ctx, ref)
	if err != nil {
		c.fail(w, r, v, err, "read the user")
		return false
	}
	if email := d.GetProfile().GetEmail(); email != "" && strings.EqualFold(typed, email) {
		return true
	}
	c.log.InfoContext(r.Context(), "console refused", slog.String("request_id", reqid.From(r.Context())),
		slog.String("reason", "the typed address is not the user's: nothing deleted"))
	c.renderUser(w, r, v, ref, d, http.StatusBadRequest, msgDeleteMismatch)
	return false
}
