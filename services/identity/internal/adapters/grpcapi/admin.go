package grpcapi

import (
	"context"
	"time"

	"google.golang.org/protobuf/types/known/emptypb"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/convert"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// AdminServer implements the operators' provisioning API.
type AdminServer struct {
	identityv1.UnimplementedIdentityAdminServiceServer
	svc *app.Service
}

// CreateProject provisions a project.
func (s *AdminServer) CreateProject(ctx context.Context, req *identityv1.CreateProjectRequest) (*identityv1.Project, error) {
	p, err := s.svc.CreateProject(ctx, req.GetName())
	if err != nil {
		return nil, err
	}
	return convert.Project(p), nil
}

// CreateApp provisions an app with a new key pair.
func (s *AdminServer) CreateApp(ctx context.Context, req *identityv1.CreateAppRequest) (*identityv1.App, error) {
	a, err := s.svc.CreateApp(ctx, app.NewApp{
		ProjectID: req.GetProjectId(), Name: req.GetName(), RedirectURIs: req.GetRedirectUris(),
		AccessTokenTTL:    time.Duration(req.GetAccessTokenTtlSeconds()) * time.Second,
		RefreshTokenTTL:   time.Duration(req.GetRefreshTokenTtlSeconds()) * time.Second,
		EmailVerification: req.GetEmailVerification(),
		MFA:               req.GetMfa(),
	})
	if err != nil {
		return nil, err
	}
	return convert.App(a), nil
}

// SetAppEnabled enables or disables an app.
func (s *AdminServer) SetAppEnabled(ctx context.Context, req *identityv1.SetAppEnabledRequest) (*identityv1.App, error) {
	a, err := s.svc.SetAppEnabled(ctx, req.GetAppId(), req.GetEnabled())
	if err != nil {
		return nil, err
	}
	return convert.App(a), nil
}

// SetAppEmailVerification sets the app's email-verification policy.
func (s *AdminServer) SetAppEmailVerification(ctx context.Context, req *identityv1.SetAppEmailVerificationRequest) (*identityv1.App, error) {
	a, err := s.svc.SetAppEmailVerification(ctx, req.GetAppId(), req.GetPolicy())
	if err != nil {
		return nil, err
	}
	return convert.App(a), nil
}

// SetAppMfa sets the app's second-factor policy.
func (s *AdminServer) SetAppMfa(ctx context.Context, req *identityv1.SetAppMfaRequest) (*identityv1.App, error) {
	a, err := s.svc.SetAppMFA(ctx, req.GetAppId(), req.GetPolicy())
	if err != nil {
		return nil, err
	}
	return convert.App(a), nil
}

// SetAppRedirectUris replaces the app's redirect URIs.
func (s *AdminServer) SetAppRedirectUris(ctx context.Context, req *identityv1.SetAppRedirectUrisRequest) (*identityv1.App, error) {
	a, err := s.svc.SetAppRedirectURIs(ctx, req.GetAppId(), req.GetRedirectUris())
	if err != nil {
		return nil, err
	}
	return convert.App(a), nil
}

// SetAppTokenLifetimes sets how long the app's tokens live.
func (s *AdminServer) SetAppTokenLifetimes(ctx context.Context, req *identityv1.SetAppTokenLifetimesRequest) (*identityv1.App, error) {
	a, err := s.svc.SetAppTokenLifetimes(ctx, req.GetAppId(), time.Duration(req.GetAccessTokenTtlSeconds())*time.Second,
		time.Duration(req.GetRefreshTokenTtlSeconds())*time.Second)
	if err != nil {
		return nil, err
	}
	return convert.App(a), nil
}

// SetAppPasskeySignIn sets whether the app's users may sign in with a passkey.
func (s *AdminServer) SetAppPasskeySignIn(ctx context.Context, req *identityv1.SetAppPasskeySignInRequest) (*identityv1.App, error) {
	a, err := s.svc.SetAppPasskeySignIn(ctx, req.GetAppId(), req.GetEnabled())
	if err != nil {
		return nil, err
	}
	return convert.App(a), nil
}

// ResetSecondFactors removes a user's second factors for an operator.
func (s *AdminServer) ResetSecondFactors(ctx context.Context, req *identityv1.ResetSecondFactorsRequest) (*emptypb.Empty, error) {
	if err := s.svc.RemoveSecondFactors(ctx, req.GetAppId(), req.GetUserId(), app.RemovedByOperator); err != nil {
		return nil, err
	}
	return &emptypb.Empty{}, nil
}

// RotateAppKey replaces an app's key pair.
func (s *AdminServer) RotateAppKey(ctx context.Context, req *identityv1.RotateAppKeyRequest) (*identityv1.App, error) {
	a, err := s.svc.RotateAppKey(ctx, req.GetAppId())
	if err != nil {
		return nil, err
	}
	return convert.App(a), nil
}

// CreateApiKey mints an API key; the response is the only place the full key ever appears.
func (s *AdminServer) CreateApiKey(ctx context.Context, req *identityv1.CreateApiKeyRequest) (*identityv1.CreatedApiKey, error) {
	k, full, err := s.svc.CreateAPIKey(ctx, req.GetAppId(), req.GetType(), req.GetName(), req.GetDescription())
	if err != nil {
		return nil, err
	}
	return &identityv1.CreatedApiKey{Key: convert.APIKey(k), Secret: full, AppId: k.AppID}, nil
}

// CreateUser provisions a user.
func (s *AdminServer) CreateUser(ctx context.Context, req *identityv1.CreateUserRequest) (*identityv1.User, error) {
	u, err := s.svc.CreateUser(ctx, app.NewUser{
		AppID: req.GetAppId(), TenantID: req.GetTenantId(), Email: req.GetEmail(), Name: req.GetName(),
		GivenName: req.GetGivenName(), FamilyName: req.GetFamilyName(), Language: req.GetLanguage(),
		EmailVerified: req.GetEmailVerified(),
	})
	if err != nil {
		return nil, err
	}
	return convert.User(u), nil
}

// CreateUserRole provisions a role.
func (s *AdminServer) CreateUserRole(ctx context.Context, req *identityv1.CreateUserRoleRequest) (*identityv1.UserRole, error) {
	r, err := s.svc.CreateUserRole(ctx, req.GetAppId(), req.GetName())
	if err != nil {
		return nil, err
	}
	return convert.UserRole(r), nil
}

// AddProjectMember makes someone an operator of a project.
func (s *AdminServer) AddProjectMember(ctx context.Context, req *identityv1.AddProjectMemberRequest) (*identityv1.ProjectMember, error) {
	m, err := s.svc.AddProjectMember(ctx, req.GetProjectId(), req.GetEmail(), req.GetName())
	if err != nil {
		return nil, err
	}
	return convert.ProjectMember(m), nil
}

// IssueOperatorToken issues route 2's Bearer token to a project member.
func (s *AdminServer) IssueOperatorToken(ctx context.Context, req *identityv1.IssueOperatorTokenRequest) (*identityv1.OperatorToken, error) {
	raw, exp, err := s.svc.IssueOperatorToken(ctx, req.GetMemberId(), time.Duration(req.GetTtlSeconds())*time.Second)
	if err != nil {
		return nil, err
	}
	return &identityv1.OperatorToken{Token: raw, ExpiresAt: convert.Timestamp(exp)}, nil
}

// AddAppOrigin allows one more browser origin for an app.
func (s *AdminServer) AddAppOrigin(ctx context.Context, req *identityv1.AppOriginRequest) (*identityv1.AppOrigins, error) {
	a, err := s.svc.AddAppOrigin(ctx, req.GetAppId(), req.GetOrigin())
	if err != nil {
		return nil, err
	}
	return convert.AppOrigins(a), nil
}

// RemoveAppOrigin takes back an origin an operator added.
func (s *AdminServer) RemoveAppOrigin(ctx context.Context, req *identityv1.AppOriginRequest) (*identityv1.AppOrigins, error) {
	a, err := s.svc.RemoveAppOrigin(ctx, req.GetAppId(), req.GetOrigin())
	if err != nil {
		return nil, err
	}
	return convert.AppOrigins(a), nil
}

// ListAppOrigins lists an app's allowed browser origins.
func (s *AdminServer) ListAppOrigins(ctx context.Context, req *identityv1.ListAppOriginsRequest) (*identityv1.AppOrigins, error) {
	a, err := s.svc.GetApp(ctx, req.GetAppId())
	if err != nil {
		return nil, err
	}
	return convert.AppOrigins(a), nil
}

// SetAppBranding sets an app's look on its hosted pages and mails and their default language.
func (s *AdminServer) SetAppBranding(ctx context.Context, req *identityv1.SetAppBrandingRequest) (*identityv1.App, error) {
	b := req.GetBranding()
	a, err := s.svc.SetAppBranding(ctx, req.GetAppId(), b.GetDisplayName(), b.GetAccentColor(), b.GetLogoUrl(), b.GetDefaultLanguage())
	if err != nil {
		return nil, err
	}
	return convert.App(a), nil
}

// SetAppIdentityProvider configures one of an app's identity-provider slots.
func (s *AdminServer) SetAppIdentityProvider(ctx context.Context, req *identityv1.SetAppIdentityProviderRequest) (*identityv1.AppIdentityProviders, error) {
	p := req.GetProvider()
	ps, err := s.svc.SetAppIdentityProvider(ctx, req.GetAppId(), app.ProviderInput{
		Slot: p.GetSlot(), ClientSecret: req.GetClientSecret(),
		Settings: domain.ProviderSettings{
			DisplayName: p.GetDisplayName(), DiscoveryURL: p.GetDiscoveryUrl(), Issuer: p.GetIssuer(), AuthURL: p.GetAuthorizationUrl(),
			TokenURL: p.GetTokenUrl(), UserinfoURL: p.GetUserinfoUrl(), JWKSURL: p.GetJwksUrl(), ClientID: p.GetClientId(),
			Scopes: p.GetScopes(), AllowedDomains: p.GetAllowedEmailDomains(),
		},
	})
	if err != nil {
		return nil, err
	}
	return convert.IdentityProviders(domain.CanonicalID(req.GetAppId()), ps), nil
}

// ClearAppIdentityProvider empties one of an app's identity-provider slots.
func (s *AdminServer) ClearAppIdentityProvider(ctx context.Context, req *identityv1.ClearAppIdentityProviderRequest) (*identityv1.AppIdentityProviders, error) {
	ps, err := s.svc.ClearAppIdentityProvider(ctx, req.GetAppId(), req.GetSlot())
	if err != nil {
		return nil, err
	}
	return convert.IdentityProviders(domain.CanonicalID(req.GetAppId()), ps), nil
}

// ListAppIdentityProviders lists an app's configured identity-provider slots.
func (s *AdminServer) ListAppIdentityProviders(ctx context.Context, req *identityv1.ListAppIdentityProvidersRequest) (*identityv1.AppIdentityProviders, error) {
	ps, err := s.svc.ListAppIdentityProviders(ctx, req.GetAppId())
	if err != nil {
		return nil, err
	}
	return convert.IdentityProviders(domain.CanonicalID(req.GetAppId()), ps), nil
}
