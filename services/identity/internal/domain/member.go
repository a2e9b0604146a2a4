package domain

import (
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/fault"
)

// MemberAccount is one person's console account: one password (and second factor) across every
// project whose membership (ProjectMember) the person accepted. It is keyed by the normalised
// email (NormalizeMemberEmail), so the same address in two projects is the same person.
type MemberAccount struct {
	ID           string
	Email        string
	Name         string
	PasswordHash string
	CreatedAt    time.Time
}

// NormalizeMemberEmail is the form member accounts are keyed by: trimmed and lower-cased, so
// "Ada@Example.test" invited to a second project finds the account of "ada@example.test".
func NormalizeMemberEmail(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

// NewMemberAccount validates the name and mints the account for email (validated by the
// membership it accepts) with the password hash the caller made.
func NewMemberAccount(email, name, passwordHash string, now time.Time) (MemberAccount, error) {
	name, err := requiredName("name", name)
	if err != nil {
		return MemberAccount{}, err
	}
	return MemberAccount{ID: uuid.NewString(), Email: NormalizeMemberEmail(email), Name: name, PasswordHash: passwordHash, CreatedAt: now.UTC()}, nil
}

// ErrMemberAccountTaken is answered when a new account would take an address another account has
// (two invitations of one person accepted at once as new people).
var ErrMemberAccountTaken = fault.Invalid("", "this address has a member account already; sign in with its password")

// InvitationTTL is how long an invitation link works: a week, enough for a holiday's inbox.
const InvitationTTL = 7 * 24 * time.Hour

// Invitation is the link that lets the person of a membership set (or prove) their password. Only
// the hash of its token is stored; it is used once.
type Invitation struct {
	Hash      []byte
	MemberID  string
	ProjectID string
	Email     string
	CreatedAt time.Time
	ExpiresAt time.Time
	UsedAt    *time.Time
}

// NewInvitation mints the invitation of membership m: the token for the link and its stored form.
func NewInvitation(m ProjectMember, now time.Time) (Invitation, string, error) {
	secret, hash, err := NewSecret()
	if err != nil {
		return Invitation{}, "", err
	}
	now = now.UTC()
	return Invitation{Hash: hash, MemberID: m.ID, ProjectID: m.ProjectID, Email: m.Email, CreatedAt: now, ExpiresAt: now.Add(InvitationTTL)}, secret, nil
}

// Live reports whether the invitation may still be accepted at now.
func (i Invitation) Live(now time.Time) bool { return i.UsedAt == nil && now.Before(i.ExpiresAt) }

// ErrInvitationSpent is the one answer for an invitation that is unknown, used or expired.
var ErrInvitationSpent = fault.Invalid("token", "this invitation is not valid any more; ask for a new one")

// MemberSessionTTL is a console session's absolute lifetime: a working day, after which the member
// signs in again whatever they did meanwhile.
const MemberSessionTTL = 12 * time.Hour

// MemberSession is a console sign-in of one membership. The operator tokens it issues carry its id
// (sid) and verify only while it is live.
type MemberSession struct {
	ID         string
	AccountID  string
	MemberID   string
	CreatedAt  time.Time
	LastUsedAt time.Time
	ExpiresAt  time.Time
	EndedAt    *time.Time
	ClientIP   string
	UserAgent  string
}

// NewMemberSession starts a session of membership m of account a.
func NewMemberSession(a MemberAccount, m ProjectMember, clientIP, userAgent string, now time.Time) MemberSession {
	now = now.UTC()
	return MemberSession{ID: uuid.NewString(), AccountID: a.ID, MemberID: m.ID, CreatedAt: now, LastUsedAt: now,
		ExpiresAt: now.Add(MemberSessionTTL), ClientIP: clientIP, UserAgent: userAgent}
}

// Live reports whether the session was neither ended nor outlived at now.
func (s MemberSession) Live(now time.Time) bool { return s.EndedAt == nil && now.Before(s.ExpiresAt) }

// MemberChallengeTTL is how long a sign-in waits for its second factor: long enough to open the
// authenticator, too short to come back to a forgotten tab.
const MemberChallengeTTL = 5 * time.Minute

// MemberChallenge is a console sign-in that proved the password and waits for the second factor.
// Only the hash of its secret is stored; it dies after MaxCodeAttempts wrong codes or once used.
type MemberChallenge struct {
	ID         string
	Hash       []byte
	AccountID  string
	MemberID   string
	CreatedAt  time.Time
	ExpiresAt  time.Time
	UsedAt     *time.Time
	WrongCodes int
}

// NewMemberChallenge mints the second-factor step of a sign-in of membership m of account a: the
// secret the console carries and its stored form.
func NewMemberChallenge(a MemberAccount, m ProjectMember, now time.Time) (MemberChallenge, string, error) {
	secret, hash, err := NewSecret()
	if err != nil {
		return MemberChallenge{}, "", err
	}
	now = now.UTC()
	return MemberChallenge{ID: uuid.NewString(), Hash: hash, AccountID: a.ID, MemberID: m.ID, CreatedAt: now, ExpiresAt: now.Add(MemberChallengeTTL)}, secret, nil
}

// Live reports whether the challenge may still take a code at now.
func (c MemberChallenge) Live(now time.Time) bool {
	return c.UsedAt == nil && now.Before(c.ExpiresAt) && c.WrongCodes < MaxCodeAttempts
}

// Accepted reports whether the membership's person accepted the invitation.
func (m ProjectMember) Accepted() bool { return m.AccountID != "" }
