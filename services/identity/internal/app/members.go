package app

import (
	"context"
	"errors"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/pquerna/otp"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/locale"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/domain"
	"github.com/berthhq/berth/services/identity/internal/domain/accountmail"
	"github.com/berthhq/berth/services/identity/internal/domain/password"
)

// ConsoleInvitationPath is the console's page an invitation link opens, under the deployment's
// public URL; the link's token rides in its query.
const ConsoleInvitationPath = "/console/invitation"

// memberScope stands in for the app id in the limit keys of console sign-ins: app ids are UUIDs,
// so a member's address never shares its count with a user of an app.
const memberScope = "console"

// memberTOTPIssuer names the console in authenticator apps.
const memberTOTPIssuer = "Berth console"

// touchEvery is how stale a session's LastUsedAt may get before a verification records the use:
// every call of the console verifies the token, and a write per call would only say the same.
const touchEvery = time.Minute

// Answers of the console's sign-in steps.
var (
	errMemberChallengeSpent = fault.Invalid("challenge", "this sign-in expired; sign in again")
	errNoMemberAccount      = fault.Precondition("this member has not accepted the invitation yet")
	errNoConsoleSession     = fault.Precondition("this operator token has no console session; it ends when it expires")
	errAccountPassword      = fault.Invalid("password", "this is not the password of your member account")
)

// MemberClient is the browser of a console request as the console saw it.
type MemberClient struct {
	IP, UserAgent string
}

// MemberProfile is a member as the console shows them: the membership of the session, the
// account (zero before the invitation was accepted), every project the account belongs to and
// whether a second factor guards it.
type MemberProfile struct {
	Member       domain.ProjectMember
	Account      domain.MemberAccount
	Projects     []domain.Project
	SecondFactor bool
}

// MemberSignIn is the outcome of a console sign-in step: a session's operator token, or the
// challenge of a sign-in waiting for its second factor (Token empty) with the kinds of factor
// the account offers for it (recovery codes are always taken beside them).
type MemberSignIn struct {
	Token     string
	ExpiresAt time.Time
	Profile   MemberProfile
	Challenge string
	Factors   []domain.FactorKind
}

// InvitationView is what the invitation page shows before the link is used.
type InvitationView struct {
	Invitation      domain.Invitation
	Project         domain.Project
	ExistingAccount bool
}

// InviteMember adds a member to the project and mails them the console's invitation link in lang
// ("" = English). A member of the project with that address already is domain.ErrMemberTaken;
// without a mailer nothing is stored and the answer is Unavailable.
func (s *Service) InviteMember(ctx context.Context, projectID, email, name, lang string) (domain.ProjectMember, error) {
	return s.inviteMember(ctx, projectID, email, name, lang, true)
}

// inviteMember is InviteMember; needMail says whether a deployment without a mailer refuses
// (the console's invitation) or adds the member without an invitation (the admin API's, for
// operator tokens).
func (s *Service) inviteMember(ctx context.Context, projectID, email, name, lang string, needMail bool) (domain.ProjectMember, error) {
	projectID = domain.CanonicalID(projectID)
	if lang != "" {
		var err error
		if lang, err = locale.Check("language", lang); err != nil {
			return domain.ProjectMember{}, err
		}
	}
	p, err := s.store.GetProject(ctx, projectID)
	if err != nil {
		return domain.ProjectMember{}, err
	}
	m, err := domain.NewProjectMember(projectID, email, name, s.now())
	if err != nil {
		return domain.ProjectMember{}, err
	}
	m.Language = lang
	if s.mailer == nil || s.publicURL == "" {
		if needMail {
			return domain.ProjectMember{}, fault.Unavailable(0, "invitations need the deployment's mailer and public URL")
		}
		return m, s.store.AddProjectMember(ctx, m)
	}
	inv, secret, err := domain.NewInvitation(m, s.now())
	if err != nil {
		return domain.ProjectMember{}, err
	}
	msg, err := accountmail.ComposeMemberInvitation(locale.Choose(lang, "", ""), accountmail.MemberInvitation{
		To: m.Email, Project: p.Name, Link: s.publicURL + ConsoleInvitationPath + "?" + url.Values{"token": {secret}}.Encode(),
	})
	if err != nil {
		return domain.ProjectMember{}, err
	}
	if err := s.store.InviteProjectMember(ctx, m, inv); err != nil {
		return domain.ProjectMember{}, err
	}
	if err := s.mailer.Send(ctx, msg); err != nil {
		// The member is added; an invitation that did not go out is reported, so the operator
		// knows to invite again rather than wait.
		return m, fault.Unavailable(0, "the member was added, but the invitation could not be sent")
	}
	return m, nil
}

// invitationOf returns the live invitation of a link's token; every failure to find one is
// domain.ErrInvitationSpent.
func (s *Service) invitationOf(ctx context.Context, tok string) (domain.Invitation, error) {
	if !domain.WellFormedSecret(tok) {
		return domain.Invitation{}, domain.ErrInvitationSpent
	}
	inv, err := s.store.GetInvitation(ctx, domain.HashSecret(tok))
	if errors.Is(err, domain.ErrNotFound) {
		return domain.Invitation{}, domain.ErrInvitationSpent
	}
	if err != nil {
		return domain.Invitation{}, err
	}
	if !inv.Live(s.now()) {
		return domain.Invitation{}, domain.ErrInvitationSpent
	}
	return inv, nil
}

// DescribeInvitation checks an invitation link's token without using it.
func (s *Service) DescribeInvitation(ctx context.Context, tok string) (InvitationView, error) {
	inv, err := s.invitationOf(ctx, tok)
	if err != nil {
		return InvitationView{}, err
	}
	p, err := s.store.GetProject(ctx, inv.ProjectID)
	if err != nil {
		return InvitationView{}, err
	}
	_, err = s.store.GetMemberAccountByEmail(ctx, inv.Email)
	if err != nil && !errors.Is(err, domain.ErrNotFound) {
		return InvitationView{}, err
	}
	return InvitationView{Invitation: inv, Project: p, ExistingAccount: err == nil}, nil
}

// AcceptInput is the invitation page's form.
type AcceptInput struct {
	Token, Name, Password string
	Client                MemberClient
}

// AcceptInvitation uses an invitation once. A person new to Berth sets a name and a password
// (the hosted login's rules, the breached-password list included); one who has a member account
// already proves its password, under the sign-in limits, and keeps their name. The member is then
// signed in like SignInMember (a second factor asked for when the account has one).
func (s *Service) AcceptInvitation(ctx context.Context, in AcceptInput) (MemberSignIn, error) {
	ip := clientIP(in.Client.IP)
	if err := domain.CheckUserAgent(in.Client.UserAgent); err != nil {
		return MemberSignIn{}, err
	}
	inv, err := s.invitationOf(ctx, in.Token)
	if err != nil {
		return MemberSignIn{}, err
	}
	account, err := s.store.GetMemberAccountByEmail(ctx, inv.Email)
	switch {
	case err == nil:
		keys := signInKeysOf(memberScope, account.Email, addressKey(ip))
		err := s.checkPassword(ctx, keys, in.Password, func() (string, error) { return account.PasswordHash, nil })
		if errors.Is(err, errCredentials) {
			return MemberSignIn{}, errAccountPassword
		}
		if err != nil {
			return MemberSignIn{}, err
		}
	case errors.Is(err, domain.ErrNotFound):
		if err := password.Check(in.Password, inv.Email); err != nil {
			return MemberSignIn{}, err
		}
		hash, err := s.hash(ctx, in.Password)
		if err != nil {
			return MemberSignIn{}, err
		}
		if account, err = domain.NewMemberAccount(inv.Email, in.Name, hash, s.now()); err != nil {
			return MemberSignIn{}, err
		}
	default:
		return MemberSignIn{}, err
	}
	m, err := s.store.AcceptInvitation(ctx, domain.HashSecret(in.Token), account, s.now())
	if err != nil {
		return MemberSignIn{}, err
	}
	return s.afterMemberPassword(ctx, account, m, MemberClient{IP: ip, UserAgent: in.Client.UserAgent})
}

// SignInMember checks a member account's address and password under the hosted login's attempt
// limits (per address and client address, per address, per client address). An unknown address
// and a wrong password get one answer after the same work. The session is of the account's oldest
// membership; SwitchProject moves to another.
func (s *Service) SignInMember(ctx context.Context, email, pw string, c MemberClient) (MemberSignIn, error) {
	ip := clientIP(c.IP)
	if err := domain.CheckUserAgent(c.UserAgent); err != nil {
		return MemberSignIn{}, err
	}
	email = domain.NormalizeMemberEmail(email)
	keys := signInKeysOf(memberScope, email, addressKey(ip))
	var account domain.MemberAccount
	err := s.checkPassword(ctx, keys, pw, func() (string, error) {
		var err error
		account, err = s.store.GetMemberAccountByEmail(ctx, email)
		return account.PasswordHash, err
	})
	if err != nil {
		return MemberSignIn{}, err
	}
	memberships, err := s.store.ListAccountMemberships(ctx, account.ID)
	if err != nil {
		return MemberSignIn{}, err
	}
	if len(memberships) == 0 {
		return MemberSignIn{}, errCredentials
	}
	return s.afterMemberPassword(ctx, account, memberships[0], MemberClient{IP: ip, UserAgent: c.UserAgent})
}

// afterMemberPassword continues a console sign-in whose password was proved: a session at once,
// or the challenge of the second factor when the account has one. A sign-in waiting for its
// second factor keeps the address's failures counted, as on the hosted login: a right password
// must not buy a fresh allowance of code guesses.
func (s *Service) afterMemberPassword(ctx context.Context, a domain.MemberAccount, m domain.ProjectMember, c MemberClient) (MemberSignIn, error) {
	kinds, err := s.memberFactorKinds(ctx, a.ID)
	if err != nil {
		return MemberSignIn{}, err
	}
	if len(kinds) == 0 {
		if err := s.clearSignInFailures(ctx, signInKeysOf(memberScope, a.Email, addressKey(c.IP))); err != nil {
			return MemberSignIn{}, err
		}
		return s.startMemberSession(ctx, a, m, c)
	}
	ch, secret, err := domain.NewMemberChallenge(a, m, s.now())
	if err != nil {
		return MemberSignIn{}, err
	}
	if err := s.store.CreateMemberChallenge(ctx, ch); err != nil {
		return MemberSignIn{}, err
	}
	return MemberSignIn{Challenge: secret, Factors: kinds}, nil
}

// memberFactorKinds are the kinds of the account's confirmed second factors, TOTP first; none
// when no second factor guards it.
func (s *Service) memberFactorKinds(ctx context.Context, accountID string) ([]domain.FactorKind, error) {
	factors, err := s.store.ListMemberFactors(ctx, accountID)
	if err != nil {
		return nil, err
	}
	var kinds []domain.FactorKind
	for _, k := range []domain.FactorKind{domain.FactorTOTP, domain.FactorPasskey} {
		if slices.ContainsFunc(factors, func(f domain.Factor) bool { return f.Kind == k && f.Confirmed() }) {
			kinds = append(kinds, k)
		}
	}
	return kinds, nil
}

// memberSecondFactor reports whether the account has a confirmed second factor.
func (s *Service) memberSecondFactor(ctx context.Context, accountID string) (bool, error) {
	kinds, err := s.memberFactorKinds(ctx, accountID)
	return len(kinds) > 0, err
}

// startMemberSession stores a session of membership m and issues its operator token, which
// expires with the session.
func (s *Service) startMemberSession(ctx context.Context, a domain.MemberAccount, m domain.ProjectMember, c MemberClient) (MemberSignIn, error) {
	now := s.now().Truncate(time.Second)
	sess := domain.NewMemberSession(a, m, c.IP, c.UserAgent, now)
	if err := s.store.CreateMemberSession(ctx, sess); err != nil {
		return MemberSignIn{}, err
	}
	raw, err := s.signOperatorToken(ctx, m.ID, sess.ID, now, sess.ExpiresAt)
	if err != nil {
		return MemberSignIn{}, err
	}
	profile, err := s.memberProfile(ctx, m)
	if err != nil {
		return MemberSignIn{}, err
	}
	return MemberSignIn{Token: raw, ExpiresAt: sess.ExpiresAt, Profile: profile}, nil
}

// VerifyMemberSecondFactor finishes a sign-in that asked for the second factor with the
// account's TOTP code or one of its recovery codes (memberSecondStep).
func (s *Service) VerifyMemberSecondFactor(ctx context.Context, challenge, code string, c MemberClient) (MemberSignIn, error) {
	return s.memberSecondStep(ctx, challenge, c, errWrongCode, func(a domain.MemberAccount, _ domain.MemberChallenge) (bool, error) {
		return s.checkMemberCode(ctx, a, code)
	})
}

// liveMemberChallenge is the live sign-in challenge of the console's secret with its account;
// every challenge that cannot be used is errMemberChallengeSpent.
func (s *Service) liveMemberChallenge(ctx context.Context, secret string) (domain.MemberChallenge, domain.MemberAccount, error) {
	if !domain.WellFormedSecret(secret) {
		return domain.MemberChallenge{}, domain.MemberAccount{}, errMemberChallengeSpent
	}
	ch, err := s.store.GetMemberChallenge(ctx, domain.HashSecret(secret))
	if errors.Is(err, domain.ErrNotFound) {
		return domain.MemberChallenge{}, domain.MemberAccount{}, errMemberChallengeSpent
	}
	if err != nil {
		return domain.MemberChallenge{}, domain.MemberAccount{}, err
	}
	if !ch.Live(s.now()) {
		return domain.MemberChallenge{}, domain.MemberAccount{}, errMemberChallengeSpent
	}
	a, err := s.store.GetMemberAccount(ctx, ch.AccountID)
	return ch, a, err
}

// memberSecondStep finishes a sign-in that asked for the second factor once check proves it: a
// code, or a passkey. Failed proofs (answered wrong) count under the sign-in limits of the
// address and client address, and against the challenge, which dies after
// domain.MaxCodeAttempts of them, after domain.MemberChallengeTTL, or once used.
func (s *Service) memberSecondStep(ctx context.Context, challenge string, c MemberClient, wrong error,
	check func(domain.MemberAccount, domain.MemberChallenge) (bool, error)) (MemberSignIn, error) {
	ip := clientIP(c.IP)
	if err := domain.CheckUserAgent(c.UserAgent); err != nil {
		return MemberSignIn{}, err
	}
	ch, a, err := s.liveMemberChallenge(ctx, challenge)
	if err != nil {
		return MemberSignIn{}, err
	}
	keys := signInKeysOf(memberScope, a.Email, addressKey(ip))
	attempt, err := s.reserve(ctx, signInLimits(s.limits, s.now(), keys)...)
	if err != nil {
		return MemberSignIn{}, err
	}
	ok, err := check(a, ch)
	if err != nil {
		s.release(ctx, attempt)
		return MemberSignIn{}, err
	}
	if !ok {
		if _, err := s.store.RecordMemberWrongCode(ctx, ch.ID, s.now()); err != nil && !errors.Is(err, domain.ErrChallengeSpent) {
			return MemberSignIn{}, err
		}
		return MemberSignIn{}, wrong
	}
	if err := s.store.ReleaseAttempt(ctx, attempt); err != nil {
		return MemberSignIn{}, err
	}
	if err := s.clearSignInFailures(ctx, keys); err != nil {
		return MemberSignIn{}, err
	}
	// Spending the challenge makes it single use: of two posts racing with two good proofs one
	// signs in.
	if err := s.store.SpendMemberChallenge(ctx, ch.ID, s.now()); err != nil {
		if errors.Is(err, domain.ErrChallengeSpent) {
			return MemberSignIn{}, errMemberChallengeSpent
		}
		return MemberSignIn{}, err
	}
	m, err := s.store.GetProjectMember(ctx, ch.MemberID)
	if err != nil {
		return MemberSignIn{}, err
	}
	return s.startMemberSession(ctx, a, m, MemberClient{IP: ip, UserAgent: c.UserAgent})
}

// checkMemberCode reports whether code is a current TOTP code of the account's confirmed TOTP
// factor not used before, or one of its unused recovery codes (an account guarded by passkeys
// alone has them too), using it up.
func (s *Service) checkMemberCode(ctx context.Context, a domain.MemberAccount, code string) (bool, error) {
	if len(code) > 64 {
		return false, nil
	}
	f, err := s.store.GetMemberFactor(ctx, a.ID)
	if err != nil && !errors.Is(err, domain.ErrNotFound) {
		return false, err
	}
	if err == nil && f.Confirmed() {
		key, err := s.openFactor(f)
		if err != nil {
			return false, err
		}
		if step, ok := domain.MatchTOTP(key.Secret(), code, s.now(), f.LastStep); ok {
			err := s.store.UseMemberFactorStep(ctx, a.ID, f.ID, step, s.now())
			if errors.Is(err, domain.ErrCodeReplayed) {
				return false, nil
			}
			return err == nil, err
		}
	}
	if !domain.WellFormedRecoveryCode(code) {
		return false, nil
	}
	err = s.store.UseMemberRecoveryCode(ctx, a.ID, domain.RecoveryCodeHash(a.ID, code, s.pepper), s.now())
	if errors.Is(err, domain.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// liveMemberSession checks that the console session id is live and of member memberID, and
// records its use at most every touchEvery. Any other session is an invalid token.
func (s *Service) liveMemberSession(ctx context.Context, id, memberID string) error {
	sess, err := s.store.GetMemberSession(ctx, domain.CanonicalID(id))
	if errors.Is(err, domain.ErrNotFound) {
		return errBadOperatorToken()
	}
	if err != nil {
		return fault.Internal(err)
	}
	now := s.now()
	if sess.MemberID != memberID || !sess.Live(now) {
		return errBadOperatorToken()
	}
	if now.Sub(sess.LastUsedAt) >= touchEvery {
		if err := s.store.TouchMemberSession(ctx, sess.ID, now); err != nil {
			return fault.Internal(err)
		}
	}
	return nil
}

// operatorMember is the membership an admitted operator token names.
func (s *Service) operatorMember(ctx context.Context, p authn.Principal) (domain.ProjectMember, error) {
	if p.Kind != authn.KindOperator || p.UserID == "" {
		// The policy admits only operator tokens on these calls; anything else is a wiring fault.
		return domain.ProjectMember{}, errBadOperatorToken()
	}
	m, err := s.store.GetProjectMember(ctx, p.UserID)
	if errors.Is(err, domain.ErrNotFound) {
		return domain.ProjectMember{}, errBadOperatorToken()
	}
	return m, err
}

// operatorAccount is the member account of an admitted operator token's membership; a member
// who did not accept the invitation has none (errNoMemberAccount).
func (s *Service) operatorAccount(ctx context.Context, p authn.Principal) (domain.ProjectMember, domain.MemberAccount, error) {
	m, err := s.operatorMember(ctx, p)
	if err != nil {
		return domain.ProjectMember{}, domain.MemberAccount{}, err
	}
	if !m.Accepted() {
		return domain.ProjectMember{}, domain.MemberAccount{}, errNoMemberAccount
	}
	a, err := s.store.GetMemberAccount(ctx, m.AccountID)
	return m, a, err
}

// memberProfile is m as the console shows it. A member who did not accept the invitation (an
// operator token of berthctl) has only the membership's project.
func (s *Service) memberProfile(ctx context.Context, m domain.ProjectMember) (MemberProfile, error) {
	out := MemberProfile{Member: m}
	memberships := []domain.ProjectMember{m}
	if m.Accepted() {
		var err error
		if out.Account, err = s.store.GetMemberAccount(ctx, m.AccountID); err != nil {
			return MemberProfile{}, err
		}
		if memberships, err = s.store.ListAccountMemberships(ctx, m.AccountID); err != nil {
			return MemberProfile{}, err
		}
		if out.SecondFactor, err = s.memberSecondFactor(ctx, m.AccountID); err != nil {
			return MemberProfile{}, err
		}
	}
	for _, ms := range memberships {
		p, err := s.store.GetProject(ctx, ms.ProjectID)
		if err != nil {
			return MemberProfile{}, err
		}
		out.Projects = append(out.Projects, p)
	}
	return out, nil
}

// DescribeMember answers the operator token's member: the membership, the account, every project
// the account belongs to and whether a second factor guards it.
func (s *Service) DescribeMember(ctx context.Context, p authn.Principal) (MemberProfile, error) {
	m, err := s.operatorMember(ctx, p)
	if err != nil {
		return MemberProfile{}, err
	}
	return s.memberProfile(ctx, m)
}

// SwitchProject starts a session of the same account's membership of another project and ends
// the token's session: the console then holds the new token only. A project the account is not a
// member of is not found, like an absent one.
func (s *Service) SwitchProject(ctx context.Context, p authn.Principal, projectID string) (MemberSignIn, error) {
	projectID = domain.CanonicalID(projectID)
	if !domain.IsUUID(projectID) {
		return MemberSignIn{}, fault.InvalidField("projectId", "must be a UUID")
	}
	_, a, err := s.operatorAccount(ctx, p)
	if err != nil {
		return MemberSignIn{}, err
	}
	if p.SessionID == "" {
		return MemberSignIn{}, errNoConsoleSession
	}
	old, err := s.store.GetMemberSession(ctx, p.SessionID)
	if err != nil {
		return MemberSignIn{}, err
	}
	memberships, err := s.store.ListAccountMemberships(ctx, a.ID)
	if err != nil {
		return MemberSignIn{}, err
	}
	for _, m := range memberships {
		if m.ProjectID != projectID {
			continue
		}
		out, err := s.startMemberSession(ctx, a, m, MemberClient{IP: old.ClientIP, UserAgent: old.UserAgent})
		if err != nil {
			return MemberSignIn{}, err
		}
		return out, s.endMemberSession(ctx, p.ProjectID, old)
	}
	return MemberSignIn{}, domain.NotFound("project")
}

// SignOutMember ends the token's console session: its tokens stop verifying at once.
func (s *Service) SignOutMember(ctx context.Context, p authn.Principal) error {
	if _, err := s.operatorMember(ctx, p); err != nil {
		return err
	}
	if p.SessionID == "" {
		return errNoConsoleSession
	}
	sess, err := s.store.GetMemberSession(ctx, p.SessionID)
	if err != nil {
		return err
	}
	return s.endMemberSession(ctx, p.ProjectID, sess)
}

// endMemberSession ends a console session with the event that makes every service forget its
// cached verifications of the member's operator tokens (pkg/authn), so the token is refused
// everywhere from the next call rather than once the caches expire.
func (s *Service) endMemberSession(ctx context.Context, projectID string, sess domain.MemberSession) error {
	evs, err := event(identityv1.EventMemberSessionEnded, "", &identityv1.MemberSessionEnded{
		ProjectId: projectID, MemberId: sess.MemberID, SessionId: sess.ID})
	if err != nil {
		return err
	}
	return s.store.EndMemberSession(ctx, sess.ID, s.now(), evs...)
}

// StartMemberTotp starts (or resumes) the TOTP enrolment of the token's member account: a pending
// factor younger than domain.PendingFactorTTL keeps its key, so reloading shows the QR code the
// authenticator may have scanned already.
func (s *Service) StartMemberTotp(ctx context.Context, p authn.Principal) (*otp.Key, error) {
	_, a, err := s.operatorAccount(ctx, p)
	if err != nil {
		return nil, err
	}
	now := s.now()
	f, err := s.store.GetMemberFactor(ctx, a.ID)
	switch {
	case err == nil && f.Confirmed():
		return nil, domain.ErrFactorEnrolled
	case err == nil && now.Sub(f.CreatedAt) < domain.PendingFactorTTL:
		return s.openFactor(f)
	case err != nil && !errors.Is(err, domain.ErrNotFound):
		return nil, err
	}
	f, key, err := domain.NewTOTPFactor("", a.ID, memberTOTPIssuer, a.Email, now)
	if err != nil {
		return nil, err
	}
	if f.SealedSecret, err = s.box.Seal([]byte(key.URL()), f.ID); err != nil {
		return nil, err
	}
	if err := s.store.SavePendingMemberFactor(ctx, f); err != nil {
		return nil, err
	}
	return key, nil
}

// operatorPassword is the member account of an admitted operator token once current proves its
// password, with the sign-in limit keys of the account and the session's client address, under
// which the check counted. The console asks for the password again before a change of the
// account's second factors: a stolen session must not add or remove one.
func (s *Service) operatorPassword(ctx context.Context, p authn.Principal, current string) (domain.MemberAccount, signInKeys, error) {
	m, a, err := s.operatorAccount(ctx, p)
	if err != nil {
		return domain.MemberAccount{}, signInKeys{}, err
	}
	ip := ""
	if p.SessionID != "" {
		if sess, err := s.store.GetMemberSession(ctx, p.SessionID); err == nil && sess.MemberID == m.ID {
			ip = sess.ClientIP
		}
	}
	keys := signInKeysOf(memberScope, a.Email, addressKey(ip))
	if err := s.checkCurrent(ctx, keys, a.PasswordHash, current); err != nil {
		return domain.MemberAccount{}, signInKeys{}, err
	}
	return a, keys, nil
}

// ConfirmMemberTotp confirms the pending TOTP factor of the token's member account with its first
// code and answers the recovery codes, shown once. The current password is checked first, under
// the sign-in limits: a stolen session must not add a factor that locks the owner out. Wrong
// codes count under the same limits.
func (s *Service) ConfirmMemberTotp(ctx context.Context, p authn.Principal, code, current string) ([]string, error) {
	a, keys, err := s.operatorPassword(ctx, p, current)
	if err != nil {
		return nil, err
	}
	attempt, err := s.reserve(ctx, signInLimits(s.limits, s.now(), keys)...)
	if err != nil {
		return nil, err
	}
	f, err := s.store.GetMemberFactor(ctx, a.ID)
	now := s.now()
	if errors.Is(err, domain.ErrNotFound) || (err == nil && (f.Confirmed() || now.Sub(f.CreatedAt) >= domain.PendingFactorTTL)) {
		s.release(ctx, attempt)
		return nil, fault.Precondition("no enrolment is waiting for its code; start again")
	}
	if err != nil {
		s.release(ctx, attempt)
		return nil, err
	}
	key, err := s.openFactor(f)
	if err != nil {
		s.release(ctx, attempt)
		return nil, err
	}
	step, ok := domain.MatchTOTP(key.Secret(), strings.TrimSpace(code), now, 0)
	if !ok {
		return nil, errWrongCode
	}
	s.release(ctx, attempt)
	plain, stored, err := domain.NewRecoveryCodes("", a.ID, now, s.pepper)
	if err != nil {
		return nil, err
	}
	if err := s.store.ConfirmMemberFactor(ctx, a.ID, f.ID, step, now, stored); err != nil {
		if errors.Is(err, domain.ErrNotFound) {
			return nil, errWrongCode // confirmed meanwhile by another request
		}
		return nil, err
	}
	return plain, nil
}

// ProjectMemberState is a member as the members page lists them.
type ProjectMemberState struct {
	Member       domain.ProjectMember
	SecondFactor bool
}

// ListProjectMembers lists the project's members, oldest first, with whether each accepted the
// invitation and guards the account with a second factor.
func (s *Service) ListProjectMembers(ctx context.Context, projectID string) ([]ProjectMemberState, error) {
	projectID = domain.CanonicalID(projectID)
	if _, err := s.store.GetProject(ctx, projectID); err != nil {
		return nil, err
	}
	ms, err := s.store.ListProjectMembers(ctx, projectID)
	if err != nil {
		return nil, err
	}
	out := make([]ProjectMemberState, 0, len(ms))
	for _, m := range ms {
		st := ProjectMemberState{Member: m}
		if m.Accepted() {
			if st.SecondFactor, err = s.memberSecondFactor(ctx, m.AccountID); err != nil {
				return nil, err
			}
		}
		out = append(out, st)
	}
	return out, nil
}

// ListProjectApps lists the project's apps, oldest first.
func (s *Service) ListProjectApps(ctx context.Context, projectID string) ([]domain.App, error) {
	projectID = domain.CanonicalID(projectID)
	if _, err := s.store.GetProject(ctx, projectID); err != nil {
		return nil, err
	}
	return s.store.ListProjectApps(ctx, projectID)
}

// ListAppAPIKeys lists the app's API keys that are not revoked, oldest first.
func (s *Service) ListAppAPIKeys(ctx context.Context, appID string) ([]domain.APIKey, error) {
	appID = domain.CanonicalID(appID)
	if _, err := s.store.GetApp(ctx, appID); err != nil {
		return nil, err
	}
	return s.store.ListAppAPIKeys(ctx, appID)
}

// RevokeAPIKey revokes one API key of the app at once. The key event it commits makes every
// service's cache of verified keys forget the key (pkg/authn), and identity's own verification
// refuses it from now on.
func (s *Service) RevokeAPIKey(ctx context.Context, appID, keyID string) error {
	appID = domain.CanonicalID(appID)
	if _, err := s.store.GetApp(ctx, appID); err != nil {
		return err
	}
	evs, err := event(identityv1.EventAPIKeyChanged, appID, &identityv1.ApiKeyChanged{AppId: appID, KeyId: keyID})
	if err != nil {
		return err
	}
	return s.store.RevokeAPIKey(ctx, appID, keyID, s.now(), evs...)
}
