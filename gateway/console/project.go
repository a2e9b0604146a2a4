package console

import (
	"net/http"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/berthhq/berth/gateway/webpage"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// home is the member's current project with its apps and the project switcher.
func (c *Console) home(w http.ResponseWriter, r *http.Request, v visit) {
	apps, err := c.Members.ListProjectApps(v.ctx, &identityv1.ListProjectAppsRequest{ProjectId: v.member.GetProjectId()})
	if err != nil {
		c.fail(w, r, v, err, "list the project's apps")
		return
	}
	c.render(w, r, http.StatusOK, "home", homeView{frame: c.frame(w, r, v.p, v.member, "console.home.title"), Apps: apps.GetItems()})
}

// switchProject moves the session to the member's membership of another project: identity issues
// a new token; the sign-in's start still bounds the session.
func (c *Console) switchProject(w http.ResponseWriter, r *http.Request, v visit) {
	form, ok := c.readForm(w, r, v.p, &v)
	if !ok {
		return
	}
	project, err := switchFrom(form)
	if err != nil {
		c.badForm(w, r, v.p, &v, err)
		return
	}
	res, err := c.Members.SwitchProject(v.ctx, &identityv1.SwitchProjectRequest{ProjectId: project})
	if err != nil {
		c.fail(w, r, v, err, "switch the project")
		return
	}
	c.start(w, r, v.p, res, time.Unix(v.session.Started, 0))
}

// security shows the member's second factors: the TOTP factor or its enrolment, and the
// passkeys with the forms that add and remove one.
func (c *Console) security(w http.ResponseWriter, r *http.Request, v visit) {
	view := securityView{frame: c.frame(w, r, v.p, v.member, "console.security.title")}
	if c.withFactors(w, r, v, &view) {
		c.render(w, r, http.StatusOK, "security", view)
	}
}

// withFactors adds the account's factors and the ceremony of a new passkey to view. A member
// without an account (an operator token of berthctl) has neither, and a deployment without a
// public URL no ceremony: the page says passkeys cannot be added. Any other failure is answered
// (ok false).
func (c *Console) withFactors(w http.ResponseWriter, r *http.Request, v visit, view *securityView) bool {
	list, err := c.Members.ListMemberFactors(v.ctx, &emptypb.Empty{})
	if status.Code(err) == codes.FailedPrecondition {
		return true
	}
	if err != nil {
		c.fail(w, r, v, err, "list the member's second factors")
		return false
	}
	view.Factors = list.GetItems()
	ceremony, err := c.Members.StartMemberPasskeyRegistration(v.ctx, &emptypb.Empty{})
	if status.Code(err) == codes.Unavailable {
		webpage.LogFailure(c.log, r, "console: start a passkey registration", err)
		return true
	}
	if err != nil {
		c.fail(w, r, v, err, "start a passkey registration")
		return false
	}
	view.Passkey = webpage.Passkey{Options: ceremony.GetOptions(), State: ceremony.GetState()}
	return true
}

// changeSecurity changes the member's second factors. TOTP: action start shows the key, confirm
// checks the first code and the password and shows the recovery codes once. Passkeys:
// addPasskey stores the browser's new passkey under its name (the account's first second factor
// shows its recovery codes once), removePasskey removes one; both ask for the password.
func (c *Console) changeSecurity(w http.ResponseWriter, r *http.Request, v visit) {
	form, ok := c.readForm(w, r, v.p, &v)
	if !ok {
		return
	}
	view := securityView{frame: c.frame(w, r, v.p, v.member, "console.security.title")}
	switch action := form.Get("action"); action {
	case "start":
		key, err := c.Members.StartMemberTotp(v.ctx, &emptypb.Empty{})
		if err != nil {
			c.fail(w, r, v, err, "start the TOTP enrolment")
			return
		}
		c.showKey(w, r, v, view, key)
	case "confirm":
		in, err := totpFrom(form)
		if err != nil {
			c.badForm(w, r, v.p, &v, err)
			return
		}
		codes, err := c.Members.ConfirmMemberTotp(v.ctx, &identityv1.ConfirmMemberTotpRequest{Code: in.Code, CurrentPassword: in.Password})
		if err != nil {
			c.fail(w, r, v, err, "confirm the TOTP enrolment")
			return
		}
		view.Codes = &webpage.RecoveryCodes{Codes: codes.GetCodes(), Printer: v.p}
		c.render(w, r, http.StatusOK, "security", view)
	case securityRemoveTotp:
		current, err := password(form, "current_password")
		if err != nil {
			c.badForm(w, r, v.p, &v, err)
			return
		}
		if _, err := c.Members.RemoveMemberTotp(v.ctx, &identityv1.RemoveMemberTotpRequest{CurrentPassword: current}); err != nil {
			c.fail(w, r, v, err, "remove the TOTP factor")
			return
		}
		back(w, r, SecurityPath, "totpRemoved")
	case securityAddPasskey, securityRemovePasskey:
		in, err := passkeyFrom(action, form)
		if err != nil {
			c.badForm(w, r, v.p, &v, err)
			return
		}
		c.changePasskeys(w, r, v, view, action, in)
	default:
		c.badForm(w, r, v.p, &v, errField{"action"})
	}
}

// changePasskeys adds or removes a passkey. Identity checks the password, the credential and
// that the passkey is the member's own.
func (c *Console) changePasskeys(w http.ResponseWriter, r *http.Request, v visit, view securityView, action string, in passkeyForm) {
	if action == securityRemovePasskey {
		if _, err := c.Members.RemoveMemberPasskey(v.ctx, &identityv1.RemoveMemberPasskeyRequest{PasskeyId: in.ID, CurrentPassword: in.Password}); err != nil {
			c.fail(w, r, v, err, "remove a passkey")
			return
		}
		back(w, r, SecurityPath, "passkeyRemoved")
		return
	}
	codes, err := c.Members.FinishMemberPasskeyRegistration(v.ctx, &identityv1.FinishMemberPasskeyRegistrationRequest{
		Name: in.Name, Credential: in.Passkey, State: in.State, CurrentPassword: in.Password})
	if err != nil {
		c.fail(w, r, v, err, "add a passkey")
		return
	}
	if len(codes.GetCodes()) == 0 {
		back(w, r, SecurityPath, "passkeyAdded")
		return
	}
	view.Codes = &webpage.RecoveryCodes{Codes: codes.GetCodes(), Printer: v.p}
	c.render(w, r, http.StatusOK, "security", view)
}

// showKey renders the enrolment's key as a QR code and its form.
func (c *Console) showKey(w http.ResponseWriter, r *http.Request, v visit, view securityView, key *identityv1.TotpKey) {
	k, err := webpage.NewTOTPKey(key.GetOtpauthUrl(), key.GetSecret(), v.p)
	if err != nil {
		c.internal(w, r, v.p, err, "draw the TOTP key")
		return
	}
	view.Key = &k
	c.render(w, r, http.StatusOK, "security", view)
}

// members lists the project's members with the invitation form.
func (c *Console) members(w http.ResponseWriter, r *http.Request, v visit) {
	list, err := c.Members.ListProjectMembers(v.ctx, &identityv1.ListProjectMembersRequest{ProjectId: v.member.GetProjectId()})
	if err != nil {
		c.fail(w, r, v, err, "list the project's members")
		return
	}
	c.render(w, r, http.StatusOK, "members", membersView{frame: c.frame(w, r, v.p, v.member, "console.members.title"), Members: list.GetItems()})
}

// invite adds a member to the project; identity mails the invitation link.
func (c *Console) invite(w http.ResponseWriter, r *http.Request, v visit) {
	form, ok := c.readForm(w, r, v.p, &v)
	if !ok {
		return
	}
	in, err := inviteFrom(form)
	if err != nil {
		c.badForm(w, r, v.p, &v, err)
		return
	}
	if _, err := c.Members.InviteMember(v.ctx, &identityv1.InviteMemberRequest{
		ProjectId: v.member.GetProjectId(), Email: in.Email, Name: in.Name, Language: in.Language,
	}); err != nil {
		c.fail(w, r, v, err, "invite a member")
		return
	}
	back(w, r, MembersPath, "invited")
}
