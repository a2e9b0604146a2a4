package app

import (
	"context"
	"time"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// MemberAccounts stores the console's member accounts, their invitations and which memberships
// (project_members rows) each account accepted.
type MemberAccounts interface {
	// InviteProjectMember stores the membership m and its invitation in one transaction: the
	// project must exist, and a member with m's email (case-insensitively) in the project is
	// domain.ErrMemberTaken, storing neither.
	InviteProjectMember(ctx context.Context, m domain.ProjectMember, inv domain.Invitation) error
	// GetInvitation returns the invitation stored under hash, live or not.
	GetInvitation(ctx context.Context, hash []byte) (domain.Invitation, error)
	// AcceptInvitation uses the live invitation under hash at now and records that account
	// accepted its membership, in one transaction with the invitation locked. account is created
	// when no account has its id (another account with its email: domain.ErrMemberAccountTaken);
	// an existing one is only linked. An invitation that is not live at now is
	// domain.ErrInvitationSpent and nothing changes: of two concurrent acceptances exactly one
	// succeeds. It returns the membership as stored.
	AcceptInvitation(ctx context.Context, hash []byte, account domain.MemberAccount, now time.Time) (domain.ProjectMember, error)
	GetMemberAccount(ctx context.Context, id string) (domain.MemberAccount, error)
	// GetMemberAccountByEmail matches the normalised email (domain.NormalizeMemberEmail).
	GetMemberAccountByEmail(ctx context.Context, email string) (domain.MemberAccount, error)
	// ListAccountMemberships returns the memberships the account accepted, oldest first.
	ListAccountMemberships(ctx context.Context, accountID string) ([]domain.ProjectMember, error)
	// ListProjectMembers returns the project's members, accepted or not, oldest first (then by id).
	ListProjectMembers(ctx context.Context, projectID string) ([]domain.ProjectMember, error)
}

// MemberSessions stores console sessions and the sign-ins waiting for their second factor.
type MemberSessions interface {
	// CreateMemberSession stores s; its account and membership must exist.
	CreateMemberSession(ctx context.Context, s domain.MemberSession) error
	GetMemberSession(ctx context.Context, id string) (domain.MemberSession, error)
	// TouchMemberSession sets the live session's LastUsedAt to now; an ended or expired session is
	// left as it is. An unknown id is domain.ErrNotFound.
	TouchMemberSession(ctx context.Context, id string, now time.Time) error
	// EndMemberSession ends the session at now unless it ended already (then it keeps its end).
	// evs are committed with the end, and only when this call ended the session.
	EndMemberSession(ctx context.Context, id string, now time.Time, evs ...events.Event) error
	// CreateMemberChallenge stores c and forgets challenges that expired before c was created.
	CreateMemberChallenge(ctx context.Context, c domain.MemberChallenge) error
	// GetMemberChallenge returns the challenge stored under hash, live or not.
	GetMemberChallenge(ctx context.Context, hash []byte) (domain.MemberChallenge, error)
	// RecordMemberWrongCode counts one wrong code against the live challenge id and returns it
	// as stored; one that is not live at now is domain.ErrChallengeSpent. Counting is atomic.
	RecordMemberWrongCode(ctx context.Context, id string, now time.Time) (domain.MemberChallenge, error)
	// SpendMemberChallenge marks the live challenge used at now; one that is not live is
	// domain.ErrChallengeSpent: of two concurrent spends exactly one succeeds.
	SpendMemberChallenge(ctx context.Context, id string, now time.Time) error
}

// MemberFactors stores member accounts' second factors (one TOTP factor, any number of
// passkeys) and recovery codes. They are the users' domain.Factor and domain.RecoveryCode with
// UserID holding the account id and AppID empty, so the TOTP, passkey and recovery-code rules are
// the hosted login's own.
type MemberFactors interface {
	// SavePendingMemberFactor stores the TOTP factor f, not confirmed, replacing a pending one of
	// the account; an account with a confirmed TOTP factor is domain.ErrFactorEnrolled and
	// nothing changes.
	SavePendingMemberFactor(ctx context.Context, f domain.Factor) error
	// GetMemberFactor returns the account's TOTP factor, pending or confirmed.
	GetMemberFactor(ctx context.Context, accountID string) (domain.Factor, error)
	// ConfirmMemberFactor marks the pending TOTP factor id confirmed at now with step as its last
	// used step and replaces the account's recovery codes with codes, in one transaction; a
	// factor that is not pending is domain.ErrNotFound.
	ConfirmMemberFactor(ctx context.Context, accountID, id string, step int64, now time.Time, codes []domain.RecoveryCode) error
	// UseMemberFactorStep records step as the last step of the account's confirmed factor id (a
	// TOTP time step, a passkey's signature counter) and now as its last use. A step at or below
	// the stored one is domain.ErrCodeReplayed, so of two concurrent uses of one step one wins,
	// except 0 over 0: a passkey whose authenticator keeps no counter. Another account's or an
	// unknown factor is domain.ErrNotFound.
	UseMemberFactorStep(ctx context.Context, accountID, id string, step int64, now time.Time) error
	// UseMemberRecoveryCode marks the account's unused code under hash used at now; without one
	// it is domain.ErrNotFound. Of two concurrent uses exactly one succeeds.
	UseMemberRecoveryCode(ctx context.Context, accountID string, hash []byte, now time.Time) error
	// ListMemberFactors returns the account's factors of every kind, pending and confirmed,
	// oldest first (then by id).
	ListMemberFactors(ctx context.Context, accountID string) ([]domain.Factor, error)
	// AddMemberPasskey stores the passkey f (its account in UserID) confirmed at f.CreatedAt. In
	// the same transaction, with the account locked, codes become the account's recovery codes
	// when it had no confirmed factor before (its first second factor), and AddMemberPasskey
	// reports true; otherwise codes are dropped and it reports false. An unknown account is
	// domain.ErrNotFound.
	AddMemberPasskey(ctx context.Context, f domain.Factor, codes []domain.RecoveryCode) (bool, error)
	// RemoveMemberFactor deletes the account's factor id of kind, confirmed or pending; a factor
	// that is absent, another account's or of another kind is domain.ErrNotFound and nothing
	// changes. When the account is left without a confirmed factor, its recovery codes go in the
	// same transaction.
	RemoveMemberFactor(ctx context.Context, accountID string, kind domain.FactorKind, id string) error
}

// ProjectApps answers a project's apps and an app's keys for the console, and revokes keys.
type ProjectApps interface {
	// ListProjectApps returns the project's apps, oldest first (then by id).
	ListProjectApps(ctx context.Context, projectID string) ([]domain.App, error)
	// ListAppAPIKeys returns the app's keys that are not revoked, oldest first (then by id).
	ListAppAPIKeys(ctx context.Context, appID string) ([]domain.APIKey, error)
	// RevokeAPIKey marks the app's key id revoked at now and commits evs with it. A key that is
	// absent, of another app or revoked already is domain.ErrNotFound and nothing is written.
	RevokeAPIKey(ctx context.Context, appID, id string, now time.Time, evs ...events.Event) error
}
