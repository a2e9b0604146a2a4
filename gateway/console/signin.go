package console

import (
	"net/http"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/types/known/emptypb"

	"github.com/berthhq/berth/gateway/login"
	"github.com/berthhq/berth/gateway/webpage"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/locale"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// showSignIn is the sign-in form; a browser with a live session goes to its home page.
func (c *Console) showSignIn(w http.ResponseWriter, r *http.Request) {
	if _, err := c.sessions.open(r); err == nil {
		http.Redirect(w, r, Path, http.StatusSeeOther)
		return
	}
	p := c.printer(w, r)
	c.render(w, r, http.StatusOK, "signIn", signInView{frame: c.frame(w, r, p, nil, "console.signIn.title")})
}

// submitSignIn checks the address and password; a member with a second factor gets its step.
func (c *Console) submitSignIn(w http.ResponseWriter, r *http.Request) {
	p := c.printer(w, r)
	form, ok := c.readForm(w, r, p, nil)
	if !ok {
		return
	}
	in, err := signInFrom(form)
	view := signInView{frame: c.frame(w, r, p, nil, "console.signIn.title"), Email: form.Get("email")}
	if err != nil {
		view.Message = msgBadCredentials
		c.render(w, r, http.StatusBadRequest, "signIn", view)
		return
	}
	res, err := c.Service.SignInMember(r.Context(), &identityv1.SignInMemberRequest{
		Email: in.Email, Password: in.Password, ClientAddress: login.ClientIP(r, c.trusted), UserAgent: login.UserAgent(r),
	})
	c.signedInAs(w, r, p, view, res, err, msgBadCredentials)
}

// submitSecondFactor finishes a sign-in with a TOTP or recovery code.
func (c *Console) submitSecondFactor(w http.ResponseWriter, r *http.Request) {
	p := c.printer(w, r)
	form, ok := c.readForm(w, r, p, nil)
	if !ok {
		return
	}
	view := signInView{frame: c.frame(w, r, p, nil, "console.secondFactor.title")}
	in, err := secondFactorFrom(form)
	if err != nil {
		if refused(err) == "challenge" {
			c.badForm(w, r, p, nil, err)
			return
		}
		view.Challenge, view.Message = form.Get("challenge"), msgBadCode
		c.renderStep(w, r, http.StatusBadRequest, view)
		return
	}
	view.Challenge = in.Challenge
	res, err := c.Service.VerifyMemberSecondFactor(r.Context(), &identityv1.VerifyMemberSecondFactorRequest{
		Challenge: in.Challenge, Code: in.Code, ClientAddress: login.ClientIP(r, c.trusted), UserAgent: login.UserAgent(r),
	})
	if status.Code(err) == codes.FailedPrecondition || status.Code(err) == codes.NotFound {
		// The challenge expired or was used: the sign-in starts again.
		view.Title, view.Challenge, view.Message = "console.signIn.title", "", msgExpired
		c.render(w, r, http.StatusUnauthorized, "signIn", view)
		return
	}
	c.signedInAs(w, r, p, view, res, err, msgBadCode)
}

// signedInAs finishes a sign-in step: a session starts, or the second factor is asked, or the
// step's form shows its refusal again.
func (c *Console) signedInAs(w http.ResponseWriter, r *http.Request, p locale.Printer, view signInView, res *identityv1.MemberSignIn, err error, wrong string) {
	if err != nil {
		f, ours := signInFailure(err, wrong)
		if ours {
			c.fail(w, r, visit{p: p}, err, "sign the member in")
			return
		}
		login.SetRetryAfter(w.Header(), f.retryAfter)
		view.Message = f.message
		c.renderStep(w, r, f.status, view)
		return
	}
	if res.GetToken() == "" && res.GetChallenge() != "" {
		view.Title, view.Challenge, view.Message = "console.secondFactor.title", res.GetChallenge(), ""
		c.renderStep(w, r, http.StatusOK, view)
		return
	}
	c.start(w, r, p, res, time.Time{})
}

// renderStep shows the sign-in form, or its second step when the view has a challenge: the code
// field and, when the account holds a passkey, "Use a passkey" with the ceremony identity bound
// to the challenge. A ceremony that cannot be started leaves the code field alone (it still
// works) and is logged.
func (c *Console) renderStep(w http.ResponseWriter, r *http.Request, code int, view signInView) {
	if view.Challenge == "" {
		c.render(w, r, code, "signIn", view)
		return
	}
	ceremony, err := c.Service.StartMemberPasskeyAssertion(r.Context(), &identityv1.MemberChallengeRequest{Challenge: view.Challenge})
	if err != nil {
		webpage.LogFailure(c.log, r, "console: start the passkey of a sign-in", err)
	} else {
		view.Passkey = webpage.Passkey{Options: ceremony.GetOptions(), State: ceremony.GetState()}
	}
	c.render(w, r, code, "secondFactor", view)
}

// submitPasskey finishes a sign-in with the passkey the browser asserted in the challenge's
// ceremony. A passkey identity cannot verify shows the step again; a spent challenge starts the
// sign-in over.
func (c *Console) submitPasskey(w http.ResponseWriter, r *http.Request) {
	p := c.printer(w, r)
	form, ok := c.readForm(w, r, p, nil)
	if !ok {
		return
	}
	in, err := passkeySignInFrom(form)
	if err != nil {
		c.badForm(w, r, p, nil, err)
		return
	}
	view := signInView{frame: c.frame(w, r, p, nil, "console.secondFactor.title"), Challenge: in.Challenge}
	res, err := c.Service.VerifyMemberPasskey(r.Context(), &identityv1.VerifyMemberPasskeyRequest{
		Challenge: in.Challenge, Passkey: in.Passkey, State: in.State, ClientAddress: login.ClientIP(r, c.trusted), UserAgent: login.UserAgent(r),
	})
	if st := status.Convert(err); st.Code() == codes.InvalidArgument && grpcx.FieldOf(st) == "challenge" {
		view.Title, view.Challenge, view.Message = "console.signIn.title", "", msgExpired
		c.render(w, r, http.StatusUnauthorized, "signIn", view)
		return
	}
	c.signedInAs(w, r, p, view, res, err, msgBadPasskey)
}

// start begins the console session of a sign-in (or a project switch, which keeps the sign-in's
// start so the absolute limit still counts from it) and goes home.
func (c *Console) start(w http.ResponseWriter, r *http.Request, p locale.Printer, res *identityv1.MemberSignIn, started time.Time) {
	expires, err := time.Parse(time.RFC3339Nano, res.GetExpiresAt())
	if res.GetToken() == "" || err != nil {
		c.internal(w, r, p, errNoSession, "start the session")
		return
	}
	if started.IsZero() {
		started = c.sessions.now()
	}
	if err := c.sessions.write(w, r, session{Token: res.GetToken(), Expires: expires.Unix(), Started: started.Unix()}); err != nil {
		c.internal(w, r, p, err, "seal the session")
		return
	}
	http.Redirect(w, r, Path, http.StatusSeeOther)
}

// signOut ends the token's session at identity and the cookie; a session already ended signs
// out all the same.
func (c *Console) signOut(w http.ResponseWriter, r *http.Request) {
	p := c.printer(w, r)
	if _, ok := c.readForm(w, r, p, nil); !ok {
		return
	}
	if s, err := c.sessions.open(r); err == nil {
		_, err := c.Members.SignOutMember(withToken(r.Context(), s.Token), &emptypb.Empty{})
		if err != nil && status.Code(err) != codes.Unauthenticated {
			c.fail(w, r, visit{p: p}, err, "sign the member out")
			return
		}
	}
	c.sessions.clear(w, r)
	back(w, r, SignInPath, "signedOut")
}

// showInvitation checks the invitation link and shows its acceptance form.
func (c *Console) showInvitation(w http.ResponseWriter, r *http.Request) {
	p := c.printer(w, r)
	token, err := invitationToken(r.URL.Query())
	if err != nil {
		c.refuse(w, r, p, nil, failure{status: http.StatusBadRequest, message: msgBadInvitation}, err.Error())
		return
	}
	inv, err := c.Service.DescribeInvitation(r.Context(), &identityv1.InvitationToken{Token: token})
	if err != nil {
		c.invitationFailed(w, r, p, err)
		return
	}
	c.render(w, r, http.StatusOK, "invitation", invitationView{frame: c.frame(w, r, p, nil, "console.invitation.title"), Token: token, Invitation: inv})
}

// acceptInvitation uses the invitation: the member's session starts (or its second factor is asked).
func (c *Console) acceptInvitation(w http.ResponseWriter, r *http.Request) {
	p := c.printer(w, r)
	form, ok := c.readForm(w, r, p, nil)
	if !ok {
		return
	}
	in, err := acceptFrom(form)
	if err != nil {
		c.badForm(w, r, p, nil, err)
		return
	}
	res, err := c.Service.AcceptInvitation(r.Context(), &identityv1.AcceptInvitationRequest{
		Token: in.Token, Name: in.Name, Password: in.Password, ClientAddress: login.ClientIP(r, c.trusted), UserAgent: login.UserAgent(r),
	})
	if err != nil {
		if status.Code(err) == codes.InvalidArgument || status.Code(err) == codes.Unauthenticated {
			// A password refused by the rules or the existing account's: the form again.
			inv, derr := c.Service.DescribeInvitation(r.Context(), &identityv1.InvitationToken{Token: in.Token})
			if derr == nil {
				f, _ := failureOf(err)
				msg := msgBadCredentials
				if status.Code(err) == codes.InvalidArgument {
					msg = passwordMessage(err, f)
				}
				c.render(w, r, http.StatusBadRequest, "invitation", invitationView{frame: c.frame(w, r, p, nil, "console.invitation.title"),
					Token: in.Token, Invitation: inv, Message: msg})
				return
			}
		}
		c.invitationFailed(w, r, p, err)
		return
	}
	view := signInView{frame: c.frame(w, r, p, nil, "console.signIn.title")}
	c.signedInAs(w, r, p, view, res, nil, msgBadCredentials)
}

// invitationFailed answers an invitation that cannot be used: unknown, used or expired are one
// message.
func (c *Console) invitationFailed(w http.ResponseWriter, r *http.Request, p locale.Printer, err error) {
	switch status.Code(err) {
	case codes.NotFound, codes.InvalidArgument, codes.FailedPrecondition, codes.PermissionDenied, codes.Unauthenticated:
		c.refuse(w, r, p, nil, failure{status: http.StatusBadRequest, message: msgBadInvitation}, "identity refused the invitation: "+status.Code(err).String())
		return
	}
	c.fail(w, r, visit{p: p}, err, "check the invitation")
}
