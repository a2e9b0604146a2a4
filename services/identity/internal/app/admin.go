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

// CreateProject provisions a project.
func (s *Service) CreateProject(ctx context.Context, name string) (domain.Project, error) {
	p, err := domain.NewProject(name, s.now())
	if err != nil {
		return domain.Project{}, err
	}
	if err := s.store.CreateProject(ctx, p); err != nil {
		return domain.Project{}, err
	}
	return p, nil
}

// NewApp is the admin API's app data. Zero lifetimes select the defaults.
type NewApp struct {
	ProjectID, Name                 string
	RedirectURIs                    []string
	AccessTokenTTL, RefreshTokenTTL time.Duration
	// EmailVerification is "required" or "optional"; "" is required, the default for new apps.
	EmailVerification string
	// MFA is "off", "optional" or "required"; "" is optional, the default for new apps.
	MFA string
}

// CreateApp provisions an enabled app of a project with a fresh signing key pair.
func (s *Service) CreateApp(ctx context.Context, in NewApp) (domain.App, error) {
	projectID := domain.CanonicalID(in.ProjectID)
	if _, err := s.store.GetProject(ctx, projectID); err != nil {
		return domain.App{}, err
	}
	a, err := domain.NewApp(projectID, in.Name, in.RedirectURIs, s.now())
	if err != nil {
		return domain.App{}, err
	}
	if err := a.SetTokenLifetimes(in.AccessTokenTTL, in.RefreshTokenTTL); err != nil {
		return domain.App{}, err
	}
	if a.EmailVerification, err = domain.ParseEmailVerification("emailVerification", in.EmailVerification); err != nil {
		return domain.App{}, err
	}
	if a.MFA, err = domain.ParseMFAPolicy("mfa", in.MFA); err != nil {
		return domain.App{}, err
	}
	kp, err := domain.GenerateKeyPair()
	if err != nil {
		return domain.App{}, err
	}
	if err := s.installKeyPair(&a, kp); err != nil {
		return domain.App{}, err
	}
	if err := s.store.CreateApp(ctx, a); err != nil {
		return domain.App{}, err
	}
	return a, nil
}

// installKeyPair puts kp into a, the private half sealed to the app id so that it cannot be moved
// to another app's row.
func (s *Service) installKeyPair(a *domain.App, kp domain.KeyPair) error {
	sealed, err := s.box.Seal(kp.PrivateDER, a.ID)
	if err != nil {
		return err
	}
	a.PublicKeyPEM, a.SealedPrivateKey = kp.PublicPEM, sealed
	return nil
}

// SetAppEnabled enables or disables an app; a disabled app's keys are refused (403). Setting the
// current state again changes nothing and emits no event.
func (s *Service) SetAppEnabled(ctx context.Context, appID string, enabled bool) (domain.App, error) {
	appID = domain.CanonicalID(appID)
	a, err := s.store.UpdateApp(ctx, appID, func(a *domain.App) ([]events.Event, error) {
		if a.Enabled == enabled {
			return nil, nil
		}
		a.Enabled, a.UpdatedAt = enabled, s.now()
		return event(identityv1.EventAppChanged, a.ID, &identityv1.AppChanged{AppId: a.ID, Enabled: enabled})
	})
	if err == nil {
		s.enabled(a.ID)
	}
	return a, err
}

// SetAppEmailVerification sets the app's email-verification policy ("required" or "optional").
// It applies to sign-ups and sign-ins from then on; users keep their verified flag either way.
// Setting the current policy again changes nothing.
func (s *Service) SetAppEmailVerification(ctx context.Context, appID, policy string) (domain.App, error) {
	if policy == "" {
		return domain.App{}, fault.InvalidField("policy", "must be %q or %q", domain.VerificationRequired, domain.VerificationOptional)
	}
	p, err := domain.ParseEmailVerification("policy", policy)
	if err != nil {
		return domain.App{}, err
	}
	return s.store.UpdateApp(ctx, domain.CanonicalID(appID), func(a *domain.App) ([]events.Event, error) {
		if a.EmailVerification == p {
			return nil, nil
		}
		// No event: nothing outside identity holds the policy.
		a.EmailVerification, a.UpdatedAt = p, s.now()
		return nil, nil
	})
}

// RotateAppKey replaces an app's key pair; the old key is discarded, so every token it signed stops
// verifying ("log out all users"), and the app's refresh tokens are revoked in the same store write
// so that no one signs back in silently. Every user who lost a live session gets an
// identity.sessions.revoked event (reason "key_rotated"): the event names one user, and a consumer
// that mirrors a user's sessions must learn of this ending like of any other.
func (s *Service) RotateAppKey(ctx context.Context, appID string) (domain.App, error) {
	appID = domain.CanonicalID(appID)
	// Generating an RSA key takes a while: do it before the store locks the app row.
	kp, err := domain.GenerateKeyPair()
	if err != nil {
		return domain.App{}, err
	}
	now := s.now()
	return s.store.RotateAppKey(ctx, appID, now, func(a *domain.App) ([]events.Event, error) {
		if err := s.installKeyPair(a, kp); err != nil {
			return nil, err
		}
		a.UpdatedAt = now
		return event(identityv1.EventAppChanged, a.ID, &identityv1.AppChanged{AppId: a.ID, Enabled: a.Enabled, KeyRotated: true})
	}, func(userID string, revoked []string) ([]events.Event, error) {
		return sessionsRevoked(appID, userID, domain.RevokedKeyRotated, true, now)(revoked)
	})
}

// NewUser is the admin API's initial user data.
type NewUser struct {
	AppID, TenantID                    string
	Email, Name, GivenName, FamilyName string
	Language                           string
	EmailVerified                      bool
}

// CreateUser provisions a user; the email must be unique within the app.
func (s *Service) CreateUser(ctx context.Context, in NewUser) (domain.User, error) {
	in.AppID = domain.CanonicalID(in.AppID)
	if _, err := s.store.GetApp(ctx, in.AppID); err != nil {
		return domain.User{}, err
	}
	profile := domain.UserPatch{Email: &in.Email, Name: &in.Name, GivenName: &in.GivenName, FamilyName: &in.FamilyName, Language: &in.Language}
	u, err := domain.NewUser(in.AppID, in.TenantID, profile, in.EmailVerified, s.now())
	if err != nil {
		return domain.User{}, err
	}
	if err := s.createUser(ctx, u); err != nil {
		return domain.User{}, err
	}
	return u, nil
}

// createUser stores a new user with its identity.user.created event, in one transaction: the
// read models learn of every user, also one that never signs in or changes, and a process that
// dies after the insert cannot leave a user they never hear of.
func (s *Service) createUser(ctx context.Context, u domain.User) error {
	evs, err := event(identityv1.EventUserCreated, u.AppID, convert.UserChanged(u, nil))
	if err != nil {
		return err
	}
	return s.store.CreateUser(ctx, u, evs...)
}

// CreateUserRole provisions a role of an app.
func (s *Service) CreateUserRole(ctx context.Context, appID, name string) (domain.UserRole, error) {
	appID = domain.CanonicalID(appID)
	if _, err := s.store.GetApp(ctx, appID); err != nil {
		return domain.UserRole{}, err
	}
	r, err := domain.NewUserRole(appID, name, s.now())
	if err != nil {
		return domain.UserRole{}, err
	}
	if err := s.store.CreateRole(ctx, r); err != nil {
		return domain.UserRole{}, err // domain.ErrRoleTaken names the field
	}
	return r, nil
}

// AddAppOrigin allows one more browser origin for an app (CORS) and tells the other services,
// whose cached token verifications carry the app's origins, to forget them. Adding an origin the
// app has already changes nothing and emits no event.
func (s *Service) AddAppOrigin(ctx context.Context, appID, origin string) (domain.App, error) {
	return s.changeOrigins(ctx, appID, func(a *domain.App) (bool, error) { return a.AddOrigin(origin) })
}

// RemoveAppOrigin takes back an origin an operator added.
func (s *Service) RemoveAppOrigin(ctx context.Context, appID, origin string) (domain.App, error) {
	return s.changeOrigins(ctx, appID, func(a *domain.App) (bool, error) { return true, a.RemoveOrigin(origin) })
}

// SetAppRedirectURIs replaces an app's redirect URIs. Their origins are browser origins of the
// app, so a change is an app.changed event with its origins changed, as for AddAppOrigin.
func (s *Service) SetAppRedirectURIs(ctx context.Context, appID string, uris []string) (domain.App, error) {
	return s.changeOrigins(ctx, appID, func(a *domain.App) (bool, error) { return a.SetRedirectURIs(uris) })
}

// SetAppTokenLifetimes sets how long the app's tokens live (0 each: the defaults). Only identity
// issues and refreshes tokens, so no event: tokens already issued keep their expiry.
func (s *Service) SetAppTokenLifetimes(ctx context.Context, appID string, access, refresh time.Duration) (domain.App, error) {
	appID = domain.CanonicalID(appID)
	if !domain.IsUUID(appID) {
		return domain.App{}, domain.NotFound("app")
	}
	return s.store.UpdateApp(ctx, appID, func(a *domain.App) ([]events.Event, error) {
		before := *a
		if err := a.SetTokenLifetimes(access, refresh); err != nil {
			return nil, err
		}
		if a.AccessTokenTTL != before.AccessTokenTTL || a.RefreshTokenTTL != before.RefreshTokenTTL {
			a.UpdatedAt = s.now()
		}
		return nil, nil
	})
}

func (s *Service) changeOrigins(ctx context.Context, appID string, change func(*domain.App) (bool, error)) (domain.App, error) {
	appID = domain.CanonicalID(appID)
	if !domain.IsUUID(appID) {
		return domain.App{}, domain.NotFound("app")
	}
	return s.store.UpdateApp(ctx, appID, func(a *domain.App) ([]events.Event, error) {
		changed, err := change(a)
		if err != nil || !changed {
			return nil, err
		}
		a.UpdatedAt = s.now()
		return event(identityv1.EventAppChanged, a.ID, &identityv1.AppChanged{AppId: a.ID, Enabled: a.Enabled, OriginsChanged: true})
	})
}

// SetAppBranding replaces an app's look on its hosted pages and mails and their default language
// (domain.NewBranding checks each value); empty values return to the neutral look in English. No
// event: nothing outside identity keeps the branding, and the pages ask for it on every request.
func (s *Service) SetAppBranding(ctx context.Context, appID, displayName, accentColor, logoURL, defaultLanguage string) (domain.App, error) {
	appID = domain.CanonicalID(appID)
	if !domain.IsUUID(appID) {
		return domain.App{}, domain.NotFound("app")
	}
	b, err := domain.NewBranding(displayName, accentColor, logoURL, defaultLanguage)
	if err != nil {
		return domain.App{}, err
	}
	return s.store.UpdateApp(ctx, appID, func(a *domain.App) ([]events.Event, error) {
		if a.Branding != b {
			a.Branding, a.UpdatedAt = b, s.now()
		}
		return nil, nil
	})
}

// GetApp returns an app (the operators' view of its origins).
func (s *Service) GetApp(ctx context.Context, appID string) (domain.App, error) {
	appID = domain.CanonicalID(appID)
	if !domain.IsUUID(appID) {
		return domain.App{}, domain.NotFound("app")
	}
	return s.store.GetApp(ctx, appID)
}

// ListWebOrigins is every browser origin that some app allows, deduplicated and sorted: the edge
// lets pages on them read its error answers (which carry no data), whatever app they belong to.
func (s *Service) ListWebOrigins(ctx context.Context) ([]string, error) {
	apps, err := s.store.ListApps(ctx)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, a := range apps {
		out = append(out, a.WebOrigins()...)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// AppWebOrigins implements authn.OriginSource: the access policy asks it on route 1, whose
// request names the app (client_id) instead of carrying a token.
func (s *Service) AppWebOrigins(ctx context.Context, appID string) ([]string, error) {
	a, err := s.GetApp(ctx, appID)
	if err != nil {
		return nil, err
	}
	return a.WebOrigins(), nil
}
