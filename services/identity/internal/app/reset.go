package app

import (
	"context"
	"errors"
	"log/slog"
	"net/url"
	"strings"
	"time"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/locale"
	"github.com/berthhq/berth/pkg/mail"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/convert"
	"github.com/berthhq/berth/services/identity/internal/domain"
	"github.com/berthhq/berth/services/identity/internal/domain/password"
	"github.com/berthhq/berth/services/identity/internal/domain/resetmail"
)

// ResetPath is the hosted reset page's path on the edge (gateway/recovery), where reset mails link.
const ResetPath = "/login/recover"

// ResetReason is the reason of the password-changed event a reset emits.
const ResetReason = "reset"

// mailTimeout bounds the delivery of a mail sent after its request was answered.
const mailTimeout = time.Minute

// ResetStart is the hosted reset page's email form.
type ResetStart struct {
	Params   LoginParams
	Email    string
	ClientIP string
}

// ResetProof proves control of the address: the mail's link secret, or the flow StartPasswordReset
// answered with and the mail's code. ClientID names the flow's app.
type ResetProof struct {
	Link             string
	ClientID, FlowID string
	Code             string
}

// ResetCompletion is the new-password form.
type ResetCompletion struct {
	Proof     ResetProof
	Password  string
	ClientIP  string
	UserAgent string // the browser's, recorded on the session the reset signs in
}

// StartPasswordReset mails a reset link and code to an active user of the app with this address
// and returns the flow whose code the page asks for next. Every well-formed address gets the same
// answer after the same work: for an address without an active user the challenge and its mail are
// made all the same, then dropped, and the flow is that unstored challenge's id, which no code
// meets. Such an address gets no mail at all (not even "there is no account here"): that mail
// would let anyone send mail in the app's name to any address. The mail is sent after the answer,
// so a mail server's delay cannot tell the two apart either.
func (s *Service) StartPasswordReset(ctx context.Context, in ResetStart) (string, error) {
	a, err := s.enabledLoginApp(ctx, in.Params)
	if err != nil {
		return "", err
	}
	email := strings.TrimSpace(in.Email)
	if !domain.IsEmail(email) {
		return "", fault.Invalid("email", "must be a valid email address")
	}
	if s.mailer == nil || s.publicURL == "" {
		return "", fault.Unavailable(0, "password reset is not available")
	}
	now := s.now()
	// Every request counts, whatever the address: counting only known ones would make the limit
	// itself tell which addresses have an account.
	if _, err := s.reserve(ctx, resetLimits(s.limits).of(now, a.ID, email, addressKey(clientIP(in.ClientIP)))...); err != nil {
		return "", err
	}
	u, err := s.store.GetUserByEmail(ctx, a.ID, email)
	if err != nil && !errors.Is(err, domain.ErrNotFound) {
		return "", err
	}
	known := err == nil && u.CheckActive() == nil
	if known {
		email = u.Email
	}
	p := in.Params
	cont := domain.Continuation{ClientID: a.ID, RedirectURI: p.RedirectURI, State: p.State, Nonce: p.Nonce, Scope: p.Scope}
	c, secrets, err := domain.NewChallenge(domain.PurposeResetPassword, a.ID, u.ID, email, cont, now, s.pepper)
	if err != nil {
		return "", err
	}
	// The user's language, else the app's default: the page asking for the mail may have spoken
	// another, but the mail is the account's.
	lang := locale.Choose(u.Language, "", a.Branding.DefaultLanguage)
	msg, err := resetmail.Compose(lang, resetmail.Data{
		To: email, App: firstOf(a.Branding.DisplayName, a.Name), Link: s.resetLink(secrets.Link, lang), Code: secrets.Code,
		Minutes: int(domain.PurposeResetPassword.TTL().Minutes()), Accent: a.Branding.AccentColor, Logo: a.Branding.LogoURL,
	})
	if err != nil {
		return "", err
	}
	if !known {
		return c.ID, nil
	}
	if err := s.store.CreateChallenge(ctx, c); err != nil {
		return "", err
	}
	s.sendDetached(ctx, msg)
	return c.ID, nil
}

// resetLimits count a reset request under its app's address and under its client address.
func resetLimits(l LoginLimits) mailLimits {
	return mailLimits{kind: "reset", perEmail: l.Resets, perIP: l.ResetsPerIP, window: l.ResetWindow, refusal: errTooManyResets}
}

func errTooManyResets(window time.Duration) error {
	return fault.Exhausted(window, "too many password reset requests; try again in %d minutes", int(window.Minutes()))
}

// resetLink is the hosted reset page's URL carrying the link secret and the mail's language, so
// the page speaks it; the challenge holds the authorization request to continue.
func (s *Service) resetLink(secret, lang string) string {
	return s.publicURL + ResetPath + "?" + url.Values{"token": {secret}, "language": {lang}}.Encode()
}

// sendDetached sends msg after the request is answered, so that how long the mail server takes
// does not show in the answer's time. A failure is logged (without the message: it holds the
// secrets); the page has already said a mail was sent if the address has an account.
func (s *Service) sendDetached(ctx context.Context, msg mail.Message) {
	ctx = context.WithoutCancel(ctx)
	go func() {
		ctx, cancel := context.WithTimeout(ctx, mailTimeout)
		defer cancel()
		if err := s.mailer.Send(ctx, msg); err != nil {
			slog.ErrorContext(ctx, "send password-reset mail", slog.String("error", err.Error()))
		}
	}()
}

// ResetContext is what the new-password form shows and allows: the app's name and the redirect
// URI the reset continues to.
type ResetContext struct {
	AppName, RedirectURI string
	Branding             domain.Branding
}

// CheckPasswordReset checks a proof before the page asks for the new password. A wrong code
// counts; nothing else changes.
func (s *Service) CheckPasswordReset(ctx context.Context, p ResetProof) (ResetContext, error) {
	c, err := s.resetChallenge(ctx, p)
	if err != nil {
		return ResetContext{}, err
	}
	params := resumedParams(c)
	a, err := s.enabledLoginApp(ctx, params)
	if err != nil {
		return ResetContext{}, err
	}
	return ResetContext{AppName: a.Name, RedirectURI: params.RedirectURI, Branding: a.Branding}, nil
}

// CompletePasswordReset sets the new password of the challenge's user, marks the address verified
// (the mail proved control of it), ends every session of the user in the same transaction, and
// then signs the user in exactly as the sign-in form does: the answer is the URL continuing the
// authorization request the reset started from. A frozen or deleted user cannot reset.
func (s *Service) CompletePasswordReset(ctx context.Context, in ResetCompletion) (string, error) {
	// The password's rules first: a refused password leaves the proof as it was for the retry.
	c, err := s.resetChallenge(ctx, in.Proof)
	if err != nil {
		return "", err
	}
	// The sign-up's rules, the address being the challenge's (the user's). A refused password
	// leaves the proof as it was for the retry: a right code is not counted.
	if err := password.Check(in.Password, c.Email); err != nil {
		return "", err
	}
	params := resumedParams(c)
	a, err := s.enabledLoginApp(ctx, params)
	if err != nil {
		return "", err
	}
	hash, err := s.hash(ctx, in.Password)
	if err != nil {
		return "", err
	}
	now := s.now()
	u, err := s.store.MeetChallenge(ctx, c.AppID, c.ID, now, func(_ domain.Challenge, u *domain.User) (ChallengeEffect, error) {
		verifiedNow, err := u.ResetPassword(hash, now)
		if err != nil {
			return ChallengeEffect{}, err
		}
		evs, err := event(identityv1.EventUserPasswordChanged, u.AppID, &identityv1.UserPasswordChanged{
			AppId: u.AppID, UserId: u.ID, TenantRef: u.TenantID, At: convert.Timestamp(now), Reason: ResetReason,
		})
		if err != nil {
			return ChallengeEffect{}, err
		}
		if verifiedNow {
			verified, err := event(identityv1.EventUserUpdated, u.AppID, convert.UserChanged(*u, []string{"emailVerified"}))
			if err != nil {
				return ChallengeEffect{}, err
			}
			evs = append(evs, verified...)
		}
		return ChallengeEffect{Events: evs, RevokeSessions: true,
			SessionsRevoked: sessionsRevoked(u.AppID, u.ID, domain.RevokedPasswordReset, true, now)}, nil
	})
	if err != nil {
		return "", err
	}
	return s.signInAfterMail(ctx, a, u, params, browser{ip: clientIP(in.ClientIP), userAgent: in.UserAgent})
}

// resumedParams is the authorization request a challenge continues, as the login forms carry it.
func resumedParams(c domain.Challenge) LoginParams {
	k := c.Continue
	return LoginParams{ClientID: k.ClientID, RedirectURI: k.RedirectURI, State: k.State, Nonce: k.Nonce, Scope: k.Scope, Service: k.Service}
}

// resetChallenge returns the live reset challenge the proof names. Every failure is
// domain.ErrChallengeSpent: a wrong code, a malformed one, an unknown flow (the one an address
// without an account gets), a spent, retired or expired challenge all answer alike, so a code
// tells nothing about the address either. A wrong code counts against its challenge.
func (s *Service) resetChallenge(ctx context.Context, p ResetProof) (domain.Challenge, error) {
	now := s.now()
	if p.Link != "" {
		if !domain.WellFormedSecret(p.Link) {
			return domain.Challenge{}, domain.ErrChallengeSpent
		}
		c, err := s.store.GetChallengeByLink(ctx, domain.HashSecret(p.Link))
		return liveReset(c, err, now)
	}
	appID, id := domain.CanonicalID(strings.TrimSpace(p.ClientID)), domain.CanonicalID(strings.TrimSpace(p.FlowID))
	if !domain.IsUUID(appID) || !domain.IsUUID(id) {
		return domain.Challenge{}, domain.ErrChallengeSpent
	}
	found, err := s.store.GetChallenge(ctx, appID, id)
	c, err := liveReset(found, err, now)
	if err != nil {
		return domain.Challenge{}, err
	}
	// A malformed code is a wrong one: it still costs an attempt.
	if domain.WellFormedCode(p.Code) && c.CodeMatches(p.Code, s.pepper) {
		return c, nil
	}
	if _, err := s.store.RecordWrongCode(ctx, appID, id, now); err != nil && !errors.Is(err, domain.ErrChallengeSpent) {
		return domain.Challenge{}, err
	}
	return domain.Challenge{}, domain.ErrChallengeSpent
}

// liveReset passes a found challenge that is a live password reset and answers
// domain.ErrChallengeSpent for anything else.
func liveReset(c domain.Challenge, err error, now time.Time) (domain.Challenge, error) {
	if errors.Is(err, domain.ErrNotFound) {
		return domain.Challenge{}, domain.ErrChallengeSpent
	}
	if err != nil {
		return domain.Challenge{}, err
	}
	if c.Purpose != domain.PurposeResetPassword || !c.Live(now) {
		return domain.Challenge{}, domain.ErrChallengeSpent
	}
	return c, nil
}
