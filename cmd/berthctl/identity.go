package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// runIdentity runs the identity service's commands.
func runIdentity(ctx context.Context, conn grpc.ClientConnInterface, inv *invocation) (proto.Message, error) {
	fs := inv.fs
	var (
		name      = fs.String("name", "", "name")
		project   = fs.String("project", "", "project id")
		app       = fs.String("app", "", "app id")
		keyType   = fs.String("type", "", "API key type: read or write")
		descr     = fs.String("description", "", "description")
		tenantID  = fs.String("tenant", "", "tenant id")
		email     = fs.String("email", "", "email")
		given     = fs.String("given-name", "", "given name")
		family    = fs.String("family-name", "", "family name")
		language  = fs.String("language", "", "language")
		member    = fs.String("member", "", "project member id")
		ttl       = fs.Int("ttl", 3600, "operator token lifetime in seconds")
		accessTTL = fs.Int("access-ttl", 0, "access token lifetime in seconds (0: 15 minutes)")
		refresh   = fs.Int("refresh-ttl", 0, "refresh token lifetime in seconds (0: 30 days)")
		origin    = fs.String("origin", "", "browser origin scheme://host[:port]")
		display   = fs.String("display-name", "", "display name on hosted pages and mails (at most 100 characters)")
		accent    = fs.String("accent-color", "", "accent colour #rrggbb of buttons and links")
		logo      = fs.String("logo-url", "", "https URL of the logo shown on hosted pages and mails")
		defLang   = fs.String("default-language", "", "language of hosted pages and mails when the link and browser name none: en or de")
		policy    = fs.String("policy", "", "the policy app-email-verification, app-mfa or app-passkey-sign-in sets")
		verify    = fs.String("email-verification", "", "email-verification policy: required (the default) or optional")
		slot      = fs.String("slot", "", "identity-provider slot: idpA, idpB, idpC or idpD")
		clientID  = fs.String("client-id", "", "the app's client id at the identity provider")
		discovery = fs.String("discovery-url", "", "the provider's OpenID discovery URL (.well-known/openid-configuration)")
		issuer    = fs.String("issuer", "", "the provider's issuer, without -discovery-url")
		authURL   = fs.String("authorization-url", "", "the provider's authorization endpoint, without -discovery-url")
		tokenURL  = fs.String("token-url", "", "the provider's token endpoint, without -discovery-url")
		jwksURL   = fs.String("jwks-url", "", "the provider's JWKS URL, without -discovery-url")
		userinfo  = fs.String("userinfo-url", "", "the provider's userinfo endpoint")
		mfa       = fs.String("mfa", "", "second-factor policy: off, optional (the default) or required")
		userID    = fs.String("user", "", "user id")
		redirects multi
		scopes    multi
		domains   multi
	)
	fs.Var(&redirects, "redirect-uri", "allowed redirect URI (repeatable)")
	fs.Var(&scopes, "scope", "scope to ask the identity provider for (repeatable; default openid email profile)")
	fs.Var(&domains, "allowed-domain", "email domain that may sign in through the identity provider (repeatable; default any)")
	if err := inv.parse(); err != nil {
		return nil, err
	}
	c := identityv1.NewIdentityAdminServiceClient(conn)
	switch inv.cmd.name {
	case "project-create":
		return c.CreateProject(ctx, &identityv1.CreateProjectRequest{Name: *name})
	case "app-create":
		return c.CreateApp(ctx, &identityv1.CreateAppRequest{ProjectId: *project, Name: *name, RedirectUris: redirects, EmailVerification: *verify, Mfa: *mfa})
	case "app-email-verification":
		return c.SetAppEmailVerification(ctx, &identityv1.SetAppEmailVerificationRequest{AppId: *app, Policy: *policy})
	case "app-redirect-uris":
		return c.SetAppRedirectUris(ctx, &identityv1.SetAppRedirectUrisRequest{AppId: *app, RedirectUris: redirects})
	case "app-token-lifetimes":
		if *accessTTL < 0 || *accessTTL > math.MaxInt32 || *refresh < 0 || *refresh > math.MaxInt32 {
			return nil, fmt.Errorf("-access-ttl and -refresh-ttl are seconds between 0 and %d", math.MaxInt32)
		}
		return c.SetAppTokenLifetimes(ctx, &identityv1.SetAppTokenLifetimesRequest{AppId: *app, AccessTokenTtlSeconds: int32(*accessTTL),
			RefreshTokenTtlSeconds: int32(*refresh)})
	case "app-mfa":
		return c.SetAppMfa(ctx, &identityv1.SetAppMfaRequest{AppId: *app, Policy: *policy})
	case "app-passkey-sign-in":
		return c.SetAppPasskeySignIn(ctx, &identityv1.SetAppPasskeySignInRequest{AppId: *app, Enabled: *policy == "on"})
	case "user-mfa-reset":
		return c.ResetSecondFactors(ctx, &identityv1.ResetSecondFactorsRequest{AppId: *app, UserId: *userID})
	case "app-disable", "app-enable":
		return c.SetAppEnabled(ctx, &identityv1.SetAppEnabledRequest{AppId: *app, Enabled: inv.cmd.name == "app-enable"})
	case "app-rotate-key":
		return c.RotateAppKey(ctx, &identityv1.RotateAppKeyRequest{AppId: *app})
	case "app-origin-add":
		return c.AddAppOrigin(ctx, &identityv1.AppOriginRequest{AppId: *app, Origin: *origin})
	case "app-origin-remove":
		return c.RemoveAppOrigin(ctx, &identityv1.AppOriginRequest{AppId: *app, Origin: *origin})
	case "app-origins":
		return c.ListAppOrigins(ctx, &identityv1.ListAppOriginsRequest{AppId: *app})
	case "app-branding":
		return c.SetAppBranding(ctx, &identityv1.SetAppBrandingRequest{AppId: *app, Branding: &identityv1.AppBranding{
			DisplayName: *display, AccentColor: *accent, LogoUrl: *logo, DefaultLanguage: *defLang,
		}})
	case "app-idp-set":
		return c.SetAppIdentityProvider(ctx, &identityv1.SetAppIdentityProviderRequest{AppId: *app,
			ClientSecret: strings.TrimSpace(os.Getenv("IDP_CLIENT_SECRET")),
			Provider: &identityv1.IdentityProvider{Slot: *slot, DisplayName: *display, ClientId: *clientID, DiscoveryUrl: *discovery,
				Issuer: *issuer, AuthorizationUrl: *authURL, TokenUrl: *tokenURL, JwksUrl: *jwksURL, UserinfoUrl: *userinfo,
				Scopes: scopes, AllowedEmailDomains: domains}})
	case "app-idp-clear":
		return c.ClearAppIdentityProvider(ctx, &identityv1.ClearAppIdentityProviderRequest{AppId: *app, Slot: *slot})
	case "app-idps":
		return c.ListAppIdentityProviders(ctx, &identityv1.ListAppIdentityProvidersRequest{AppId: *app})
	case "key-create":
		return c.CreateApiKey(ctx, &identityv1.CreateApiKeyRequest{AppId: *app, Type: *keyType, Name: *name, Description: *descr})
	case "role-create":
		return c.CreateUserRole(ctx, &identityv1.CreateUserRoleRequest{AppId: *app, Name: *name})
	case "user-create":
		return c.CreateUser(ctx, &identityv1.CreateUserRequest{AppId: *app, TenantId: *tenantID, Email: *email, Name: *name,
			GivenName: *given, FamilyName: *family, Language: *language})
	case "member-add":
		return c.AddProjectMember(ctx, &identityv1.AddProjectMemberRequest{ProjectId: *project, Email: *email, Name: *name})
	default: // operator-token
		// The service enforces the lifetime limits (0 = one hour); this only keeps the value
		// inside int32.
		if *ttl < 0 || *ttl > math.MaxInt32 {
			return nil, usageError{errors.New("-ttl must be a number of seconds between 0 and 86400")}
		}
		return c.IssueOperatorToken(ctx, &identityv1.IssueOperatorTokenRequest{MemberId: *member, TtlSeconds: int32(*ttl)})
	}
}

// runTenant runs the tenant service's command.
func runTenant(ctx context.Context, conn grpc.ClientConnInterface, inv *invocation) (proto.Message, error) {
	name := inv.fs.String("name", "", "name")
	app := inv.fs.String("app", "", "app id")
	descr := inv.fs.String("description", "", "description")
	if err := inv.parse(); err != nil {
		return nil, err
	}
	return tenantv1.NewTenantAdminServiceClient(conn).CreateTenant(ctx, &tenantv1.CreateTenantRequest{AppId: *app, Name: *name, Description: *descr})
}
