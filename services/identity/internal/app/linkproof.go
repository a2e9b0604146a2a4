package app

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/services/identity/internal/domain"
	"github.com/berthhq/berth/services/identity/internal/domain/accountmail"
)

// A provider identity whose verified address has an account links to it only once the person
// proves the account is theirs (docs/accounts.md): the account's password, its second factor (a
// TOTP or recovery code, or a passkey), or a code mailed to the address. The pending link is
// sealed (linkOwner) and names the account, so every proof is checked against that one account.

// Answers of a refused proof. A wrong mailed code and a spent, expired or exhausted one are one
// answer, as for every mailed code.
var (
	errLinkCode  = fault.Invalid("emailCode", "this code is not correct or no longer valid")
	errLinkProof = fault.Invalid("proof", "give exactly one of password, code, emailCode or passkey")
)

// linkRefused is the refusal of a pending link that is broken, expired or whose account is gone.
func linkRefused(why string) error { return ProviderRefusal(ProviderReasonLink, "%s", why) }

// openLink opens a pending link and answers it with its app (enabled) and account. Whether the
// account may sign in is left to each proof, so that a wrong password answers as at the sign-in.
func (s *Service) openLink(ctx context.Context, raw string) (pendingLink, domain.App, domain.User, error) {
	var pl pendingLink
	if !s.open(raw, linkOwner, &pl) || !s.now().Before(pl.Expires) {
		return pendingLink{}, domain.App{}, domain.User{}, linkRefused("the link confirmation is broken or expired")
	}
	a, err := s.enabledLoginApp(ctx, pl.Params)
	if err != nil {
		return pendingLink{}, domain.App{}, domain.User{}, err
	}
	u, err := s.store.GetUser(ctx, a.ID, pl.UserID)
	if errors.Is(err, domain.ErrNotFound) || err == nil && (u.Deleted || !strings.EqualFold(u.Email, pl.Email)) {
		// The address moved to another account (or the account went) since the callback.
		return pendingLink{}, domain.App{}, domain.User{}, linkRefused("the address belongs to another account now")
	}
	return pl, a, u, err
}

// LinkProofs is what the confirmation page offers for a pending link: the account's address, the
// provider's name, and the proofs the account has besides the mailed code, which every account
// has. The person reached the page by a provider that vouches for the address, so naming the
// account's ways of signing in tells them nothing a visitor without the address learns.
type LinkProofs struct {
	Email, ProviderName string
	Params              LoginParams
	Password, TOTP      bool
	// Passkey is the assertion the account's passkeys can answer (zero when there are none).
	Passkey PasskeyCeremony
	// CodeSent says a mailed code waits for this link.
	CodeSent bool
}

// linkPasskeyAAD binds a link confirmation's passkey ceremony to its account and provider identity.
func linkPasskeyAAD(pl pendingLink) string {
	return "passkey link\x00" + pl.UserID + "\x00" + pl.Slot + "\x00" + pl.Subject
}

// DescribeProviderLink answers the confirmation page of a pending link.
func (s *Service) DescribeProviderLink(ctx context.Context, link string) (LinkProofs, error) {
	pl, a, u, err := s.openLink(ctx, link)
	if err != nil {
		return LinkProofs{}, err
	}
	idp, err := s.configuredProvider(ctx, a.ID, pl.Slot)
	if err != nil {
		return LinkProofs{}, err
	}
	out := LinkProofs{Email: u.Email, ProviderName: idp.DisplayName, Params: pl.Params, Password: u.PasswordHash != "", CodeSent: pl.CodeID != ""}
	if a.MFA == domain.MFAOff {
		// Stored factors are kept under "off" but prove nothing there, as at the sign-in.
		return out, nil
	}
	factors, err := s.store.ListFactors(ctx, a.ID, u.ID)
	if err != nil {
		return LinkProofs{}, err
	}
	for _, f := range factors {
		out.TOTP = out.TOTP || f.Kind == domain.FactorTOTP && f.Confirmed()
	}
	if countPasskeys(factors) == 0 {
		return out, nil
	}
	rp, err := s.relyingParty(appLabel(a))
	if err != nil {
		return out, nil // without a public URL no passkey works; the other proofs still do
	}
	h, err := s.passkeysOf(ctx, a, u)
	if err != nil {
		return LinkProofs{}, err
	}
	if out.Passkey, err = s.beginAssertion(rp, h, linkPasskeyAAD(pl)); err != nil {
		return LinkProofs{}, err
	}
	return out, nil
}

// linkCodeLimits count the mailed codes of link confirmations under the account's address and
// the client address, with the limits of the verification mails' resends.
func linkCodeLimits(l LoginLimits) mailLimits {
	return mailLimits{kind: "linkcode", perEmail: l.ResendsPerEmail, perIP: l.ResendsPerIP, window: l.ResendWindow, refusal: errTooManyResends}
}

// SendProviderLinkCode mails a code that confirms the pending link to the account's address and
// answers the link again with the code's challenge sealed in: the code meets only this link. A
// new code retires the one mailed before. Every request counts under linkCodeLimits. An account
// that may not sign in (frozen) gets the same answer and no mail.
func (s *Service) SendProviderLinkCode(ctx context.Context, link, ip string) (string, error) {
	pl, a, u, err := s.openLink(ctx, link)
	if err != nil {
		return "", err
	}
	if err := s.mailReady(); err != nil {
		return "", err
	}
	if _, err := s.reserve(ctx, linkCodeLimits(s.limits).of(s.now(), a.ID, u.Email, addressKey(clientIP(ip)))...); err != nil {
		return "", err
	}
	idp, err := s.configuredProvider(ctx, a.ID, pl.Slot)
	if err != nil {
		return "", err
	}
	c, secrets, err := domain.NewChallenge(domain.PurposeLinkProvider, a.ID, u.ID, u.Email, domain.Continuation{}, s.now(), s.pepper)
	if err != nil {
		return "", err
	}
	if inactive(u) == nil {
		msg, err := accountmail.ComposeLinkCode(mailLanguage(a, u), accountmail.LinkCode{
			To: u.Email, App: appLabel(a), Provider: idp.DisplayName, Code: secrets.Code, Minutes: int(domain.PurposeLinkProvider.TTL().Minutes()),
		})
		if err != nil {
			return "", err
		}
		if err := s.store.CreateChallenge(ctx, c); err != nil {
			return "", err
		}
		if err := s.mailer.Send(ctx, msg); err != nil {
			return "", fault.Unavailable(0, "the mail with the code could not be sent")
		}
	}
	pl.CodeID = c.ID
	return s.seal(pl, linkOwner)
}

// linkProof is what a confirmation proved: the methods (AMR) of the sign-in it starts, and
// whether they are two factors already (the provider and a second factor), so that no second step
// follows. keys are the sign-in limits' keys whose failures the proof's success clears.
type linkProof struct {
	methods []string
	both    bool
	keys    *signInKeys
}

// proveLinkOwner checks the one proof of in against the pending link's account.
func (s *Service) proveLinkOwner(ctx context.Context, pl pendingLink, a domain.App, u domain.User, in ConfirmLinkInput, ip string) (linkProof, error) {
	given := 0
	for _, v := range []string{in.Password, in.Code, in.EmailCode, in.Passkey} {
		if v != "" {
			given++
		}
	}
	if given != 1 {
		return linkProof{}, errLinkProof
	}
	switch {
	case in.Password != "":
		found, keys, err := s.passwordUser(ctx, a, pl.Email, in.Password, ip)
		if err != nil {
			return linkProof{}, err
		}
		if found.ID != u.ID {
			return linkProof{}, linkRefused("the address belongs to another account now")
		}
		return linkProof{methods: []string{domain.AMRPassword, domain.AMRFederated}, keys: &keys}, nil
	case in.EmailCode != "":
		if err := s.meetLinkCode(ctx, pl, a, u, strings.TrimSpace(in.EmailCode)); err != nil {
			return linkProof{}, err
		}
		return linkProof{methods: []string{domain.AMRFederated}}, inactive(u)
	}
	if a.MFA == domain.MFAOff {
		return linkProof{}, errMFAOff
	}
	second, wrong := domain.AMROTP, errWrongCode
	check := func() (bool, error) { return s.useEnrolledCode(ctx, a, u, strings.TrimSpace(in.Code)) }
	if in.Passkey != "" {
		second, wrong = domain.AMRHardwareKey, errPasskey
		check = func() (bool, error) {
			return s.checkPasskey(ctx, linkPasskeyAAD(pl), a, u, in.Passkey, in.PasskeyState)
		}
	}
	if err := inactive(u); err != nil {
		return linkProof{}, err
	}
	keys, ok, err := s.underSignInLimits(ctx, a, u, ip, check)
	if err != nil {
		return linkProof{}, err
	}
	if !ok {
		return linkProof{}, wrong
	}
	return linkProof{methods: []string{domain.AMRFederated, second, domain.AMRMulti}, both: true, keys: &keys}, nil
}

// meetLinkCode meets the mailed code of the pending link. A wrong code counts against its
// challenge, which dies after domain.MaxCodeAttempts of them; every failure is errLinkCode.
func (s *Service) meetLinkCode(ctx context.Context, pl pendingLink, a domain.App, u domain.User, code string) error {
	if !domain.IsUUID(pl.CodeID) {
		return errLinkCode
	}
	c, err := s.store.GetChallenge(ctx, a.ID, pl.CodeID)
	if errors.Is(err, domain.ErrNotFound) {
		return errLinkCode
	}
	if err != nil {
		return err
	}
	now := s.now()
	if c.Purpose != domain.PurposeLinkProvider || c.UserID != u.ID || !c.Live(now) {
		return errLinkCode
	}
	if !domain.WellFormedCode(code) || !c.CodeMatches(code, s.pepper) {
		if _, err := s.store.RecordWrongCode(ctx, a.ID, c.ID, now); err != nil && !errors.Is(err, domain.ErrChallengeSpent) {
			return err
		}
		return errLinkCode
	}
	_, err = s.store.MeetChallenge(ctx, a.ID, c.ID, now, func(c domain.Challenge, x *domain.User) (ChallengeEffect, error) {
		if x.Deleted || !strings.EqualFold(x.Email, c.Email) {
			return ChallengeEffect{}, errLinkCode
		}
		return ChallengeEffect{}, nil
	})
	if errors.Is(err, domain.ErrChallengeSpent) || errors.Is(err, domain.ErrNotFound) {
		return errLinkCode
	}
	return err
}

// underSignInLimits runs check, which proves a code or passkey of u, as one attempt under the
// sign-in limits of u's address and the client address: an attempt that fails stays counted like
// a wrong password; one that succeeds is taken back. The caller clears the failures (the keys)
// once the whole sign-in step succeeded.
func (s *Service) underSignInLimits(ctx context.Context, a domain.App, u domain.User, ip string, check func() (bool, error)) (signInKeys, bool, error) {
	keys := signInKeysOf(a.ID, u.Email, addressKey(ip))
	attempt, err := s.reserve(ctx, signInLimits(s.limits, s.now(), keys)...)
	if err != nil {
		return keys, false, err
	}
	ok, err := check()
	if err != nil {
		s.release(ctx, attempt)
		return keys, false, err
	}
	if !ok {
		return keys, false, nil
	}
	return keys, true, s.store.ReleaseAttempt(ctx, attempt)
}

// ConfirmLinkInput is the confirmation form of a link to an existing account, with exactly one
// proof: the account's password, a TOTP or recovery code (Code), the mailed code (EmailCode), or
// a passkey's assertion with its ceremony's state (DescribeProviderLink's).
type ConfirmLinkInput struct {
	Link                  string
	Password, Code        string
	EmailCode             string
	Passkey, PasskeyState string
	ClientIP, UserAgent   string
}

// ConfirmProviderLink links the pending provider identity to the account the person proved is
// theirs, records the provider's verified address and signs in, continuing the authorization
// request. The provider is the sign-in's first factor: after the password or the mailed code the
// second step follows as at any sign-in; a second factor given here completes the sign-in.
func (s *Service) ConfirmProviderLink(ctx context.Context, in ConfirmLinkInput) (LoginOutcome, error) {
	pl, a, u, err := s.openLink(ctx, in.Link)
	if err != nil {
		return LoginOutcome{}, err
	}
	if err := domain.CheckUserAgent(in.UserAgent); err != nil {
		return LoginOutcome{}, err
	}
	ip := clientIP(in.ClientIP)
	proof, err := s.proveLinkOwner(ctx, pl, a, u, in, ip)
	if err != nil {
		return LoginOutcome{}, err
	}
	l, err := domain.NewProviderLink(a.ID, pl.Slot, pl.Subject, u.ID, pl.Email, s.now())
	if err != nil {
		return LoginOutcome{}, err
	}
	evs, err := linkedEvent(u, l)
	if err != nil {
		return LoginOutcome{}, err
	}
	if err := s.store.CreateProviderLink(ctx, l, evs...); err != nil {
		if errors.Is(err, domain.ErrProviderLinked) {
			return LoginOutcome{}, ProviderRefusal(ProviderReasonLinked, "%s: the identity or the account's slot is linked already", pl.Slot)
		}
		return LoginOutcome{}, err
	}
	slog.InfoContext(ctx, "provider identity linked", slog.String("app_id", a.ID), slog.String("user_id", u.ID), slog.String("slot", pl.Slot))
	if u, err = s.recordProviderEmail(ctx, u, pl.Slot, true); err != nil {
		return LoginOutcome{}, err
	}
	p := pl.Params
	p.Service = pl.Slot
	b := browser{ip: ip, userAgent: in.UserAgent}
	var out LoginOutcome
	if proof.both {
		out.URL, err = s.completeSignIn(ctx, a, u, p, b, proof.methods)
	} else {
		out, err = s.afterFirstFactor(ctx, a, u, p, b, proof.methods...)
	}
	if err != nil || out.SecondFactor != "" || proof.keys == nil {
		// As at a password sign-in: the failures stay counted until the second factor is proved.
		return out, err
	}
	return out, s.clearSignInFailures(ctx, *proof.keys)
}
