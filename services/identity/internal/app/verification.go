package app

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/locale"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/convert"
	"github.com/berthhq/berth/services/identity/internal/domain"
	"github.com/berthhq/berth/services/identity/internal/domain/accountmail"
)

// VerifyPath is the hosted page a verification mail's link opens (gateway/login serves it).
const VerifyPath = "/login/verify"

// LoginOutcome is where a hosted-page form leads: URL continues the authorization request (the
// app's redirect_uri with a code), or, instead, Verification says the address must be verified
// first and names the verification whose code the "check your inbox" page takes, or
// SecondFactor names the flow of a sign-in that must prove a second factor (Enrol: enrol one
// first). RecoveryCodes are shown once beside URL after an enrolment at sign-in.
type LoginOutcome struct {
	URL           string
	Verification  string
	SecondFactor  string
	Enrol         bool
	RecoveryCodes []string
}

// ResendInput is the "resend" button of the "check your inbox" page.
type ResendInput struct {
	Params   LoginParams
	Email    string
	ClientIP string
}

// CodeInput is the code form of the "check your inbox" page.
type CodeInput struct {
	ClientID, Verification, Code string
	ClientIP                     string
}

// errVerification answers every verification that cannot be met: unknown, spent, retired,
// expired, out of attempts, of another app, or a wrong code. One answer for all, so the code form
// of a sign-up with a registered address (whose verification was never stored) looks exactly like
// that of a new one.
var errVerification = domain.ErrChallengeSpent

// verificationRequired reports whether sign-up and sign-in of a has to wait for a verified address.
func verificationRequired(a domain.App) bool {
	return a.EmailVerification == domain.VerificationRequired
}

// mailReady answers Unavailable when the service cannot mail its users (no mailer or no public
// URL to link to).
func (s *Service) mailReady() error {
	if s.mailer == nil || s.publicURL == "" {
		return fault.Unavailable(0, "email verification is not available")
	}
	return nil
}

// mailLanguage is the language of a mail to u (docs/hosted-pages.md): the user's stored
// language, else the app's default, else English. A user who just signed up has none stored.
func mailLanguage(a domain.App, u domain.User) string {
	return locale.Choose(u.Language, "", a.Branding.DefaultLanguage)
}

// continuation is the authorization request a challenge continues once met; resumedParams is its
// inverse.
func (p LoginParams) continuation() domain.Continuation {
	return domain.Continuation{ClientID: p.ClientID, RedirectURI: p.RedirectURI, State: p.State, Nonce: p.Nonce, Scope: p.Scope, Service: p.Service}
}

// newVerification mints a verification challenge of u. It is the work both sign-up outcomes do,
// stored only when its mail goes out.
func (s *Service) newVerification(a domain.App, userID, email string, cont domain.Continuation) (domain.Challenge, domain.ChallengeSecrets, error) {
	return domain.NewChallenge(domain.PurposeVerifyEmail, a.ID, userID, email, cont, s.now(), s.pepper)
}

// sendVerification stores a fresh verification of u (retiring older ones) and mails its link and
// code. It returns the verification's id for the page's code form.
func (s *Service) sendVerification(ctx context.Context, a domain.App, u domain.User, cont domain.Continuation) (string, error) {
	c, sec, err := s.newVerification(a, u.ID, u.Email, cont)
	if err != nil {
		return "", err
	}
	msg, err := accountmail.ComposeVerify(mailLanguage(a, u), accountmail.Verify{
		To: u.Email, App: firstOf(a.Branding.DisplayName, a.Name), Link: s.publicURL + VerifyPath + "?" + url.Values{"token": {sec.Link}}.Encode(), Code: sec.Code,
	})
	if err != nil {
		return "", err
	}
	if err := s.store.CreateChallenge(ctx, c); err != nil {
		return "", err
	}
	if err := s.mailer.Send(ctx, msg); err != nil {
		return "", fault.Unavailable(0, "the verification mail could not be sent")
	}
	return c.ID, nil
}

// signUpTaken answers a sign-up with a registered address under the required policy: the same
// outcome as for a new address (a verification id, minted like a real one but never stored), and
// a mail to the address's owner saying someone tried, with a link to sign in.
func (s *Service) signUpTaken(ctx context.Context, a domain.App, u domain.User, p LoginParams) (LoginOutcome, error) {
	c, _, err := s.newVerification(a, u.ID, u.Email, p.continuation())
	if err != nil {
		return LoginOutcome{}, err
	}
	state, err := domain.NewState()
	if err != nil {
		return LoginOutcome{}, err
	}
	// A fresh state, not the request's: the link must carry nothing the visitor chose, and
	// redirect_uri is one the app registered.
	signIn := s.publicURL + LoginPath + "?" + url.Values{
		"client_id": {a.ID}, "redirect_uri": {p.RedirectURI}, "state": {state}, "type": {"signIn"},
	}.Encode()
	msg, err := accountmail.ComposeRegistered(mailLanguage(a, u), accountmail.Registered{To: u.Email, App: firstOf(a.Branding.DisplayName, a.Name), SignInLink: signIn})
	if err != nil {
		return LoginOutcome{}, err
	}
	if err := s.mailer.Send(ctx, msg); err != nil {
		return LoginOutcome{}, fault.Unavailable(0, "the verification mail could not be sent")
	}
	return LoginOutcome{Verification: c.ID}, nil
}

// resendLimits count a resend under the address (of the app) and under the client address.
func resendLimits(l LoginLimits) mailLimits {
	return mailLimits{kind: "resend", perEmail: l.ResendsPerEmail, perIP: l.ResendsPerIP, window: l.ResendWindow, refusal: errTooManyResends}
}

func errTooManyResends(window time.Duration) error {
	return fault.Exhausted(window, "too many verification mails; try again in %d minutes", int(window.Minutes()))
}

// ResendVerification mails a fresh link and code to an unverified, active user of the app with
// the address, continuing the request of the page. Every other address (unknown, verified, frozen,
// deleted) gets the same answer and no mail; each request counts against the address's and the
// client address's limits, whatever the address.
//
// The account page's own resend names its callback without a state: it continues nothing, and its
// link and code only confirm the address. The page's sign-in is bound to one browser's
// short-lived cookie holding the state, so a continuation without one could never be taken there.
// (The "check your inbox" page of the account page's sign-in carries that sign-in's state and
// continues it as usual.)
func (s *Service) ResendVerification(ctx context.Context, in ResendInput) (LoginOutcome, error) {
	a, err := s.enabledLoginApp(ctx, in.Params)
	if err != nil {
		return LoginOutcome{}, err
	}
	cont := in.Params.continuation()
	if s.accountCallback(in.Params.RedirectURI) && in.Params.State == "" {
		cont = domain.Continuation{}
	}
	email := strings.TrimSpace(in.Email)
	if !domain.IsEmail(email) {
		return LoginOutcome{}, fault.Invalid("email", "must be a valid email address")
	}
	if err := s.mailReady(); err != nil {
		return LoginOutcome{}, err
	}
	if _, err := s.reserve(ctx, resendLimits(s.limits).of(s.now(), a.ID, email, addressKey(clientIP(in.ClientIP)))...); err != nil {
		return LoginOutcome{}, err
	}
	u, err := s.store.GetUserByEmail(ctx, a.ID, email)
	if err != nil && !errors.Is(err, domain.ErrNotFound) {
		return LoginOutcome{}, err
	}
	if err != nil || u.EmailVerified || inactive(u) != nil {
		c, _, err := s.newVerification(a, "", email, cont)
		if err != nil {
			return LoginOutcome{}, err
		}
		return LoginOutcome{Verification: c.ID}, nil
	}
	id, err := s.sendVerification(ctx, a, u, cont)
	if err != nil {
		return LoginOutcome{}, err
	}
	return LoginOutcome{Verification: id}, nil
}

// VerifyEmailCode meets a verification by its code. A wrong code counts against the
// verification; every failure gets errVerification. On success it returns where the browser
// goes: the continued authorization request, or "" when there is none.
func (s *Service) VerifyEmailCode(ctx context.Context, in CodeInput) (string, error) {
	appID := domain.CanonicalID(strings.TrimSpace(in.ClientID))
	id := domain.CanonicalID(strings.TrimSpace(in.Verification))
	if !domain.IsUUID(appID) || !domain.IsUUID(id) {
		return "", errVerification
	}
	c, err := s.store.GetChallenge(ctx, appID, id)
	if errors.Is(err, domain.ErrNotFound) {
		return "", errVerification
	}
	if err != nil {
		return "", err
	}
	if c.Purpose != domain.PurposeVerifyEmail {
		return "", errVerification
	}
	if !domain.WellFormedCode(in.Code) || !c.CodeMatches(in.Code, s.pepper) {
		_, err := s.store.RecordWrongCode(ctx, appID, id, s.now())
		if err != nil && !errors.Is(err, domain.ErrChallengeSpent) && !errors.Is(err, domain.ErrNotFound) {
			return "", err
		}
		return "", errVerification
	}
	return s.meetVerification(ctx, c, in.ClientIP)
}

// VerifyEmailLink meets a verification by its link's secret.
func (s *Service) VerifyEmailLink(ctx context.Context, token, ip string) (string, error) {
	token = strings.TrimSpace(token)
	if !domain.WellFormedSecret(token) {
		return "", errVerification
	}
	c, err := s.store.GetChallengeByLink(ctx, domain.HashSecret(token))
	if errors.Is(err, domain.ErrNotFound) {
		return "", errVerification
	}
	if err != nil {
		return "", err
	}
	if c.Purpose != domain.PurposeVerifyEmail {
		return "", errVerification
	}
	return s.meetVerification(ctx, c, ip)
}

// DescribeVerification answers the app of a live verification link without meeting it: the
// pages the link opens show the app's name and branding. Every failure is errVerification, the
// answer VerifyEmailLink gives the same link.
func (s *Service) DescribeVerification(ctx context.Context, token string) (domain.App, error) {
	token = strings.TrimSpace(token)
	if !domain.WellFormedSecret(token) {
		return domain.App{}, errVerification
	}
	c, err := s.store.GetChallengeByLink(ctx, domain.HashSecret(token))
	if errors.Is(err, domain.ErrNotFound) {
		return domain.App{}, errVerification
	}
	if err != nil {
		return domain.App{}, err
	}
	if c.Purpose != domain.PurposeVerifyEmail || !c.Live(s.now()) {
		return domain.App{}, errVerification
	}
	return s.store.GetApp(ctx, c.AppID)
}

// meetVerification marks the challenge's address verified, with the email-verified and
// user-updated events, then continues the authorization request it carries exactly as a sign-in
// does. A user whose address changed since the mail, or who was deleted, cannot meet it.
func (s *Service) meetVerification(ctx context.Context, c domain.Challenge, ip string) (string, error) {
	now := s.now()
	u, err := s.store.MeetChallenge(ctx, c.AppID, c.ID, now, func(c domain.Challenge, u *domain.User) (ChallengeEffect, error) {
		if u.Deleted || !strings.EqualFold(u.Email, c.Email) {
			return ChallengeEffect{}, errVerification
		}
		if u.EmailVerified {
			return ChallengeEffect{}, nil
		}
		u.EmailVerified, u.UpdatedAt = true, now
		verified, err := event(identityv1.EventUserEmailVerified, u.AppID, &identityv1.EmailVerified{
			AppId: u.AppID, UserId: u.ID, TenantRef: u.TenantID, Email: u.Email, At: convert.Timestamp(now),
		})
		if err != nil {
			return ChallengeEffect{}, err
		}
		updated, err := event(identityv1.EventUserUpdated, u.AppID, convert.UserChanged(*u, []string{"emailVerified"}))
		if err != nil {
			return ChallengeEffect{}, err
		}
		return ChallengeEffect{Events: append(verified, updated...)}, nil
	})
	if errors.Is(err, domain.ErrNotFound) {
		return "", errVerification
	}
	if err != nil {
		return "", err
	}
	if c.Continue.Empty() {
		return "", nil
	}
	// The request is checked again: the app may have been disabled or its redirect URI removed
	// since the mail went out.
	p := resumedParams(c)
	a, err := s.enabledLoginApp(ctx, p)
	if err != nil {
		return "", err
	}
	if err := inactive(u); err != nil {
		return "", err
	}
	// The verification forms do not pass the browser's user agent: the session records none.
	return s.signInAfterMail(ctx, a, u, p, browser{ip: clientIP(ip)})
}
