package app

import (
	"context"
	"slices"
	"time"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/fault"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/convert"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// MaxListedSessions bounds a session list: every sign-in starts a session, so a user (or a script
// signing in as one) may hold many; the most recently used are the ones a person looks for.
const MaxListedSessions = 100

// ListSessions lists the live sessions of a user of the caller's app. currentSession is the
// session of the calling access token ("" for an API key, or a token issued before tokens named
// their session); the session of that id is marked Current.
func (s *Service) ListSessions(ctx context.Context, callerApp, userID, currentSession string) ([]domain.Session, error) {
	userID, err := s.sessionsUser(ctx, callerApp, userID)
	if err != nil {
		return nil, err
	}
	families, err := s.store.ListSessions(ctx, callerApp, userID, s.now(), MaxListedSessions)
	if err != nil {
		return nil, err
	}
	out := make([]domain.Session, len(families))
	for i, f := range families {
		out[i] = domain.Session{RefreshFamily: f, Current: currentSession != "" && f.ID == currentSession}
	}
	return out, nil
}

// RevokeSession revokes one live session of a user of the caller's app: its refresh tokens stop
// working at once. A session that is revoked, expired, another user's or another app's is not
// found, like an absent one.
func (s *Service) RevokeSession(ctx context.Context, callerApp, userID, sessionID string) error {
	userID, err := s.sessionsUser(ctx, callerApp, userID)
	if err != nil {
		return err
	}
	sessionID = domain.CanonicalID(sessionID)
	if !domain.IsUUID(sessionID) {
		return fault.InvalidField("sessionId", "must be a UUID")
	}
	return s.revokeSessions(ctx, callerApp, userID, sessionID, domain.RevokedByUserRequest)
}

// RevokeSessions revokes every session of a user of the caller's app (sign out everywhere). A user
// without sessions is no error.
func (s *Service) RevokeSessions(ctx context.Context, callerApp, userID string) error {
	userID, err := s.sessionsUser(ctx, callerApp, userID)
	if err != nil {
		return err
	}
	return s.revokeSessions(ctx, callerApp, userID, "", domain.RevokedByUserRequest)
}

// sessionsUser checks the userId of a sessions route: a live user of the caller's app. A deleted
// user has no sessions to show or revoke and is not found, as GET /v1/users/me answers it.
func (s *Service) sessionsUser(ctx context.Context, callerApp, userID string) (string, error) {
	userID = domain.CanonicalID(userID)
	if !domain.IsUUID(userID) {
		return "", fault.InvalidField("userId", "must be a UUID")
	}
	u, err := s.store.GetUser(ctx, callerApp, userID)
	if err != nil {
		return "", err
	}
	if u.Deleted {
		return "", domain.NotFound("user")
	}
	return u.ID, nil
}

// revokeSessions revokes the user's sessions (sessionID "" for all of them) and writes
// identity.sessions.revoked for those that were live, in the revocation's transaction.
func (s *Service) revokeSessions(ctx context.Context, appID, userID, sessionID, reason string) error {
	now := s.now()
	_, err := s.store.RevokeSessions(ctx, appID, userID, sessionID, now, sessionsRevoked(appID, userID, reason, sessionID == "", now))
	return err
}

// sessionsRevoked makes the identity.sessions.revoked event of the sessions a revocation ended;
// all says whether it ended every session of the user.
func sessionsRevoked(appID, userID, reason string, all bool, now time.Time) func(revoked []string) ([]events.Event, error) {
	return func(revoked []string) ([]events.Event, error) {
		return event(identityv1.EventSessionsRevoked, appID, &identityv1.SessionsRevoked{
			AppId: appID, UserId: userID, SessionIds: slices.Clone(revoked), All: all,
			Reason: reason, At: convert.Timestamp(now),
		})
	}
}
