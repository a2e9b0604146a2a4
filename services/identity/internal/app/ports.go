package app

import (
	"context"
	"time"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/keyset"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// Store errors: lookups return an error matching domain.ErrNotFound for absent rows; user writes
// return domain.ErrEmailTaken when another user of the app has the email (case-insensitively).
//
// Update methods run fn on a copy of the current row inside the store's transaction (Postgres: one
// transaction with the row locked; memory: under the store's lock). When fn returns an error
// nothing is written. Otherwise the changed row and the events fn returned are committed together,
// so a change is never published without being stored, nor stored without being published.

// Projects stores projects.
type Projects interface {
	CreateProject(ctx context.Context, p domain.Project) error
	GetProject(ctx context.Context, id string) (domain.Project, error)
}

// Apps stores apps.
type Apps interface {
	CreateApp(ctx context.Context, a domain.App) error // the project must exist
	GetApp(ctx context.Context, id string) (domain.App, error)
	UpdateApp(ctx context.Context, id string, fn func(*domain.App) ([]events.Event, error)) (domain.App, error)
	ListApps(ctx context.Context) ([]domain.App, error) // every app, ordered by id
}

// APIKeys stores API keys (id and hash only).
type APIKeys interface {
	// CreateAPIKey stores k and evs atomically; the app must exist.
	CreateAPIKey(ctx context.Context, k domain.APIKey, evs ...events.Event) error
	GetAPIKey(ctx context.Context, id string) (domain.APIKey, error)
	UpdateAPIKey(ctx context.Context, id string, fn func(*domain.APIKey) ([]events.Event, error)) (domain.APIKey, error)
}

// ProjectMembers stores the operators of projects (route 2).
type ProjectMembers interface {
	// AddProjectMember needs an existing project; it returns domain.ErrMemberTaken when the
	// project already has a member with that email (case-insensitively).
	AddProjectMember(ctx context.Context, m domain.ProjectMember) error
	GetProjectMember(ctx context.Context, id string) (domain.ProjectMember, error)
}

// OperatorKeys stores the deployment's one operator signing key, sealed.
type OperatorKeys interface {
	// GetOperatorKey returns the sealed key, or an error matching domain.ErrNotFound before the
	// first one is stored.
	GetOperatorKey(ctx context.Context) ([]byte, error)
	// CreateOperatorKey stores sealed unless a key exists already, and returns the key that is
	// stored: replicas racing on a fresh deployment all end up with the first one.
	CreateOperatorKey(ctx context.Context, sealed []byte) ([]byte, error)
}

// Users stores users; every lookup is scoped to one app.
type Users interface {
	CreateUser(ctx context.Context, u domain.User, evs ...events.Event) error // the app must exist; evs are written with the user
	GetUser(ctx context.Context, appID, userID string) (domain.User, error)
	// GetUserByEmail matches the email case-insensitively. A deleted user's address may be taken
	// again by a new user; the live user wins, else the most recently changed deleted one.
	GetUserByEmail(ctx context.Context, appID, email string) (domain.User, error)
	UpdateUser(ctx context.Context, appID, userID string, fn func(*domain.User) ([]events.Event, error)) (domain.User, error)
	// DeleteUser soft-deletes a user (domain.User.MarkDeleted at now) and commits the events fn
	// returns with it. fn learns how many non-deleted users the user's tenant keeps; the tenant's
	// users are locked meanwhile, so two concurrent deletions count each other and exactly one of
	// them sees the tenant emptied.
	DeleteUser(ctx context.Context, appID, userID string, now time.Time, fn func(deleted domain.User, tenantUsersLeft int) ([]events.Event, error)) (domain.User, error)
	// ListTenantUsers returns the tenant's users that are not deleted, oldest first.
	ListTenantUsers(ctx context.Context, appID, tenantID string) ([]domain.User, error)
	// SearchUsers answers q over the app's users that are not deleted, keyed by their email
	// lower-cased (UserKey): at most q.Limit, in key order (keyset.Select says what matches).
	SearchUsers(ctx context.Context, appID string, q keyset.Search) ([]domain.User, error)
}

// Roles stores user roles.
type Roles interface {
	// CreateRole needs an existing app; it returns domain.ErrRoleTaken when the app already has a
	// role of that name (case-insensitively).
	CreateRole(ctx context.Context, r domain.UserRole) error
	// ListRoles returns the app's roles sorted by name.
	ListRoles(ctx context.Context, appID string) ([]domain.UserRole, error)
}

// AuthCodes stores authorization codes by the hash of the code.
type AuthCodes interface {
	// CreateAuthCode stores c (its user must exist) and forgets codes that expired before c was
	// created, so unused codes do not pile up.
	CreateAuthCode(ctx context.Context, c domain.AuthCode) error
	// ConsumeAuthCode removes the code stored under hash and returns it, expired or not: of two
	// concurrent consumers exactly one gets it, the other domain.ErrNotFound.
	ConsumeAuthCode(ctx context.Context, hash []byte) (domain.AuthCode, error)
}

// RefreshTokens stores refresh-token families and their tokens by hash.
type RefreshTokens interface {
	// CreateRefreshFamily stores a new family (its user must exist) with its first token.
	CreateRefreshFamily(ctx context.Context, f domain.RefreshFamily, first domain.RefreshToken) error
	// GetRefreshToken returns the token stored under hash with its family.
	GetRefreshToken(ctx context.Context, hash []byte) (domain.RefreshToken, domain.RefreshFamily, error)
	// RotateRefreshToken marks the token under hash used at next.CreatedAt and stores next in its
	// family, atomically with the family locked; the family's LastUsedAt becomes next.CreatedAt
	// and its ExpiresAt next.ExpiresAt. When the token was used already or the family is
	// revoked it changes nothing and returns domain.ErrTokenSpent (revoking the family as stolen is
	// the caller's, with its event: Sessions.RevokeSessions): of two concurrent rotations of one
	// token exactly one succeeds. Tokens of the family that expired before next was created are
	// forgotten.
	RotateRefreshToken(ctx context.Context, hash []byte, next domain.RefreshToken) error
	// RotateAppKey runs fn on a copy of the app (as UpdateApp does) and revokes every refresh
	// family of the app, in one transaction with the app locked: a key rotation logs everyone out,
	// and the new key is never stored without the revocation, nor the revocation without it.
	// sessionsRevoked is called once per user who had live families at now (users in id order,
	// the family ids sorted) and its events are committed with fn's. When fn or sessionsRevoked
	// returns an error nothing is written.
	RotateAppKey(ctx context.Context, appID string, now time.Time, fn func(*domain.App) ([]events.Event, error), sessionsRevoked func(userID string, revoked []string) ([]events.Event, error)) (domain.App, error)
}

// Sessions are the refresh-token families seen as a user's sessions: listed and revoked by the
// sessions routes, revoked all at once when the user is frozen or deleted or changes the password.
type Sessions interface {
	// ListSessions returns at most limit of the user's families that are live at now
	// (domain.RefreshFamily.Live), the most recently used first (then by id).
	ListSessions(ctx context.Context, appID, userID string, now time.Time, limit int) ([]domain.RefreshFamily, error)
	// RevokeSessions revokes the user's families that are not revoked yet, or only the family
	// sessionID when it is not "", and returns the ids of those that were live at now, sorted.
	// When there are any, fn is called with them and its events are committed with the
	// revocation in one transaction; when there are none, fn is not called. A sessionID that is
	// not a live family of that user of that app is domain.ErrNotFound, and nothing is revoked.
	RevokeSessions(ctx context.Context, appID, userID, sessionID string, now time.Time, fn func(revoked []string) ([]events.Event, error)) ([]string, error)
	// UpdateUserEndingSessions runs fn on a copy of the user (as UpdateUser does) and revokes every
	// family of the user, in one transaction with the user locked: the account page's password
	// change stores the new hash and ends the sessions the old password opened together, so
	// neither happens without the other. sessionsRevoked is called with the ids of the families
	// that were live at now (sorted), not at all when none was, and its events are committed with
	// fn's. When fn or sessionsRevoked returns an error nothing is written; an unknown user is
	// domain.ErrNotFound.
	UpdateUserEndingSessions(ctx context.Context, appID, userID string, now time.Time, fn func(*domain.User) ([]events.Event, error), sessionsRevoked func(revoked []string) ([]events.Event, error)) (domain.User, error)
}

// AttemptLimit is one limit an attempt is held to: at most Max attempts recorded under Key at or
// after Since (now minus the limit's window).
type AttemptLimit struct {
	Key   string
	Max   int
	Since time.Time
	// CheckOnly holds the attempt to the limit without recording it under Key (sign-up checks the
	// address's sign-in failures, which it is not one of).
	CheckOnly bool
}

// Attempts counts attempts per key: sign-ins per email and client address, sign-ups per address,
// email changes per user. It lives in the shared store so that every replica enforces one limit.
type Attempts interface {
	// ReserveAttempt records the attempt id at at under the key of every limit, unless one of the
	// limits is reached already (Max or more attempts under its key at or after its Since): then it
	// records nothing and returns the index of the first limit reached; it returns -1 when it
	// recorded. Counting and recording are atomic for all the keys together (Postgres: one
	// transaction holding a lock per key; memory: under the store's lock), so concurrent attempts
	// can never pass a limit: of Max+n concurrent reservations exactly Max succeed. Attempts under a
	// limit's key older than its Since are forgotten.
	ReserveAttempt(ctx context.Context, id string, at time.Time, limits ...AttemptLimit) (int, error)
	// ReleaseAttempt forgets the attempt id under every key (it turned out not to count: a correct
	// password, a request refused before its work). An unknown id is no error.
	ReleaseAttempt(ctx context.Context, id string) error
	// ClearAttempts forgets every attempt under key.
	ClearAttempts(ctx context.Context, key string) error
}

// Referrals stores the referral codes of invites (route 23) by the hash of the code.
type Referrals interface {
	// CreateReferral stores r unless its inviter has limit or more referrals created at or after
	// since; then it returns domain.ErrInviteLimit. Counting and storing are atomic per inviter,
	// so concurrent invites cannot exceed the limit. The inviter must exist.
	CreateReferral(ctx context.Context, r domain.Referral, since time.Time, limit int) error
	// GetReferral returns the referral stored under hash, expired or not.
	GetReferral(ctx context.Context, hash []byte) (domain.Referral, error)
	// DeleteReferral forgets the referral under hash (its invite could not be sent); an absent one
	// is no error.
	DeleteReferral(ctx context.Context, hash []byte) error
}

// Challenges stores the challenges of verification, password-reset and email-change mails.
type Challenges interface {
	// CreateChallenge stores c (its user must exist) and retires the user's live challenges of the
	// same purpose (their UsedAt becomes c.CreatedAt): only the newest mail works, so a resend
	// never adds code attempts to older ones. Challenges that expired before c was created are
	// forgotten, so unused ones do not pile up.
	CreateChallenge(ctx context.Context, c domain.Challenge) error
	// GetChallengeByLink returns the challenge stored under the link's hash, live or not.
	GetChallengeByLink(ctx context.Context, linkHash []byte) (domain.Challenge, error)
	// GetChallenge returns the app's challenge with id, live or not.
	GetChallenge(ctx context.Context, appID, id string) (domain.Challenge, error)
	// RecordWrongCode counts one wrong code against the live challenge and returns it as stored;
	// a challenge that is not live at now is left as it is and answers domain.ErrChallengeSpent.
	// Counting is atomic: of MaxCodeAttempts+n concurrent wrong codes exactly MaxCodeAttempts count.
	RecordWrongCode(ctx context.Context, appID, id string, now time.Time) (domain.Challenge, error)
	// MeetChallenge marks the live challenge used at now and runs fn on a copy of its user, in one
	// transaction with both locked; it then commits the user as fn left it and the effect's events,
	// and revokes every refresh family of the user when the effect asks for it. When fn returns an
	// error nothing is written. A challenge that is not live at now answers
	// domain.ErrChallengeSpent and changes nothing: of two concurrent meetings exactly one succeeds.
	// A user write that would give the user another user's email answers domain.ErrEmailTaken.
	MeetChallenge(ctx context.Context, appID, id string, now time.Time, fn func(c domain.Challenge, u *domain.User) (ChallengeEffect, error)) (domain.User, error)
}

// ChallengeEffect is what meeting a challenge changes besides its user row.
type ChallengeEffect struct {
	Events []events.Event
	// RevokeSessions revokes every refresh family (session) of the user with the change: a password
	// reset must end every session the old password opened, or none of the change happens.
	RevokeSessions bool
	// SessionsRevoked, with RevokeSessions, makes the events of the sessions the change revoked:
	// the store calls it with the ids of the families that were live until then (sorted), inside
	// the transaction, and commits its events with the rest. It is not called when none was live,
	// and an error from it writes nothing.
	SessionsRevoked func(revoked []string) ([]events.Event, error)
}

// IdentityProviders stores the apps' identity-provider slots (idpA…idpD).
type IdentityProviders interface {
	// PutIdentityProvider stores p in its app's slot, replacing what the slot held (keeping the
	// slot's CreatedAt then). The app must exist.
	PutIdentityProvider(ctx context.Context, p domain.IdentityProvider) error
	// GetIdentityProvider returns the app's provider in slot, or domain.ErrNotFound for an empty slot.
	GetIdentityProvider(ctx context.Context, appID, slot string) (domain.IdentityProvider, error)
	// ListIdentityProviders returns the app's configured slots in slot order.
	ListIdentityProviders(ctx context.Context, appID string) ([]domain.IdentityProvider, error)
	// DeleteIdentityProvider empties the slot; an empty slot is no error. The slot's links stay, so
	// configuring the slot again with the same provider finds its users again.
	DeleteIdentityProvider(ctx context.Context, appID, slot string) error
}

// ProviderLinks stores which provider identity (slot and subject) signs in which user. A provider
// identity links to one user, and a user has at most one identity per slot: both answer
// domain.ErrProviderLinked when taken.
type ProviderLinks interface {
	// CreateProviderLink stores l and evs atomically; the user must exist.
	CreateProviderLink(ctx context.Context, l domain.ProviderLink, evs ...events.Event) error
	// CreateLinkedUser stores the user, its link and evs in one transaction, so that a user made by
	// a provider sign-in never exists without the link that signs it in (its email taken:
	// domain.ErrEmailTaken, and nothing is stored).
	CreateLinkedUser(ctx context.Context, u domain.User, l domain.ProviderLink, evs ...events.Event) error
	// GetProviderLink returns the link of the provider identity.
	GetProviderLink(ctx context.Context, appID, slot, subject string) (domain.ProviderLink, error)
	// ListProviderLinks returns the user's links in slot order.
	ListProviderLinks(ctx context.Context, appID, userID string) ([]domain.ProviderLink, error)
	// DeleteProviderLink deletes the user's link in slot in one transaction with the user held
	// (as UpdateUser holds it): fn gets the user to change, the link, the user's other links and
	// factors, and answers the events committed with the delete; an error from it writes nothing.
	// No link in the slot answers domain.ErrNotFound.
	DeleteProviderLink(ctx context.Context, appID, userID, slot string, fn func(u *domain.User, removed domain.ProviderLink, left []domain.ProviderLink, factors []domain.Factor) ([]events.Event, error)) error
}

// Factors stores users' second factors; their recovery codes are RecoveryCodes'.
type Factors interface {
	// SavePendingFactor stores f, not confirmed, as the user's pending factor of its kind,
	// replacing a pending one; the user must exist. When the kind is single
	// (domain.FactorKind.Single) and the user has a confirmed factor of it, it answers
	// domain.ErrFactorEnrolled and changes nothing.
	SavePendingFactor(ctx context.Context, f domain.Factor) error
	// ListFactors returns the user's factors, pending and confirmed, oldest first.
	ListFactors(ctx context.Context, appID, userID string) ([]domain.Factor, error)
	// ConfirmFactor marks the user's pending factor id confirmed at now with step as its last used
	// time step (or signature counter), replaces the user's recovery codes with codes (nil keeps
	// them) and commits evs, in one transaction. A factor that is not pending (absent, or confirmed already) answers
	// domain.ErrNotFound and nothing changes.
	ConfirmFactor(ctx context.Context, appID, userID, id string, step int64, now time.Time, codes []domain.RecoveryCode, evs ...events.Event) error
	// UseFactorStep records step as the confirmed factor's last used time step unless it accepted
	// that step or a later one already: then it answers domain.ErrCodeReplayed and changes
	// nothing. Of two concurrent uses of one step exactly one succeeds.
	UseFactorStep(ctx context.Context, appID, userID, id string, step int64) error
	// RemoveFactors deletes every factor and recovery code of the user and revokes every session
	// (refresh family) of the user, in one transaction. fn gets the removed factors (oldest first)
	// and the ids of the sessions that were live at now (sorted), and its events are committed
	// with the change; an error from it writes nothing.
	RemoveFactors(ctx context.Context, appID, userID string, now time.Time, fn func(removed []domain.Factor, revoked []string) ([]events.Event, error)) error
	// RemoveFactor deletes the user's confirmed factor id in one transaction with the user held,
	// and the user's recovery codes when no confirmed factor is left. fn gets the user, the factor,
	// the factors left and the user's provider links, and answers the events committed with the
	// delete; an error from it writes nothing. No such confirmed factor answers domain.ErrNotFound.
	RemoveFactor(ctx context.Context, appID, userID, id string, fn func(u domain.User, removed domain.Factor, left []domain.Factor, links []domain.ProviderLink) ([]events.Event, error)) error
}

// RecoveryCodes stores users' recovery codes, the one-time codes that stand in for a second
// factor.
type RecoveryCodes interface {
	// ReplaceRecoveryCodes replaces every recovery code of the user (used or not) with codes and
	// commits evs with them; the user must exist.
	ReplaceRecoveryCodes(ctx context.Context, appID, userID string, codes []domain.RecoveryCode, evs ...events.Event) error
	// UseRecoveryCode marks the user's unused code stored under hash used at now and commits the
	// events fn makes from the number of unused codes left. Without an unused code under hash it
	// answers domain.ErrNotFound and changes nothing: of two concurrent uses exactly one succeeds.
	UseRecoveryCode(ctx context.Context, appID, userID string, hash []byte, now time.Time, fn func(left int) ([]events.Event, error)) error
	// CountRecoveryCodes returns how many unused recovery codes the user has.
	CountRecoveryCodes(ctx context.Context, appID, userID string) (int, error)
}

// Tenants is the tenant service as sign-up needs it.
type Tenants interface {
	// CreateTenant creates the tenant of a user signing up and returns its id.
	CreateTenant(ctx context.Context, appID, name string) (string, error)
}

// Store is every port the identity use cases need; each adapter implements all of them over one
// database (or one lock) so that cross-entity rules hold.
type Store interface {
	Projects
	Apps
	APIKeys
	ProjectMembers
	OperatorKeys
	Users
	Roles
	AuthCodes
	RefreshTokens
	Sessions
	Attempts
	Referrals
	Challenges
	IdentityProviders
	ProviderLinks
	Factors
	RecoveryCodes
	MemberAccounts
	MemberSessions
	MemberFactors
	ProjectApps
}
