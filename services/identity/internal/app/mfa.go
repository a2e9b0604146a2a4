package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"

	"github.com/pquerna/otp"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/fault"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/domain"
	"github.com/berthhq/berth/services/identity/internal/domain/accountmail"
)

// SetAppMFA sets the app's second-factor policy ("off", "optional" or "required"). It applies to
// sign-ins from then on; stored factors are kept under "off". Setting the current policy again
// changes nothing.
func (s *Service) SetAppMFA(ctx context.Context, appID, policy string) (domain.App, error) {
	if policy == "" {
		return domain.App{}, fault.InvalidField("policy", "must be %q, %q or %q", domain.MFAOff, domain.MFAOptional, domain.MFARequired)
	}
	p, err := domain.ParseMFAPolicy("policy", policy)
	if err != nil {
		return domain.App{}, err
	}
	return s.store.UpdateApp(ctx, domain.CanonicalID(appID), func(a *domain.App) ([]events.Event, error) {
		if a.MFA == p {
			return nil, nil
		}
		// No event: nothing outside identity holds the policy.
		a.MFA, a.UpdatedAt = p, s.now()
		return nil, nil
	})
}

// SetAppPasskeySignIn sets whether the app's users may sign in with a passkey instead of the
// password. Setting the current value again changes nothing.
func (s *Service) SetAppPasskeySignIn(ctx context.Context, appID string, enabled bool) (domain.App, error) {
	return s.store.UpdateApp(ctx, domain.CanonicalID(appID), func(a *domain.App) ([]events.Event, error) {
		if a.PasskeySignIn != enabled {
			// No event: nothing outside identity holds the setting.
			a.PasskeySignIn, a.UpdatedAt = enabled, s.now()
		}
		return nil, nil
	})
}

// Answers of the second step. A flow that is unknown, spent, expired or out of attempts is one
// answer: the page then starts the sign-in again.
var (
	errFlowSpent = fault.Invalid("flow", "this sign-in expired; sign in again")
	errWrongCode = fault.Invalid("code", "this code is not correct")
	errMFAOff    = fault.Precondition("this app does not use second factors")
)

// secondStep says whether a sign-in of u on a needs a second factor, and whether it must enrol
// one first (the required policy and no confirmed factor).
func (s *Service) secondStep(ctx context.Context, a domain.App, u domain.User) (need, enrol bool, err error) {
	if a.MFA == domain.MFAOff {
		return false, false, nil
	}
	factors, err := s.store.ListFactors(ctx, a.ID, u.ID)
	if err != nil {
		return false, false, err
	}
	for _, f := range factors {
		if f.Confirmed() {
			return true, false, nil
		}
	}
	return a.MFA == domain.MFARequired, a.MFA == domain.MFARequired, nil
}

// afterFirstFactor continues a sign-in (or sign-up) whose first factor was proved by the
// methods (AMR, e.g. the password): straight to the app when no second factor is needed, else to
// the second step, whose flow the page carries and which remembers the methods for the tokens.
func (s *Service) afterFirstFactor(ctx context.Context, a domain.App, u domain.User, p LoginParams, b browser, methods ...string) (LoginOutcome, error) {
	need, enrol, err := s.secondStep(ctx, a, u)
	if err != nil {
		return LoginOutcome{}, err
	}
	if !need {
		target, err := s.completeSignIn(ctx, a, u, p, b, methods)
		return LoginOutcome{URL: target}, err
	}
	c, secrets, err := domain.NewChallenge(domain.PurposeSecondFactor, a.ID, u.ID, u.Email, p.continuation(), s.now(), s.pepper)
	if err != nil {
		return LoginOutcome{}, err
	}
	c.Methods = methods
	if err := s.store.CreateChallenge(ctx, c); err != nil {
		return LoginOutcome{}, err
	}
	return LoginOutcome{SecondFactor: secrets.Link, Enrol: enrol}, nil
}

// signInAfterMail continues an authorization request from a mail's link or code (a verified
// address, a reset password). A user who needs a second factor is not signed in by the mail
// alone: the browser goes back to the sign-in page of the same request, where the password and
// the second factor are asked for.
func (s *Service) signInAfterMail(ctx context.Context, a domain.App, u domain.User, p LoginParams, b browser) (string, error) {
	need, _, err := s.secondStep(ctx, a, u)
	if err != nil {
		return "", err
	}
	if !need {
		return s.completeSignIn(ctx, a, u, p, b, []string{domain.AMRPassword})
	}
	q := url.Values{"client_id": {p.ClientID}, "redirect_uri": {p.RedirectURI}, "state": {p.State}, "type": {"signIn"}}
	if p.Nonce != "" {
		q.Set("nonce", p.Nonce)
	}
	if p.Scope != "" {
		q.Set("scope", p.Scope)
	}
	return s.publicURL + LoginPath + "?" + q.Encode(), nil
}

// LoginPath is the hosted sign-in page under the deployment's public URL.
const LoginPath = "/login"

// flowOf returns the live second-factor challenge of a flow secret, with its app (enabled) and
// user (active). Every failure to find one is errFlowSpent.
func (s *Service) flowOf(ctx context.Context, flow string) (domain.Challenge, domain.App, domain.User, error) {
	if !domain.WellFormedSecret(flow) {
		return domain.Challenge{}, domain.App{}, domain.User{}, errFlowSpent
	}
	c, err := s.store.GetChallengeByLink(ctx, domain.HashSecret(flow))
	if errors.Is(err, domain.ErrNotFound) {
		return domain.Challenge{}, domain.App{}, domain.User{}, errFlowSpent
	}
	if err != nil {
		return domain.Challenge{}, domain.App{}, domain.User{}, err
	}
	if c.Purpose != domain.PurposeSecondFactor || !c.Live(s.now()) {
		return domain.Challenge{}, domain.App{}, domain.User{}, errFlowSpent
	}
	a, err := s.enabledLoginApp(ctx, resumedParams(c))
	if err != nil {
		return domain.Challenge{}, domain.App{}, domain.User{}, err
	}
	u, err := s.store.GetUser(ctx, a.ID, c.UserID)
	if err != nil {
		return domain.Challenge{}, domain.App{}, domain.User{}, err
	}
	if err := inactive(u); err != nil {
		return domain.Challenge{}, domain.App{}, domain.User{}, err
	}
	return c, a, u, nil
}

// StartSignInEnrolment answers the TOTP key of a sign-in that must enrol a factor (the required
// policy, no confirmed factor).
func (s *Service) StartSignInEnrolment(ctx context.Context, flow string) (*otp.Key, error) {
	_, a, u, err := s.flowOf(ctx, flow)
	if err != nil {
		return nil, err
	}
	if _, enrol, err := s.secondStep(ctx, a, u); err != nil || !enrol {
		return nil, cmpErr(err, errFlowSpent)
	}
	return s.pendingTOTP(ctx, a, u)
}

// StartSignInPasskeyEnrolment answers the options of navigator.credentials.create for a sign-in
// that must enrol a factor, the choice beside the TOTP key: the passkey the browser creates is
// posted to VerifySecondFactor, which stores it and continues the sign-in.
func (s *Service) StartSignInPasskeyEnrolment(ctx context.Context, flow string) (PasskeyCeremony, error) {
	c, a, u, err := s.flowOf(ctx, flow)
	if err != nil {
		return PasskeyCeremony{}, err
	}
	if _, enrol, err := s.secondStep(ctx, a, u); err != nil || !enrol {
		return PasskeyCeremony{}, cmpErr(err, errFlowSpent)
	}
	return s.beginPasskeyRegistration(ctx, a, u, enrolmentAAD(c))
}

// cmpErr is err, else fallback.
func cmpErr(err, fallback error) error {
	if err != nil {
		return err
	}
	return fallback
}

// SecondFactorInput is the second step's form: a code, or a passkey's assertion with its
// ceremony's state.
type SecondFactorInput struct {
	Flow, Code            string
	Passkey, PasskeyState string
	ClientIP, UserAgent   string
}

// VerifySecondFactor checks the second step's code and continues the authorization request. The
// code is the user's TOTP code or one of the recovery codes; a sign-in that enrols takes the
// first code of the new factor, which confirms it, and answers the new recovery codes with the
// URL. Wrong codes count like wrong passwords (the sign-in limits of the user's email and the
// client address) and against the flow, which dies after domain.MaxCodeAttempts of them.
func (s *Service) VerifySecondFactor(ctx context.Context, in SecondFactorInput) (LoginOutcome, error) {
	c, a, u, err := s.flowOf(ctx, in.Flow)
	if err != nil {
		return LoginOutcome{}, err
	}
	if err := domain.CheckUserAgent(in.UserAgent); err != nil {
		return LoginOutcome{}, err
	}
	ip := clientIP(in.ClientIP)
	var codes []string
	keys, ok, err := s.underSignInLimits(ctx, a, u, ip, func() (ok bool, err error) {
		codes, ok, err = s.checkSecondFactor(ctx, c, a, u, in)
		return ok, err
	})
	if err != nil {
		return LoginOutcome{}, err
	}
	if !ok {
		if _, err := s.store.RecordWrongCode(ctx, c.AppID, c.ID, s.now()); err != nil && !errors.Is(err, domain.ErrChallengeSpent) {
			return LoginOutcome{}, err
		}
		return LoginOutcome{}, errWrongCode
	}
	if err := s.clearSignInFailures(ctx, keys); err != nil {
		return LoginOutcome{}, err
	}
	// Meeting the flow makes it single use: of two posts racing with two good codes one signs in.
	if _, err := s.store.MeetChallenge(ctx, c.AppID, c.ID, s.now(), func(domain.Challenge, *domain.User) (ChallengeEffect, error) {
		return ChallengeEffect{}, nil
	}); err != nil {
		if errors.Is(err, domain.ErrChallengeSpent) {
			return LoginOutcome{}, errFlowSpent
		}
		return LoginOutcome{}, err
	}
	// A passkey is something the user has (RFC 8176 "hwk"); a TOTP or recovery code a one-time
	// password.
	second := domain.AMROTP
	if in.Passkey != "" {
		second = domain.AMRHardwareKey
	}
	amr := append(slices.Clip(c.Methods), second, domain.AMRMulti)
	target, err := s.completeSignIn(ctx, a, u, resumedParams(c), browser{ip: ip, userAgent: in.UserAgent}, amr)
	return LoginOutcome{URL: target, RecoveryCodes: codes}, err
}

// checkSecondFactor reports whether the form proves the user's second factor, using it up: a
// passkey's assertion, a TOTP code's time step, or a recovery code. For a user enrolling (no
// confirmed factor, the required policy) it must be a passkey the browser just created, or the
// pending TOTP factor's code, which confirms it; codes are then the new recovery codes.
func (s *Service) checkSecondFactor(ctx context.Context, c domain.Challenge, a domain.App, u domain.User, in SecondFactorInput) (codes []string, ok bool, err error) {
	_, enrol, err := s.secondStep(ctx, a, u)
	if err != nil {
		return nil, false, err
	}
	switch {
	case in.Passkey != "" && enrol:
		codes, err := s.registerPasskey(ctx, a, u, in.Passkey, in.PasskeyState, enrolmentAAD(c))
		if errors.Is(err, errPasskey) {
			return nil, false, nil
		}
		return codes, err == nil, err
	case in.Passkey != "":
		ok, err := s.checkPasskey(ctx, assertionAAD(c), a, u, in.Passkey, in.PasskeyState)
		return nil, ok, err
	case !enrol:
		ok, err := s.useEnrolledCode(ctx, a, u, in.Code)
		return nil, ok, err
	}
	codes, err = s.confirmTOTP(ctx, a, u, in.Code)
	if errors.Is(err, errWrongCode) {
		return nil, false, nil
	}
	return codes, err == nil, err
}

// useEnrolledCode reports whether code is a current code of one of the user's confirmed TOTP
// factors or one of the user's recovery codes, using it up (a recovery code is spent with its
// event; a TOTP time step is never accepted again).
func (s *Service) useEnrolledCode(ctx context.Context, a domain.App, u domain.User, code string) (bool, error) {
	if len(code) > 64 {
		return false, nil
	}
	factors, err := s.store.ListFactors(ctx, a.ID, u.ID)
	if err != nil {
		return false, err
	}
	for _, f := range factors {
		if f.Kind != domain.FactorTOTP || !f.Confirmed() {
			continue
		}
		if ok, err := s.useTOTP(ctx, f, code); ok || err != nil {
			return ok, err
		}
	}
	if !domain.WellFormedRecoveryCode(code) {
		return false, nil
	}
	err = s.store.UseRecoveryCode(ctx, a.ID, u.ID, domain.RecoveryCodeHash(u.ID, code, s.pepper), s.now(), func(left int) ([]events.Event, error) {
		return event(identityv1.EventSecondFactorRecoveryCodeUsed, a.ID, &identityv1.RecoveryCodeUsed{AppId: a.ID, UserId: u.ID, CodesLeft: int32(left)})
	})
	if errors.Is(err, domain.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// useTOTP reports whether code is a current code of the confirmed factor f not used before, and
// records its time step so it is never accepted again.
func (s *Service) useTOTP(ctx context.Context, f domain.Factor, code string) (bool, error) {
	key, err := s.openFactor(f)
	if err != nil {
		return false, err
	}
	step, ok := domain.MatchTOTP(key.Secret(), code, s.now(), f.LastStep)
	if !ok {
		return false, nil
	}
	err = s.store.UseFactorStep(ctx, f.AppID, f.UserID, f.ID, step)
	if errors.Is(err, domain.ErrCodeReplayed) {
		return false, nil
	}
	return err == nil, err
}

// openFactor opens the TOTP key sealed in f.
func (s *Service) openFactor(f domain.Factor) (*otp.Key, error) {
	raw, err := s.box.Open(f.SealedSecret, f.ID)
	if err != nil {
		return nil, fmt.Errorf("open second factor %s: %w", f.ID, err)
	}
	return otp.NewKeyFromURL(string(raw))
}

// pendingTOTP returns the key of the user's pending TOTP enrolment, starting one when there is
// none younger than domain.PendingFactorTTL: reloading the page shows the same QR code the
// authenticator may have scanned already.
func (s *Service) pendingTOTP(ctx context.Context, a domain.App, u domain.User) (*otp.Key, error) {
	if a.MFA == domain.MFAOff {
		return nil, errMFAOff
	}
	factors, err := s.store.ListFactors(ctx, a.ID, u.ID)
	if err != nil {
		return nil, err
	}
	now := s.now()
	for _, f := range factors {
		if f.Kind != domain.FactorTOTP {
			continue
		}
		if f.Confirmed() {
			return nil, domain.ErrFactorEnrolled
		}
		if now.Sub(f.CreatedAt) < domain.PendingFactorTTL {
			return s.openFactor(f)
		}
	}
	f, key, err := domain.NewTOTPFactor(a.ID, u.ID, appLabel(a), u.Email, now)
	if err != nil {
		return nil, err
	}
	if f.SealedSecret, err = s.box.Seal([]byte(key.URL()), f.ID); err != nil {
		return nil, err
	}
	if err := s.store.SavePendingFactor(ctx, f); err != nil {
		return nil, err
	}
	return key, nil
}

// appLabel names the app in authenticator apps: its display name, else its name.
func appLabel(a domain.App) string {
	if a.Branding.DisplayName != "" {
		return a.Branding.DisplayName
	}
	return a.Name
}

// confirmTOTP confirms the user's pending TOTP factor with its first code and answers the new
// recovery codes; a wrong code is errWrongCode.
func (s *Service) confirmTOTP(ctx context.Context, a domain.App, u domain.User, code string) ([]string, error) {
	factors, err := s.store.ListFactors(ctx, a.ID, u.ID)
	if err != nil {
		return nil, err
	}
	now := s.now()
	for _, f := range factors {
		if f.Kind != domain.FactorTOTP || f.Confirmed() || now.Sub(f.CreatedAt) >= domain.PendingFactorTTL {
			continue
		}
		key, err := s.openFactor(f)
		if err != nil {
			return nil, err
		}
		step, ok := domain.MatchTOTP(key.Secret(), code, now, 0)
		if !ok {
			return nil, errWrongCode
		}
		plain, stored, err := domain.NewRecoveryCodes(a.ID, u.ID, now, s.pepper)
		if err != nil {
			return nil, err
		}
		evs, err := event(identityv1.EventSecondFactorEnrolled, a.ID, &identityv1.SecondFactorChanged{
			AppId: a.ID, UserId: u.ID, Kinds: []string{string(f.Kind)},
		})
		if err != nil {
			return nil, err
		}
		if err := s.store.ConfirmFactor(ctx, a.ID, u.ID, f.ID, step, now, stored, evs...); err != nil {
			if errors.Is(err, domain.ErrNotFound) {
				return nil, errWrongCode // confirmed meanwhile by another request
			}
			return nil, err
		}
		return plain, nil
	}
	return nil, fault.Precondition("no enrolment is waiting for its code; start again")
}

// SecondFactorState is what the account page shows about the user's second factors.
type SecondFactorState struct {
	Policy            domain.MFAPolicy
	TOTP              bool
	Passkeys          int
	RecoveryCodesLeft int
}

// accountUser is the app and user of an account page's access token.
func (s *Service) accountUser(ctx context.Context, accessToken string) (domain.App, domain.User, error) {
	v, err := s.VerifyToken(ctx, accessToken)
	if err != nil {
		return domain.App{}, domain.User{}, err
	}
	a, err := s.store.GetApp(ctx, v.AppID)
	if err != nil {
		return domain.App{}, domain.User{}, err
	}
	u, err := s.store.GetUser(ctx, v.AppID, v.UserID)
	return a, u, err
}

// DescribeSecondFactors answers the policy and the second factors of the token's user.
func (s *Service) DescribeSecondFactors(ctx context.Context, accessToken string) (SecondFactorState, error) {
	a, u, err := s.accountUser(ctx, accessToken)
	if err != nil {
		return SecondFactorState{}, err
	}
	return s.secondFactorState(ctx, a, u)
}

// secondFactorState is the policy and the second factors of u on a.
func (s *Service) secondFactorState(ctx context.Context, a domain.App, u domain.User) (SecondFactorState, error) {
	factors, err := s.store.ListFactors(ctx, a.ID, u.ID)
	if err != nil {
		return SecondFactorState{}, err
	}
	st := SecondFactorState{Policy: a.MFA, Passkeys: countPasskeys(factors)}
	for _, f := range factors {
		st.TOTP = st.TOTP || (f.Kind == domain.FactorTOTP && f.Confirmed())
	}
	if st.RecoveryCodesLeft, err = s.store.CountRecoveryCodes(ctx, a.ID, u.ID); err != nil {
		return SecondFactorState{}, err
	}
	return st, nil
}

// StartTOTPEnrolment starts (or resumes) the TOTP enrolment of the token's user.
func (s *Service) StartTOTPEnrolment(ctx context.Context, accessToken string) (*otp.Key, error) {
	a, u, err := s.accountUser(ctx, accessToken)
	if err != nil {
		return nil, err
	}
	return s.pendingTOTP(ctx, a, u)
}

// ConfirmTOTPEnrolment confirms the token's user's pending TOTP factor with its first code and
// answers the new recovery codes. The current password is checked first, like a sign-in: a
// stolen access token must not add a factor that locks the owner out. Wrong codes count under
// the sign-in limits, as wrong passwords.
func (s *Service) ConfirmTOTPEnrolment(ctx context.Context, accessToken, code, current, ip string) ([]string, error) {
	a, u, err := s.accountUser(ctx, accessToken)
	if err != nil {
		return nil, err
	}
	if a.MFA == domain.MFAOff {
		return nil, errMFAOff
	}
	if err := s.checkCurrentPassword(ctx, u, current, ip); err != nil {
		return nil, err
	}
	keys := signInKeysOf(a.ID, u.Email, addressKey(clientIP(ip)))
	attempt, err := s.reserve(ctx, signInLimits(s.limits, s.now(), keys)...)
	if err != nil {
		return nil, err
	}
	codes, err := s.confirmTOTP(ctx, a, u, strings.TrimSpace(code))
	if errors.Is(err, errWrongCode) {
		return nil, err
	}
	s.release(ctx, attempt)
	return codes, err
}

// RegenerateRecoveryCodes replaces the recovery codes of the token's user, who must hold a
// confirmed factor; the old codes stop working.
func (s *Service) RegenerateRecoveryCodes(ctx context.Context, accessToken string) ([]string, error) {
	a, u, err := s.accountUser(ctx, accessToken)
	if err != nil {
		return nil, err
	}
	st, err := s.secondFactorState(ctx, a, u)
	if err != nil {
		return nil, err
	}
	if !st.TOTP && st.Passkeys == 0 {
		return nil, fault.Precondition("recovery codes need a second factor")
	}
	plain, stored, err := domain.NewRecoveryCodes(a.ID, u.ID, s.now(), s.pepper)
	if err != nil {
		return nil, err
	}
	if err := s.store.ReplaceRecoveryCodes(ctx, a.ID, u.ID, stored); err != nil {
		return nil, err
	}
	return plain, nil
}

// Who removed a user's second factors, as the removed event says.
const (
	RemovedByOperator = "operator"
	RemovedByApp      = "app"
)

// RemoveSecondFactors removes every second factor and recovery code of the user, revokes every
// session of the user on the app and mails the user. A user without factors is no error (the
// sessions still end). by is RemovedByOperator or RemovedByApp.
func (s *Service) RemoveSecondFactors(ctx context.Context, appID, userID, by string) error {
	appID, userID = domain.CanonicalID(appID), domain.CanonicalID(userID)
	if !domain.IsUUID(userID) {
		return fault.InvalidField("userId", "must be a UUID")
	}
	a, err := s.store.GetApp(ctx, appID)
	if err != nil {
		return err
	}
	u, err := s.store.GetUser(ctx, appID, userID)
	if err != nil {
		return err
	}
	now := s.now()
	var removed []domain.Factor
	err = s.store.RemoveFactors(ctx, a.ID, u.ID, now, func(fs []domain.Factor, revoked []string) ([]events.Event, error) {
		removed = fs
		var evs []events.Event
		kinds := []string{}
		for _, f := range fs {
			if f.Confirmed() {
				kinds = append(kinds, string(f.Kind))
			}
		}
		if len(kinds) > 0 {
			ev, err := event(identityv1.EventSecondFactorRemoved, a.ID, &identityv1.SecondFactorChanged{AppId: a.ID, UserId: u.ID, Kinds: kinds, By: by})
			if err != nil {
				return nil, err
			}
			evs = append(evs, ev...)
		}
		if len(revoked) > 0 {
			ev, err := sessionsRevoked(a.ID, u.ID, domain.RevokedSecondFactorsRemoved, true, now)(revoked)
			if err != nil {
				return nil, err
			}
			evs = append(evs, ev...)
		}
		return evs, nil
	})
	if err != nil {
		return err
	}
	for _, f := range removed {
		if f.Confirmed() {
			return s.mailFactorsRemoved(ctx, a, u)
		}
	}
	return nil
}

// mailFactorsRemoved tells the user that the second factors are gone: if someone else had them
// removed, the owner learns it at once. Without a mailer the removal stands unmailed.
func (s *Service) mailFactorsRemoved(ctx context.Context, a domain.App, u domain.User) error {
	if s.mailer == nil {
		return nil
	}
	msg, err := accountmail.ComposeFactorsRemoved(mailLanguage(a, u), accountmail.FactorsRemoved{To: u.Email, App: appLabel(a)})
	if err != nil {
		return err
	}
	if err := s.mailer.Send(ctx, msg); err != nil {
		// The factors are removed and the sessions ended; a lost notice must not make the caller
		// believe otherwise and retry.
		slog.WarnContext(ctx, "second factors removed, notice not sent", slog.String("error", err.Error()))
	}
	return nil
}
