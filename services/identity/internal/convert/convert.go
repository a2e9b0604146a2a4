package convert

import (
	"time"

	"github.com/berthhq/berth/services/identity/internal/domain"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// Kinds of the resources this service returns, as the contract names them.
const (
	KindUser      = "user"
	KindUserRole  = "userRole"
	KindPublicKey = "publicKey"
	KindAPIKeys   = "appApiKeys"
	KindSession   = "session"
)

// Timestamp renders a time as the contract does: RFC 3339 in UTC ("" for the zero time).
func Timestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// User is the route-14 user item. tenantId is a boolean in the contract: true when the user belongs
// to a tenant.
func User(u domain.User) *identityv1.User {
	return &identityv1.User{
		Kind:                      KindUser,
		Id:                        u.ID,
		AppId:                     u.AppID,
		Language:                  u.Language,
		Salutation:                u.Salutation,
		SalutationOther:           u.SalutationOther,
		AcceptedNewsletter:        u.AcceptedNewsletter,
		AcceptedNewsletterDate:    u.AcceptedNewsletterDate,
		LastAskedNewsletterSignUp: u.LastAskedNewsletterSignUp,
		NewsletterMemberId:        u.NewsletterMemberID,
		Name:                      u.Name,
		GivenName:                 u.GivenName,
		FamilyName:                u.FamilyName,
		MiddleName:                u.MiddleName,
		Nickname:                  u.Nickname,
		PreferredUsername:         u.PreferredUsername,
		Profile:                   u.Profile,
		Picture:                   u.Picture,
		Website:                   u.Website,
		Email:                     u.Email,
		EmailVerified:             u.EmailVerified,
		Gender:                    u.Gender,
		OtherGender:               u.OtherGender,
		Birthdate:                 u.Birthdate,
		Zoneinfo:                  u.Zoneinfo,
		Locale:                    u.Locale,
		PhoneNumber:               u.PhoneNumber,
		PhoneNumberVerified:       u.PhoneNumberVerified,
		Freezed:                   u.Frozen,
		Deleted:                   u.Deleted,
		TenantId:                  u.TenantID != "",
	}
}

// TenantUser is the user as a tenant read lists it: the user fields plus verification flags, with
// lastSignInAt, lastSignInIp and tenantId as the documented booleans.
func TenantUser(u domain.User) *identityv1.TenantUser {
	return &identityv1.TenantUser{
		Id:                        u.ID,
		AppId:                     u.AppID,
		Language:                  u.Language,
		Salutation:                u.Salutation,
		SalutationOther:           u.SalutationOther,
		AcceptedNewsletter:        u.AcceptedNewsletter,
		AcceptedNewsletterDate:    u.AcceptedNewsletterDate,
		LastAskedNewsletterSignUp: u.LastAskedNewsletterSignUp,
		NewsletterMemberId:        u.NewsletterMemberID,
		Name:                      u.Name,
		GivenName:                 u.GivenName,
		FamilyName:                u.FamilyName,
		MiddleName:                u.MiddleName,
		Nickname:                  u.Nickname,
		PreferredUsername:         u.PreferredUsername,
		Profile:                   u.Profile,
		Picture:                   u.Picture,
		Website:                   u.Website,
		Email:                     u.Email,
		EmailVerified:             u.EmailVerified,
		Gender:                    u.Gender,
		OtherGender:               u.OtherGender,
		Birthdate:                 u.Birthdate,
		Zoneinfo:                  u.Zoneinfo,
		Locale:                    u.Locale,
		PhoneNumber:               u.PhoneNumber,
		PhoneNumberVerified:       u.PhoneNumberVerified,
		Freezed:                   u.Frozen,
		Deleted:                   u.Deleted,
		VerifiedByAdmin:           u.VerifiedByAdmin,
		IdpAEmailVerified:         u.IdpAEmailVerified,
		IdpBEmailVerified:         u.IdpBEmailVerified,
		IdpCEmailVerified:         u.IdpCEmailVerified,
		IdpDEmailVerified:         u.IdpDEmailVerified,
		LastSignInAt:              u.LastSignInAt != nil,
		LastSignInIp:              u.LastSignInIP != "",
		TenantId:                  u.TenantID != "",
	}
}

// UserChanged is the payload of the identity.user.* events.
func UserChanged(u domain.User, changedFields []string) *identityv1.UserChanged {
	return &identityv1.UserChanged{
		AppId: u.AppID, UserId: u.ID, TenantRef: u.TenantID, User: TenantUser(u), ChangedFields: changedFields,
	}
}

// UserRoles is the route-11 list.
func UserRoles(roles []domain.UserRole) *identityv1.UserRoleList {
	items := make([]*identityv1.UserRole, 0, len(roles))
	for _, r := range roles {
		items = append(items, UserRole(r))
	}
	return &identityv1.UserRoleList{Kind: KindUserRole, ItemsLength: int32(len(items)), Items: items}
}

// Sessions is a user's session list (kind "session").
func Sessions(sessions []domain.Session) *identityv1.SessionList {
	items := make([]*identityv1.Session, 0, len(sessions))
	for _, x := range sessions {
		items = append(items, &identityv1.Session{
			Id: x.ID, CreatedAt: Timestamp(x.CreatedAt), LastUsedAt: Timestamp(x.LastUsedAt),
			ClientIp: x.ClientIP, UserAgent: x.UserAgent, AppId: x.AppID, Current: x.Current,
		})
	}
	return &identityv1.SessionList{Kind: KindSession, ItemsLength: int32(len(items)), Items: items}
}

// UserRole is one role item.
func UserRole(r domain.UserRole) *identityv1.UserRole {
	return &identityv1.UserRole{Id: r.ID, Name: r.Name}
}

// Project is the admin API's project.
func Project(p domain.Project) *identityv1.Project {
	return &identityv1.Project{Id: p.ID, Name: p.Name, CreatedAt: Timestamp(p.CreatedAt)}
}

// App is the admin API's app. It carries the public key only; the sealed private key never leaves
// the service.
func App(a domain.App) *identityv1.App {
	return &identityv1.App{
		Id: a.ID, ProjectId: a.ProjectID, Name: a.Name, Enabled: a.Enabled,
		RedirectUris: a.RedirectURIs, PublicKey: a.PublicKeyPEM,
		CreatedAt: Timestamp(a.CreatedAt), UpdatedAt: Timestamp(a.UpdatedAt),
		AccessTokenTtlSeconds:  int32(a.AccessTokenTTL / time.Second),
		RefreshTokenTtlSeconds: int32(a.RefreshTokenTTL / time.Second),
		Branding:               Branding(a.Branding),
		EmailVerification:      string(a.EmailVerification),
		Mfa:                    string(a.MFA),
		PasskeySignIn:          a.PasskeySignIn,
	}
}

// Branding is an app's look as the admin API and the hosted pages receive it.
func Branding(b domain.Branding) *identityv1.AppBranding {
	return &identityv1.AppBranding{
		DisplayName: b.DisplayName, AccentColor: b.AccentColor, LogoUrl: b.LogoURL, DefaultLanguage: b.DefaultLanguage,
	}
}

// APIKey is the route-2 API key item (never the hash).
func APIKey(k domain.APIKey) *identityv1.ApiKey {
	return &identityv1.ApiKey{
		Uuid: k.ID, Name: k.Name, Type: string(k.Type),
		CreatedAt: Timestamp(k.CreatedAt), UpdatedAt: Timestamp(k.UpdatedAt),
	}
}

// APIKeyList is route 2's collection of the one updated key.
func APIKeyList(k domain.APIKey) *identityv1.ApiKeyList {
	return &identityv1.ApiKeyList{Kind: KindAPIKeys, TotalItems: 1, ItemsLength: 1, Items: []*identityv1.ApiKey{APIKey(k)}}
}

// ProjectMember is the admin API's view of a project member.
func ProjectMember(m domain.ProjectMember) *identityv1.ProjectMember {
	return &identityv1.ProjectMember{Id: m.ID, ProjectId: m.ProjectID, Email: m.Email, Name: m.Name, CreatedAt: Timestamp(m.CreatedAt)}
}

// AppOrigins is the operators' view of an app's browser origins.
func AppOrigins(a domain.App) *identityv1.AppOrigins {
	extra := a.ExtraOrigins
	if extra == nil {
		extra = []string{}
	}
	return &identityv1.AppOrigins{AppId: a.ID, Origins: extra, RedirectUriOrigins: a.RedirectOrigins(), Allowed: a.WebOrigins()}
}

// IdentityProviders is the admin API's view of an app's slots: everything but the secret, of
// which it says only whether one is stored.
func IdentityProviders(appID string, ps []domain.IdentityProvider) *identityv1.AppIdentityProviders {
	out := &identityv1.AppIdentityProviders{AppId: appID, Items: make([]*identityv1.IdentityProvider, 0, len(ps))}
	for _, p := range ps {
		out.Items = append(out.Items, &identityv1.IdentityProvider{
			Slot: p.Slot, DisplayName: p.DisplayName, DiscoveryUrl: p.DiscoveryURL, Issuer: p.Issuer,
			AuthorizationUrl: p.AuthURL, TokenUrl: p.TokenURL, UserinfoUrl: p.UserinfoURL, JwksUrl: p.JWKSURL,
			ClientId: p.ClientID, HasClientSecret: len(p.SealedSecret) > 0, Scopes: p.Scopes, AllowedEmailDomains: p.AllowedDomains,
		})
	}
	return out
}
