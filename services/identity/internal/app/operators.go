package app

import (
	"context"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"fmt"
	"time"

	"github.com/google/uuid"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/fault"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/domain"
	"github.com/berthhq/berth/services/identity/internal/domain/token"
)

// Service is identity's operator-token verifier (route 2's and the operator routes' Bearer JWT)
// and names the project of an app for the operator routes that name an app.
var (
	_ authn.OperatorVerifier = (*Service)(nil)
	_ authn.AppProjects      = (*Service)(nil)
)

// Operator token lifetimes: short by default, because a token is a bearer credential for every
// app of the project, and never longer than a working day.
const (
	DefaultOperatorTokenTTL = time.Hour
	MaxOperatorTokenTTL     = 24 * time.Hour
)

// operatorKeyOwner is the sealbox owner of the operator key, so an app's sealed key copied into
// the operator row (or the reverse) does not open.
const operatorKeyOwner = "berth-operator-key"

// AddProjectMember makes someone an operator of a project's apps and, with a mailer, mails them
// the console's invitation in English (berthctl member-add): it is InviteMember's use case, so a
// member added either way is the same. Without a mailer the member is added for operator tokens
// alone, with no invitation that nobody would receive.
func (s *Service) AddProjectMember(ctx context.Context, projectID, email, name string) (domain.ProjectMember, error) {
	return s.inviteMember(ctx, projectID, email, name, "", false)
}

// IssueOperatorToken signs an operator token for a member: ttl 0 selects DefaultOperatorTokenTTL,
// anything negative or beyond MaxOperatorTokenTTL is refused. The token names no console
// session, so it works until it expires.
func (s *Service) IssueOperatorToken(ctx context.Context, memberID string, ttl time.Duration) (string, time.Time, error) {
	switch {
	case ttl == 0:
		ttl = DefaultOperatorTokenTTL
	case ttl < 0 || ttl > MaxOperatorTokenTTL:
		return "", time.Time{}, fault.InvalidField("ttlSeconds", "must be between 1 and %d seconds (0 = %d)",
			int(MaxOperatorTokenTTL.Seconds()), int(DefaultOperatorTokenTTL.Seconds()))
	}
	m, err := s.store.GetProjectMember(ctx, domain.CanonicalID(memberID))
	if err != nil {
		return "", time.Time{}, err
	}
	now := s.now().Truncate(time.Second)
	exp := now.Add(ttl)
	raw, err := s.signOperatorToken(ctx, m.ID, "", now, exp)
	return raw, exp, err
}

// signOperatorToken signs the operator token of member memberID issued at now, expiring at exp,
// in the console session sessionID ("" for none).
func (s *Service) signOperatorToken(ctx context.Context, memberID, sessionID string, now, exp time.Time) (string, error) {
	key, err := s.operatorKey(ctx)
	if err != nil {
		return "", err
	}
	return token.Sign(key, token.Thumbprint(&key.PublicKey), token.Operator{
		Issuer: token.OperatorIssuer(s.issuer), Subject: memberID, Audience: token.OperatorAudience,
		ID: uuid.NewString(), IssuedAt: now.Unix(), Expiry: exp.Unix(), SessionID: sessionID,
	})
}

func errBadOperatorToken() error { return fault.Unauthenticated("Unauthorized Token") }

// VerifyOperatorToken implements authn.OperatorVerifier: signature with the operator key, expiry,
// the operator issuer and audience, and a member that still exists; a token of a console session
// (sid) also needs the session live, so signing out ends it at once. The Principal names the
// member, its project and the session; whether that project is the one a call touches is the use
// case's check.
func (s *Service) VerifyOperatorToken(ctx context.Context, raw string) (authn.Principal, error) {
	key, err := s.operatorKey(ctx)
	if err != nil {
		return authn.Principal{}, fault.Internal(err)
	}
	v, err := token.VerifyOperator(raw, token.OperatorIssuer(s.issuer), &key.PublicKey, s.clock)
	if err != nil {
		return authn.Principal{}, errBadOperatorToken()
	}
	m, err := s.store.GetProjectMember(ctx, domain.CanonicalID(v.MemberID))
	if errors.Is(err, domain.ErrNotFound) {
		return authn.Principal{}, errBadOperatorToken()
	}
	if err != nil {
		return authn.Principal{}, fault.Internal(err)
	}
	if v.SessionID != "" {
		if err := s.liveMemberSession(ctx, v.SessionID, m.ID); err != nil {
			return authn.Principal{}, err
		}
	}
	return authn.Principal{Kind: authn.KindOperator, ProjectID: m.ProjectID, UserID: m.ID, SessionID: v.SessionID}, nil
}

// GetAppProject names an app, enabled or not, for another service's operator routes (which
// project owns it). An id that is not a UUID is invalid; an absent app is not found.
func (s *Service) GetAppProject(ctx context.Context, appID string) (domain.App, error) {
	appID = domain.CanonicalID(appID)
	if !domain.IsUUID(appID) {
		return domain.App{}, fault.InvalidField("appId", "must be a UUID")
	}
	return s.store.GetApp(ctx, appID)
}

// AppProject implements authn.AppProjects for identity's own policy: "" for an app that is absent
// or no app id at all.
func (s *Service) AppProject(ctx context.Context, appID string) (string, error) {
	a, err := s.GetAppProject(ctx, appID)
	if errors.Is(err, domain.ErrNotFound) || fault.Is(err, fault.KindInvalid) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	return a.ProjectID, nil
}

// operatorKey returns the deployment's operator signing key, creating and storing it (sealed) on
// first use. It never changes afterwards, so it is kept in memory once loaded.
func (s *Service) operatorKey(ctx context.Context) (*rsa.PrivateKey, error) {
	s.opMu.Lock()
	defer s.opMu.Unlock()
	if s.opKey != nil {
		return s.opKey, nil
	}
	sealed, err := s.store.GetOperatorKey(ctx)
	if errors.Is(err, domain.ErrNotFound) {
		sealed, err = s.createOperatorKey(ctx)
	}
	if err != nil {
		return nil, err
	}
	der, err := s.box.Open(sealed, operatorKeyOwner)
	if err != nil {
		return nil, fmt.Errorf("open operator key: %w", err)
	}
	k, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("parse operator key: %w", err)
	}
	rk, ok := k.(*rsa.PrivateKey)
	if !ok {
		return nil, errors.New("operator key is not RSA")
	}
	s.opKey = rk
	return rk, nil
}

// createOperatorKey generates a key and stores it unless another replica was first; either way it
// returns the stored one.
func (s *Service) createOperatorKey(ctx context.Context) ([]byte, error) {
	kp, err := domain.GenerateKeyPair()
	if err != nil {
		return nil, err
	}
	sealed, err := s.box.Seal(kp.PrivateDER, operatorKeyOwner)
	if err != nil {
		return nil, err
	}
	return s.store.CreateOperatorKey(ctx, sealed)
}

// APIKeyUpdate is route 2's request: the path ids and the optional body fields.
type APIKeyUpdate struct {
	ProjectID, AppID, KeyID string
	Name, Description       *string
}

// UpdateAPIKey is route 2: an operator renames or re-describes a key of an app of a project the
// operator is a member of. A member of another project gets the answer of an invalid token
// (401, as decided); an app outside the project or a key outside the app is not found; a disabled
// app is PermissionDenied. Emits identity.apikey.changed.
func (s *Service) UpdateAPIKey(ctx context.Context, memberID string, in APIKeyUpdate) (domain.APIKey, error) {
	in.ProjectID, in.AppID, in.KeyID = domain.CanonicalID(in.ProjectID), domain.CanonicalID(in.AppID), domain.CanonicalID(in.KeyID)
	for _, f := range []struct{ name, v string }{{"projectUuid", in.ProjectID}, {"appUuid", in.AppID}, {"apiKeyUuid", in.KeyID}} {
		if !domain.IsUUID(f.v) {
			return domain.APIKey{}, fault.InvalidField(f.name, "must be a UUID")
		}
	}
	m, err := s.store.GetProjectMember(ctx, memberID)
	if errors.Is(err, domain.ErrNotFound) || (err == nil && m.ProjectID != in.ProjectID) {
		return domain.APIKey{}, errBadOperatorToken()
	}
	if err != nil {
		return domain.APIKey{}, err
	}
	a, err := s.store.GetApp(ctx, in.AppID)
	if err != nil {
		return domain.APIKey{}, err
	}
	if a.ProjectID != in.ProjectID {
		return domain.APIKey{}, domain.NotFound("app")
	}
	return s.store.UpdateAPIKey(ctx, in.KeyID, func(k *domain.APIKey) ([]events.Event, error) {
		if k.AppID != a.ID || k.RevokedAt != nil {
			return nil, domain.NotFound("API key")
		}
		if !a.Enabled {
			return nil, fault.Forbidden("App Is Disabled")
		}
		if err := k.Describe(in.Name, in.Description, s.now()); err != nil {
			return nil, err
		}
		return event(identityv1.EventAPIKeyChanged, a.ID, &identityv1.ApiKeyChanged{AppId: a.ID, KeyId: k.ID})
	})
}
