package convert

import (
	"time"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// optTimestamp renders an optional time ("" when unset).
func optTimestamp(t *time.Time) string {
	if t == nil {
		return ""
	}
	return Timestamp(*t)
}

// UserSummary is one line of a user search.
func UserSummary(u domain.User) *identityv1.UserSummary {
	return &identityv1.UserSummary{
		Id: u.ID, Email: u.Email, Name: u.Name, EmailVerified: u.EmailVerified, Frozen: u.Frozen,
		TenantId: u.TenantID, CreatedAt: Timestamp(u.CreatedAt), LastSignInAt: optTimestamp(u.LastSignInAt),
	}
}

// UserPage is a page of a user search.
func UserPage(users []domain.User, next string) *identityv1.UserPage {
	out := &identityv1.UserPage{Users: make([]*identityv1.UserSummary, 0, len(users)), Next: next}
	for _, u := range users {
		out.Users = append(out.Users, UserSummary(u))
	}
	return out
}

// UserDetail is the console's view of one user: the route-14 profile beside what only the owner
// sees. A factor shows its kind and times, never its sealed secret; a link its slot and address,
// never the provider's subject.
func UserDetail(u domain.User, families []domain.RefreshFamily, links []domain.ProviderLink, factors []domain.Factor, recoveryCodesLeft int) *identityv1.UserDetail {
	sessions := make([]domain.Session, len(families))
	for i, f := range families {
		sessions[i] = domain.Session{RefreshFamily: f}
	}
	out := &identityv1.UserDetail{
		Profile: User(u), TenantId: u.TenantID, VerifiedByAdmin: u.VerifiedByAdmin,
		IdpAEmailVerified: u.IdpAEmailVerified, IdpBEmailVerified: u.IdpBEmailVerified,
		IdpCEmailVerified: u.IdpCEmailVerified, IdpDEmailVerified: u.IdpDEmailVerified,
		CreatedAt: Timestamp(u.CreatedAt), UpdatedAt: Timestamp(u.UpdatedAt),
		LastSignInAt: optTimestamp(u.LastSignInAt), LastSignInIp: u.LastSignInIP,
		Sessions:          Sessions(sessions).GetItems(),
		Providers:         make([]*identityv1.LinkedProvider, 0, len(links)),
		Factors:           make([]*identityv1.UserFactor, 0, len(factors)),
		RecoveryCodesLeft: int32(recoveryCodesLeft),
	}
	for _, l := range links {
		out.Providers = append(out.Providers, &identityv1.LinkedProvider{Slot: l.Slot, Email: l.Email, LinkedAt: Timestamp(l.CreatedAt)})
	}
	for _, f := range factors {
		lastUsed := ""
		if f.Kind == domain.FactorTOTP && f.LastStep > 0 {
			lastUsed = Timestamp(time.Unix(f.LastStep*domain.TOTPPeriod, 0))
		}
		out.Factors = append(out.Factors, &identityv1.UserFactor{
			Id: f.ID, Kind: string(f.Kind), CreatedAt: Timestamp(f.CreatedAt), ConfirmedAt: optTimestamp(f.ConfirmedAt), LastUsedAt: lastUsed,
		})
	}
	return out
}
