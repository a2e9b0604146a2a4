package app

import (
	"context"
	"errors"
	"log/slog"
	"net/url"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/locale"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/convert"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// AccountPath is the hosted account page under the deployment's public URL, where a link made
// from the page returns.
const AccountPath = "/account"

// The notices a link from the account page returns to the page with (its notice parameter): the
// page shows one fixed text for each.
const (
	NoticeLinked    = "linked"    // the provider identity signs the user in from now on
	NoticeLinkTaken = "linkTaken" // it signs another user in (or the slot was linked meanwhile): nothing changed
)

// Refusals of the account page's sign-in methods: Invalid faults on the form's field with a
// reason, so the page can say which rule held.
var (
	errLastWay = fault.InvalidField("slot", "this is the account's last way to sign in; set a password or link another provider first").
			WithReason("last_way")
	errLastPasskey = fault.InvalidField("kind", "this passkey is the account's last way to sign in").WithReason("last_way")
	errLastFactor  = fault.InvalidField("kind", "the app requires a second factor and this is the account's last one").
			WithReason("required")
	errSlotLinked = fault.InvalidField("slot", "the account has a link in this slot already; unlink it first").
			WithReason("linked")
)

// RemovedByUser says, in the removed event, that the user removed the factor on the account page.
const RemovedByUser = "user"

// accountPageURL is the account page of the app in language with notice.
func (s *Service) accountPageURL(appID, language, notice string) string {
	q := url.Values{"client_id": {appID}, "notice": {notice}}
	if language != "" {
		q.Set("language", language)
	}
	return s.publicURL + AccountPath + "?" + q.Encode()
}

// StartProviderLink begins linking a provider identity to the access token's user from the
// account page. It is the sign-in's flow (PKCE, state, nonce, sealed and bound to the browser by
// the hosted page's cookie) carrying the user, so the callback links instead of signing in. Being
// signed in to Berth and consenting at the provider proves both sides, so the provider's address
// need not be verified, nor be the account's.
func (s *Service) StartProviderLink(ctx context.Context, accessToken, slot, language string) (ProviderStart, error) {
	a, u, err := s.accountUser(ctx, accessToken)
	if err != nil {
		return ProviderStart{}, err
	}
	if s.publicURL == "" || s.providers == nil {
		return ProviderStart{}, fault.Unavailable(0, "linking identity providers needs the deployment's public URL")
	}
	if language != "" {
		var ok bool
		if language, ok = locale.Normalize(language); !ok {
			return ProviderStart{}, fault.InvalidField("language", "is not a language tag")
		}
	}
	idp, err := s.configuredProvider(ctx, a.ID, slot)
	if err != nil {
		return ProviderStart{}, err
	}
	links, err := s.store.ListProviderLinks(ctx, a.ID, u.ID)
	if err != nil {
		return ProviderStart{}, err
	}
	for _, l := range links {
		if l.Slot == idp.Slot {
			return ProviderStart{}, errSlotLinked
		}
	}
	return s.startFlow(ctx, idp, providerFlow{
		AppID: a.ID, Slot: idp.Slot, Params: LoginParams{ClientID: a.ID, RedirectURI: s.AccountCallbackURI()},
		LinkUser: u.ID, Language: language,
	})
}

// linkFromAccount ends a link flow at its callback: the verified provider identity is linked to
// the flow's user and the browser returns to the account page. An identity linked to another user
// is never moved: the page says so and nothing changes.
func (s *Service) linkFromAccount(ctx context.Context, a domain.App, idp domain.IdentityProvider, who ProviderIdentity, f providerFlow) (ProviderOutcome, error) {
	u, err := s.store.GetUser(ctx, a.ID, f.LinkUser)
	if err != nil {
		return ProviderOutcome{}, err
	}
	if err := inactive(u); err != nil {
		return ProviderOutcome{}, err
	}
	back := func(notice string) (ProviderOutcome, error) {
		return ProviderOutcome{URL: s.accountPageURL(a.ID, f.Language, notice)}, nil
	}
	existing, err := s.store.GetProviderLink(ctx, a.ID, idp.Slot, who.Subject)
	switch {
	case err == nil && existing.UserID == u.ID:
		return back(NoticeLinked)
	case err == nil:
		slog.InfoContext(ctx, "provider identity is linked to another user; not moved", slog.String("app_id", a.ID),
			slog.String("user_id", u.ID), slog.String("slot", idp.Slot))
		return back(NoticeLinkTaken)
	case !errors.Is(err, domain.ErrNotFound):
		return ProviderOutcome{}, err
	}
	email := who.Email
	if !domain.IsEmail(email) {
		email = "" // the link records what the provider named; a provider may name no address
	}
	l, err := domain.NewProviderLink(a.ID, idp.Slot, who.Subject, u.ID, email, s.now())
	if err != nil {
		return ProviderOutcome{}, err
	}
	evs, err := linkedEvent(u, l)
	if err != nil {
		return ProviderOutcome{}, err
	}
	if err := s.store.CreateProviderLink(ctx, l, evs...); err != nil {
		if errors.Is(err, domain.ErrProviderLinked) {
			// Another callback linked the identity or the slot meanwhile.
			return back(NoticeLinkTaken)
		}
		return ProviderOutcome{}, err
	}
	slog.InfoContext(ctx, "provider identity linked from the account page", slog.String("app_id", a.ID), slog.String("user_id", u.ID), slog.String("slot", idp.Slot))
	if _, err := s.recordProviderEmail(ctx, u, idp.Slot, who.EmailVerified); err != nil {
		return ProviderOutcome{}, err
	}
	return back(NoticeLinked)
}

// SignInMethods is how the account page's user signs in: the password, the app's configured
// provider slots (Link nil where the user has none) and the user's passkeys.
type SignInMethods struct {
	HasPassword   bool
	Providers     []AccountProvider
	Passkeys      []domain.Factor
	PasskeySignIn bool
}

// AccountProvider is one configured slot and the user's link in it.
type AccountProvider struct {
	Slot, DisplayName string
	Link              *domain.ProviderLink
}

// DescribeSignInMethods answers the sign-in methods of the access token's user.
func (s *Service) DescribeSignInMethods(ctx context.Context, accessToken string) (SignInMethods, error) {
	a, u, err := s.accountUser(ctx, accessToken)
	if err != nil {
		return SignInMethods{}, err
	}
	idps, err := s.store.ListIdentityProviders(ctx, a.ID)
	if err != nil {
		return SignInMethods{}, err
	}
	links, err := s.store.ListProviderLinks(ctx, a.ID, u.ID)
	if err != nil {
		return SignInMethods{}, err
	}
	factors, err := s.store.ListFactors(ctx, a.ID, u.ID)
	if err != nil {
		return SignInMethods{}, err
	}
	m := SignInMethods{HasPassword: u.PasswordHash != "", PasskeySignIn: s.OffersPasskeySignIn(a)}
	for _, idp := range idps {
		p := AccountProvider{Slot: idp.Slot, DisplayName: idp.DisplayName}
		for _, l := range links {
			if l.Slot == idp.Slot {
				p.Link = &l
			}
		}
		m.Providers = append(m.Providers, p)
	}
	for _, f := range factors {
		if f.Kind == domain.FactorPasskey && f.Confirmed() {
			m.Passkeys = append(m.Passkeys, f)
		}
	}
	return m, nil
}

// signInWayLeft reports whether u keeps a way to sign in on a with the links and factors left:
// a password, a provider link, or a passkey where the app lets passkeys sign in.
func (s *Service) signInWayLeft(a domain.App, u domain.User, links []domain.ProviderLink, factors []domain.Factor) bool {
	return u.PasswordHash != "" || len(links) > 0 || s.OffersPasskeySignIn(a) && countPasskeys(factors) > 0
}

// reauthenticate asks a user with a password for it again, like a sign-in under the same
// attempt limits, before the account page removes a way to sign in or a factor. A user without a
// password (made by a provider) has none to give: the page's own sign-in, at most one access
// token's life old, is that user's fresh proof.
func (s *Service) reauthenticate(ctx context.Context, u domain.User, current, ip string) error {
	if u.PasswordHash == "" {
		return nil
	}
	return s.checkCurrentPassword(ctx, u, current, ip)
}

// UnlinkInput is the account page's unlink form with the signed-in user's access token.
type UnlinkInput struct {
	AccessToken, Slot, Current, ClientIP string
}

// UnlinkProvider removes the token's user's link in the slot. The last way to sign in can never
// be removed: without a password, another link or (where the app allows passkey sign-in) a
// passkey, the unlink is refused, decided in the store's transaction so two unlinks at once cannot
// both pass. The user's idpX_email_verified of the slot goes false with it, as it speaks of a
// linked provider, and identity.user.provider_unlinked is written with the delete.
func (s *Service) UnlinkProvider(ctx context.Context, in UnlinkInput) error {
	a, u, err := s.accountUser(ctx, in.AccessToken)
	if err != nil {
		return err
	}
	if !domain.IsProviderSlot(in.Slot) {
		return domain.ErrBadSlot
	}
	if err := s.reauthenticate(ctx, u, in.Current, in.ClientIP); err != nil {
		return err
	}
	now := s.now()
	return s.store.DeleteProviderLink(ctx, a.ID, u.ID, in.Slot, func(x *domain.User, removed domain.ProviderLink, left []domain.ProviderLink, factors []domain.Factor) ([]events.Event, error) {
		if !s.signInWayLeft(a, *x, left, factors) {
			return nil, errLastWay
		}
		evs, err := event(identityv1.EventUserProviderUnlinked, a.ID, &identityv1.ProviderUnlinked{
			AppId: a.ID, UserId: x.ID, TenantRef: x.TenantID, Slot: removed.Slot, At: convert.Timestamp(now),
		})
		if err != nil {
			return nil, err
		}
		changed, err := x.SetProviderEmailVerified(removed.Slot, false, now)
		if err != nil || changed == "" {
			return evs, err
		}
		updated, err := event(identityv1.EventUserUpdated, a.ID, convert.UserChanged(*x, []string{changed}))
		return append(evs, updated...), err
	})
}

// RemoveFactorInput is the account page's form removing one second factor: Kind is
// domain.FactorTOTP, or domain.FactorPasskey with the passkey's FactorID.
type RemoveFactorInput struct {
	AccessToken, Kind, FactorID, Current, ClientIP string
}

// RemoveSecondFactor removes one second factor of the token's user after the current password.
// Under the app's required policy the last factor stays (the user would be made to enrol one at
// the next sign-in anyway); a passkey that is the last way to sign in stays too. When no factor is
// left the recovery codes go with the last one, as they only stand in for a factor. The removed
// event (by "user") is written with the delete and the user is mailed, as when an operator or the
// app removes factors, so that an owner whose page someone else used learns it at once. The
// user's sessions stay: the user removed the factor, not someone who must be locked out.
func (s *Service) RemoveSecondFactor(ctx context.Context, in RemoveFactorInput) error {
	a, u, err := s.accountUser(ctx, in.AccessToken)
	if err != nil {
		return err
	}
	factors, err := s.store.ListFactors(ctx, a.ID, u.ID)
	if err != nil {
		return err
	}
	id := ""
	for _, f := range factors {
		if !f.Confirmed() || string(f.Kind) != in.Kind {
			continue
		}
		if f.Kind == domain.FactorTOTP || f.ID == domain.CanonicalID(in.FactorID) {
			id = f.ID
		}
	}
	switch {
	case in.Kind != string(domain.FactorTOTP) && in.Kind != string(domain.FactorPasskey):
		return fault.InvalidField("kind", "must be %q or %q", domain.FactorTOTP, domain.FactorPasskey)
	case id == "":
		return domain.NotFound("second factor")
	}
	if err := s.reauthenticate(ctx, u, in.Current, in.ClientIP); err != nil {
		return err
	}
	err = s.store.RemoveFactor(ctx, a.ID, u.ID, id, func(x domain.User, removed domain.Factor, left []domain.Factor, links []domain.ProviderLink) ([]events.Event, error) {
		confirmed := 0
		for _, f := range left {
			if f.Confirmed() {
				confirmed++
			}
		}
		switch {
		case a.MFA == domain.MFARequired && confirmed == 0:
			return nil, errLastFactor
		case removed.Kind == domain.FactorPasskey && !s.signInWayLeft(a, x, links, left):
			return nil, errLastPasskey
		}
		return event(identityv1.EventSecondFactorRemoved, a.ID, &identityv1.SecondFactorChanged{
			AppId: a.ID, UserId: x.ID, Kinds: []string{string(removed.Kind)}, By: RemovedByUser,
		})
	})
	if err != nil {
		return err
	}
	return s.mailFactorsRemoved(ctx, a, u)
}
