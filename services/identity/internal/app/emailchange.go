package app

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/locale"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/convert"
	"github.com/berthhq/berth/services/identity/internal/domain"
	"github.com/berthhq/berth/services/identity/internal/domain/emailchange"
)

// EmailChangePath is the hosted confirmation page (gateway/emailchange) the mail's link opens,
// under the deployment's public URL; the link's secret is its token query parameter.
const EmailChangePath = "/email-change"

// errEmailChangeUnavailable answers a change that needs a mail while no mailer or public URL is
// configured: the change could never be confirmed.
var errEmailChangeUnavailable = fault.Unavailable(0, "email changes need the mail service")

// UpdateUserByToken is route 18 with the user's own tenant access token. Every field but the email
// applies at once, as with a write key. A new email does not: the answer is the same whether or not
// the address belongs to another user (so the route tells nobody which addresses are registered),
// and the change waits for the new address to confirm. A free address is mailed a confirmation
// link (a challenge of PurposeChangeEmail, see ConfirmEmailChange); an address of another user of
// the app is mailed a notice that someone tried to use it, and nothing else happens. The daily
// email-change limit counts both. An invalid address is refused as with a write key: that says
// nothing about any account.
func (s *Service) UpdateUserByToken(ctx context.Context, callerApp, userID string, patch domain.UserPatch) error {
	if patch.Email == nil || !domain.IsEmail(*patch.Email) {
		return s.UpdateUser(ctx, callerApp, userID, patch)
	}
	userID = domain.CanonicalID(userID)
	if !domain.IsUUID(userID) {
		return fault.InvalidField("userId", "must be a UUID")
	}
	u, err := s.store.GetUser(ctx, callerApp, userID)
	if err != nil {
		return err
	}
	newEmail := strings.TrimSpace(*patch.Email)
	if u.Deleted || strings.EqualFold(newEmail, u.Email) {
		return s.UpdateUser(ctx, callerApp, userID, patch) // not found, or no change of address
	}
	if s.mailer == nil || s.publicURL == "" {
		return errEmailChangeUnavailable
	}
	a, err := s.store.GetApp(ctx, callerApp)
	if err != nil {
		return err
	}
	attempt, err := s.reserveEmailChange(ctx, callerApp, userID, patch)
	if err != nil {
		return err
	}
	// The other fields first: an invalid one refuses the whole request before any mail goes out.
	rest := patch
	rest.Email = nil // so UpdateUser neither counts nor applies it
	if err := s.UpdateUser(ctx, callerApp, userID, rest); err != nil {
		s.release(ctx, attempt)
		return err
	}
	if err := s.mailEmailChange(ctx, a, u, newEmail); err != nil {
		s.release(ctx, attempt) // no mail went out: nothing was tried
		return err
	}
	return nil
}

// mailEmailChange mails newEmail the confirmation link of a new challenge, or, when the address
// belongs to another live user of the app, the notice that someone tried to use it. Both paths
// look up the address and send one mail, so their answers take about the same time.
func (s *Service) mailEmailChange(ctx context.Context, a domain.App, u domain.User, newEmail string) error {
	owner, err := s.store.GetUserByEmail(ctx, a.ID, newEmail)
	switch {
	case err == nil && !owner.Deleted:
		// The owner's language, not the asker's: the mail is for the owner.
		return s.sendMail(ctx, emailchange.Taken, a, owner.Language, newEmail, "")
	case err != nil && !errors.Is(err, domain.ErrNotFound):
		return err
	}
	c, secrets, err := domain.NewChallenge(domain.PurposeChangeEmail, a.ID, u.ID, newEmail, domain.Continuation{}, s.now(), s.pepper)
	if err != nil {
		return fault.Internal(err)
	}
	if err := s.store.CreateChallenge(ctx, c); err != nil {
		return err
	}
	link := s.publicURL + EmailChangePath + "?" + url.Values{"token": {secrets.Link}}.Encode()
	return s.sendMail(ctx, emailchange.Confirm, a, u.Language, newEmail, link)
}

// sendMail composes one of the email-change mails of app a to the address to, in the recipient's
// stored language (else the app's default) and the app's branding, and sends it; a failed
// delivery is Unavailable.
func (s *Service) sendMail(ctx context.Context, kind emailchange.Kind, a domain.App, recipientLanguage, to, link string) error {
	msg, err := emailchange.Compose(kind, locale.Choose(recipientLanguage, "", a.Branding.DefaultLanguage), emailchange.Data{
		To: to, App: firstOf(a.Branding.DisplayName, a.Name), Link: link, Accent: a.Branding.AccentColor, Logo: a.Branding.LogoURL,
	})
	if err != nil {
		return fault.Internal(err)
	}
	if err := s.mailer.Send(ctx, msg); err != nil {
		slog.WarnContext(ctx, "email-change mail not sent", slog.String("mail", string(kind)), slog.String("error", err.Error()))
		return fault.Unavailable(0, "the confirmation mail could not be sent; try again later")
	}
	return nil
}

// EmailChange is what the confirmation page shows: the app (its name and branding) and the new
// address.
type EmailChange struct {
	App   domain.App
	Email string
}

// DescribeEmailChange checks a confirmation link without using it: the page shows a button, and
// only its POST confirms, so a mail scanner that opens links changes nothing. An unknown, used,
// retired or expired link answers domain.ErrChallengeSpent, all alike.
func (s *Service) DescribeEmailChange(ctx context.Context, link string) (EmailChange, error) {
	c, err := s.liveEmailChange(ctx, link)
	if err != nil {
		return EmailChange{}, err
	}
	a, err := s.store.GetApp(ctx, c.AppID)
	if err != nil {
		return EmailChange{}, err
	}
	return EmailChange{App: a, Email: c.Email}, nil
}

// ConfirmEmailChange uses a confirmation link: in one transaction the challenge is spent and the
// user's address becomes the new one, verified, with a user.updated and a user.email_changed
// event. The old address is then told of the change. An address another user took since the mail
// went out answers like a spent link, and the change does not happen.
func (s *Service) ConfirmEmailChange(ctx context.Context, link string) (EmailChange, error) {
	c, err := s.liveEmailChange(ctx, link)
	if err != nil {
		return EmailChange{}, err
	}
	a, err := s.store.GetApp(ctx, c.AppID)
	if err != nil {
		return EmailChange{}, err
	}
	var previous domain.User
	now := s.now()
	_, err = s.store.MeetChallenge(ctx, c.AppID, c.ID, now, func(c domain.Challenge, u *domain.User) (ChallengeEffect, error) {
		if c.Purpose != domain.PurposeChangeEmail || u.Deleted {
			return ChallengeEffect{}, domain.ErrChallengeSpent
		}
		previous = *u
		changed := u.ConfirmEmail(c.Email, now)
		evs, err := userChangeEvents(*u, previous.Email, changed, now)
		return ChallengeEffect{Events: evs}, err
	})
	switch {
	case errors.Is(err, domain.ErrEmailTaken):
		return EmailChange{}, domain.ErrChallengeSpent
	case err != nil:
		return EmailChange{}, err
	}
	if !strings.EqualFold(previous.Email, c.Email) {
		// The change is done whatever happens to this mail; a failure is only logged.
		_ = s.sendMail(context.WithoutCancel(ctx), emailchange.Changed, a, previous.Language, previous.Email, "")
	}
	return EmailChange{App: a, Email: c.Email}, nil
}

// liveEmailChange finds the live email-change challenge of a link.
func (s *Service) liveEmailChange(ctx context.Context, link string) (domain.Challenge, error) {
	if !domain.WellFormedSecret(link) {
		return domain.Challenge{}, domain.ErrChallengeSpent
	}
	c, err := s.store.GetChallengeByLink(ctx, domain.HashSecret(link))
	switch {
	case errors.Is(err, domain.ErrNotFound):
		return domain.Challenge{}, domain.ErrChallengeSpent
	case err != nil:
		return domain.Challenge{}, err
	case c.Purpose != domain.PurposeChangeEmail || !c.Live(s.now()):
		return domain.Challenge{}, domain.ErrChallengeSpent
	}
	return c, nil
}

// userChangeEvents is the events of a change of user u (the user fields in changed; previous is
// its address before): user.updated, and user.email_changed when the address changed, verified or
// not. No change, no events.
func userChangeEvents(u domain.User, previous string, changed []string, at time.Time) ([]events.Event, error) {
	if len(changed) == 0 {
		return nil, nil
	}
	evs, err := event(identityv1.EventUserUpdated, u.AppID, convert.UserChanged(u, changed))
	if err != nil || !slices.Contains(changed, "email") {
		return evs, err
	}
	emailEv, err := event(identityv1.EventUserEmailChanged, u.AppID, &identityv1.UserEmailChanged{
		AppId: u.AppID, UserId: u.ID, TenantRef: u.TenantID, Email: u.Email, PreviousEmail: previous,
		Verified: u.EmailVerified, At: at.UTC().Format(time.RFC3339),
	})
	if err != nil {
		return nil, err
	}
	return append(evs, emailEv...), nil
}
