package app

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/locale"
	"github.com/berthhq/berth/services/identity/internal/domain"
	"github.com/berthhq/berth/services/identity/internal/domain/invite"
)

// Invite limits: a user may send InviteLimit invites per rolling InviteWindow, enough for
// inviting friends by hand but not for using Berth's mail server to spam.
const (
	InviteLimit  = 20
	InviteWindow = 24 * time.Hour
)

// Invite is route 23's request. ByToken says the caller used the user's own access token (the
// policy checked it names this user) rather than a write key of the app.
type Invite struct {
	UserID, Email, Language string
	ByToken                 bool
}

// SendReferralInvite is route 23: it mints a referral code linked to the user and emails the
// invitee a link to the hosted sign-up page carrying it. The code is stored before the email is
// sent and forgotten again if sending fails, so a failed invite neither counts against the limit
// nor leaves a code behind.
func (s *Service) SendReferralInvite(ctx context.Context, callerApp string, in Invite) error {
	in.UserID = domain.CanonicalID(in.UserID)
	if !domain.IsUUID(in.UserID) {
		return fault.InvalidField("userId", "must be a UUID")
	}
	email := strings.TrimSpace(in.Email)
	if !domain.IsEmail(email) {
		return fault.InvalidField("email", "must be a valid email address")
	}
	lang, err := locale.Check("language", in.Language)
	if err != nil {
		return err
	}
	if s.mailer == nil || s.publicURL == "" {
		return fault.Unavailable(0, "invites are not available")
	}
	u, err := s.store.GetUser(ctx, callerApp, in.UserID)
	if err != nil {
		return err
	}
	if u.Deleted {
		return domain.NotFound("user")
	}
	if in.ByToken && u.Frozen {
		return fault.Forbidden("user is frozen")
	}
	a, err := s.store.GetApp(ctx, callerApp)
	if err != nil {
		return err
	}
	if len(a.RedirectURIs) == 0 {
		return fault.Precondition("the app has no redirect URI to sign up to")
	}

	code, ref, err := domain.NewReferral(a.ID, u.ID, s.now())
	if err != nil {
		return err
	}
	state, err := domain.NewState()
	if err != nil {
		return err
	}
	// Route 23 requires the invitee's language, so the app's default never decides here; the
	// one rule still picks it, as for every mail.
	lang = locale.Choose(lang, "", a.Branding.DefaultLanguage)
	msg, err := invite.Compose(lang, invite.Data{
		To: email, Inviter: firstOf(u.Name, u.Email), App: firstOf(a.Branding.DisplayName, a.Name),
		Link: s.inviteLink(a, state, code, lang), Accent: a.Branding.AccentColor, Logo: a.Branding.LogoURL,
	})
	if err != nil {
		return err
	}
	if err := s.store.CreateReferral(ctx, ref, ref.CreatedAt.Add(-InviteWindow), InviteLimit); err != nil {
		if errors.Is(err, domain.ErrInviteLimit) {
			// The oldest invite in the window may be younger than that; the whole window is a
			// wait that certainly frees a slot.
			return fault.Exhausted(InviteWindow, "daily invite limit reached")
		}
		return err
	}
	if err := s.mailer.Send(ctx, msg); err != nil {
		// The request's context may be what failed; forgetting the code must not depend on it.
		if derr := s.store.DeleteReferral(context.WithoutCancel(ctx), ref.Hash); derr != nil {
			return fault.Internal(fmt.Errorf("send invite: %w; forget its code: %w", err, derr))
		}
		return fault.Unavailable(0, "the invite could not be sent")
	}
	return nil
}

// inviteLink is the hosted page's sign-up URL for app a carrying the referral code, on the
// deployment's public URL; the page opens in lang, the mail's language.
func (s *Service) inviteLink(a domain.App, state, code, lang string) string {
	q := url.Values{
		"client_id":    {a.ID},
		"type":         {"signUp"},
		"redirect_uri": {a.RedirectURIs[0]},
		"state":        {state},
		"referral":     {code},
		"language":     {lang},
	}
	return s.publicURL + LoginPath + "?" + q.Encode()
}

// referrer is the inviter a sign-up's referral code names, or "" when the code is absent,
// malformed, unknown, of another app or expired: a bad code never stops a sign-up.
func (s *Service) referrer(ctx context.Context, appID, code string) (string, error) {
	if code == "" || !domain.WellFormedSecret(code) {
		return "", nil
	}
	r, err := s.store.GetReferral(ctx, domain.HashSecret(code))
	if errors.Is(err, domain.ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if r.AppID != appID || r.Expired(s.now()) {
		return "", nil
	}
	return r.InviterID, nil
}
