package authn

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/fault"
	edgev1 "github.com/berthhq/berth/proto/edge/v1"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// OperatorAudience is the aud of every operator token. A tenant access token names its app id
// there, so the audience tells the two kinds apart on routes that accept both in the same
// Authorization header, and each kind's verifier refuses the other's audience.
const OperatorAudience = "berth-operators"

// AppProjects names the project that owns an app, for operator routes that name an app
// (operator_app_field). It answers "" and no error for an app that does not exist; an error means
// the answer could not be found out (identity unreachable) and fails the call.
type AppProjects interface {
	AppProject(ctx context.Context, appID string) (string, error)
}

// claimsOperatorAudience reports whether raw, read without verification, claims the operator
// audience. It only chooses which verifier checks the token in full: a forged claim sends a token
// to the operator verifier, which refuses it for its signature like any other.
func claimsOperatorAudience(raw string) bool {
	var c jwt.RegisteredClaims
	if _, _, err := jwt.NewParser().ParseUnverified(raw, &c); err != nil {
		return false
	}
	return len(c.Audience) == 1 && c.Audience[0] == OperatorAudience
}

// admitOperator verifies an operator token.
func (p Policy) admitOperator(ctx context.Context, raw string) (*Principal, error) {
	if p.Operators == nil {
		return nil, fault.Unauthenticated("Unauthorized Token")
	}
	principal, err := p.Operators.VerifyOperatorToken(ctx, raw)
	if err != nil {
		return nil, err
	}
	principal.Kind = KindOperator
	return &principal, nil
}

// errOperatorOutsideProject answers an operator whose project does not own what the request
// names, the same whether the app or project exists or not, so a member learns nothing about
// other projects.
func errOperatorOutsideProject() error {
	return fault.Forbidden("the operator token is not valid for this app or project")
}

// operatorScope holds a project member's operator token to the member's project on a route that
// admits operators (operator: true): the request's operator_project_field must be the member's
// project, or the app in its operator_app_field must belong to it. On an app route the admitted
// Principal then carries that app, so handlers that act on the caller's app (CallerApp) act on it
// as they would for the app's own API key. Routes that take operator tokens for the member's own
// account (operator_token) are left to their handlers.
func (p Policy) operatorScope(ctx context.Context, r *edgev1.Route, req any, pr Principal) (Principal, error) {
	if !r.GetOperator() {
		return pr, nil
	}
	if pr.ProjectID == "" {
		return Principal{}, errOperatorOutsideProject()
	}
	switch {
	case r.GetOperatorProjectField() != "":
		if !strings.EqualFold(stringField(req, r.GetOperatorProjectField()), pr.ProjectID) {
			return Principal{}, errOperatorOutsideProject()
		}
		return pr, nil
	case r.GetOperatorAppField() != "":
		appID := strings.ToLower(stringField(req, r.GetOperatorAppField()))
		if appID == "" || p.Apps == nil {
			return Principal{}, errOperatorOutsideProject()
		}
		project, err := p.Apps.AppProject(ctx, appID)
		if err != nil {
			return Principal{}, err
		}
		if project == "" || !strings.EqualFold(project, pr.ProjectID) {
			return Principal{}, errOperatorOutsideProject()
		}
		pr.AppID = appID
		return pr, nil
	}
	return Principal{}, errOperatorOutsideProject()
}

type remoteOperators struct {
	client identityv1.IdentityInternalServiceClient
}

// NewRemoteOperatorVerifier verifies operator tokens by asking identity, which holds the operator
// key and the project members. The client's connection must send the service token.
func NewRemoteOperatorVerifier(c identityv1.IdentityInternalServiceClient) OperatorVerifier {
	return remoteOperators{client: c}
}

func (r remoteOperators) VerifyOperatorToken(ctx context.Context, raw string) (Principal, error) {
	res, err := r.client.VerifyOperatorToken(ctx, &identityv1.VerifyOperatorTokenRequest{OperatorToken: raw})
	if err != nil {
		return Principal{}, err
	}
	return Principal{Kind: KindOperator, ProjectID: res.GetProjectId(), UserID: res.GetMemberId(), expiresAt: tokenExpiry(raw)}, nil
}

// tokenExpiry reads the exp claim of a token identity has just verified (so the claim is genuine),
// for a cache never to keep it longer; the zero time when there is none.
func tokenExpiry(raw string) time.Time {
	var c jwt.RegisteredClaims
	if _, _, err := jwt.NewParser().ParseUnverified(raw, &c); err != nil || c.ExpiresAt == nil {
		return time.Time{}
	}
	return c.ExpiresAt.Time
}

// OperatorCache remembers verified operator tokens for a short time (RemoteTTL at most, never past
// the token's expiry), so a console page that calls a service several times asks identity once. A
// member who signs out is refused from the next call on (Watch); one removed from the project
// within that time.
type OperatorCache struct {
	inner OperatorVerifier
	cache *ttlCache[Principal]
}

// NewOperatorCache wraps inner with a cache whose entries live ttl at most.
func NewOperatorCache(inner OperatorVerifier, ttl time.Duration) *OperatorCache {
	return &OperatorCache{inner: inner, cache: newTTLCache[Principal](ttl)}
}

// VerifyOperatorToken implements OperatorVerifier.
func (c *OperatorCache) VerifyOperatorToken(ctx context.Context, raw string) (Principal, error) {
	return c.cache.get(raw,
		func() (Principal, error) { return c.inner.VerifyOperatorToken(ctx, raw) },
		func(p Principal) time.Time { return p.expiresAt })
}

// Forget drops the cached verifications of the member's operator tokens in the project.
func (c *OperatorCache) Forget(projectID, memberID string) {
	c.cache.forget(func(p Principal) bool { return p.ProjectID == projectID && p.UserID == memberID })
}

// EventMemberSessionEnded ends a console session early, and with it its operator token.
const EventMemberSessionEnded = identityv1.EventMemberSessionEnded

// Watch subscribes to the end of console sessions and forgets the member's cached tokens, on every
// replica (an ephemeral subscription), since each holds its own cache. The member's tokens of
// other sessions are verified again on their next use, which costs one call to identity.
func (c *OperatorCache) Watch(ctx context.Context, bus events.Bus) (stop func(), err error) {
	return bus.Subscribe(ctx, []eventsv1.Type{EventMemberSessionEnded}, func(ev events.Event) {
		var p identityv1.MemberSessionEnded
		if ev.Decode(&p) != nil {
			// An event we cannot read still ended some session: forget every member's tokens.
			c.cache.forget(func(Principal) bool { return true })
			return
		}
		c.Forget(p.GetProjectId(), p.GetMemberId())
	})
}

type remoteAppProjects struct {
	client identityv1.IdentityInternalServiceClient
}

// NewRemoteAppProjects asks identity which project owns an app.
func NewRemoteAppProjects(c identityv1.IdentityInternalServiceClient) AppProjects {
	return remoteAppProjects{client: c}
}

func (r remoteAppProjects) AppProject(ctx context.Context, appID string) (string, error) {
	res, err := r.client.GetAppProject(ctx, &identityv1.GetAppProjectRequest{AppId: appID})
	switch status.Code(err) {
	case codes.OK:
		return res.GetProjectId(), nil
	case codes.NotFound, codes.InvalidArgument:
		return "", nil
	}
	return "", err
}

// AppProjectTTL bounds how long an app's project is remembered. An app never moves to another
// project, so the bound only returns the memory of apps nobody names any more.
const AppProjectTTL = time.Hour

// AppProjectCache remembers which project owns an app. Only found apps are remembered, so an app
// created a moment ago is found at once.
type AppProjectCache struct {
	inner AppProjects
	cache *ttlCache[string]
}

// NewAppProjectCache wraps inner with a cache whose entries live ttl at most.
func NewAppProjectCache(inner AppProjects, ttl time.Duration) *AppProjectCache {
	return &AppProjectCache{inner: inner, cache: newTTLCache[string](ttl)}
}

// errUnknownApp keeps an absent app out of the cache (failures are never stored).
var errUnknownApp = errors.New("unknown app")

// AppProject implements AppProjects.
func (c *AppProjectCache) AppProject(ctx context.Context, appID string) (string, error) {
	project, err := c.cache.get(appID, func() (string, error) {
		project, err := c.inner.AppProject(ctx, appID)
		if err == nil && project == "" {
			return "", errUnknownApp
		}
		return project, err
	}, func(string) time.Time { return time.Time{} })
	if errors.Is(err, errUnknownApp) {
		return "", nil
	}
	return project, err
}
