package convert

import (
	"strconv"
	"time"

	"github.com/berthhq/berth/pkg/protocopy"
	"github.com/berthhq/berth/services/analytics/internal/app"

	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// SignInList renders route 8's data.
func SignInList(items []app.SignInItem) *analyticsv1.SignInList {
	out := &analyticsv1.SignInList{Kind: "analyticsSignIn", ItemsLength: int32(len(items)), Items: make([]*analyticsv1.SignIn, len(items))}
	for i, it := range items {
		u := user(it.SignIn.AppID, it.SignIn.UserID, it.SignIn.TenantRef, app.Payer{User: it.User, Tenant: it.Tenant})
		out.Items[i] = &analyticsv1.SignIn{
			Id:                  it.SignIn.ID,
			LastSignInAt:        it.SignIn.At.UTC().Format(time.RFC3339),
			DaysSinceLastSignIn: strconv.Itoa(it.DaysSince),
			NewsletterMemberId:  u.GetNewsletterMemberId(),
			User:                u,
		}
	}
	return out
}

// userFields copies identity's user into the analytics user: every scalar of the same name, except
// the ids, which come from the snapshot's key, and the flags analytics derives (deleted also when
// the deletion event came without data; tenantId from whether the user has a tenant).
var userFields = protocopy.Same(&analyticsv1.AnalyticsUser{}, &identityv1.TenantUser{}, "id", "appId", "deleted", "tenantId")

// tenantFields copies tenant's tenant into the analytics tenant, except the id, which comes from the
// snapshot's key.
var tenantFields = protocopy.Same(&analyticsv1.AnalyticsTenant{}, &tenantv1.Tenant{}, "id")

// user renders the current snapshot of the user an item names, with that user's current tenant.
// Without a snapshot (no event about the user carried its data yet) the item still names the
// user, with what the item itself knows (tenantRef: the user's tenant as the item recorded it).
func user(appID, userID, tenantRef string, p app.Payer) *analyticsv1.AnalyticsUser {
	snap := p.User
	if snap == nil {
		return &analyticsv1.AnalyticsUser{Id: userID, AppId: appID, TenantId: tenantRef != ""}
	}
	out := &analyticsv1.AnalyticsUser{
		Id:       snap.UserID,
		AppId:    snap.AppID,
		Deleted:  snap.Deleted || snap.User.GetDeleted(),
		TenantId: snap.TenantRef != "",
		Tenant:   analyticsTenant(p.Tenant),
	}
	userFields.Copy(out, snap.User) // a user known only from its deletion has no data: nothing to copy
	return out
}

// payer renders the user who paid, or nil (JSON null) when an API key started the payment.
func payer(appID, userID, tenantID string, p app.Payer) *analyticsv1.AnalyticsUser {
	if userID == "" {
		return nil
	}
	return user(appID, userID, tenantID, p)
}

// Subscription renders route 6's item. The coupon field is always empty: Berth's checkouts apply
// no provider coupons (its promotions are its own, route 24).
func Subscription(rec app.SubscriptionRecord) *analyticsv1.Subscription {
	s := rec.Subscription
	u := payer(s.AppID, s.UserID, s.TenantID, rec.Payer)
	return &analyticsv1.Subscription{
		Id: s.ID, Paid: s.Paid, Test: s.Test, Cancelled: s.Cancelled, Until: epochSeconds(s.Until),
		PspxSubscriptionId: s.SubscriptionID, PspxPriceId: s.PriceID, PspxCustomerId: s.CustomerID,
		UserId: s.UserID, NewsletterMemberId: u.GetNewsletterMemberId(), AppId: s.AppID, TenantId: s.TenantID, User: u,
	}
}

// OneTimePayment renders route 7's item. A payment is recorded once it is paid, so paid is always
// true; the coupon is empty as for subscriptions.
func OneTimePayment(rec app.OneTimePaymentRecord) *analyticsv1.OneTimePayment {
	p := rec.Payment
	u := payer(p.AppID, p.UserID, p.TenantID, rec.Payer)
	return &analyticsv1.OneTimePayment{
		Id: p.ID, Paid: true, Test: p.Test, PspxPriceId: p.PriceID, Units: float64(p.Units), UnitsBefore: float64(p.UnitsBefore),
		PspxCustomerId: p.CustomerID, NewsletterMemberId: u.GetNewsletterMemberId(), User: u,
	}
}

// tenantItemFields copies tenant's tenant into route 9's item; tenantUserFields identity's user
// into its users (password, never copied, stays empty).
var (
	tenantItemFields = protocopy.Same(&analyticsv1.TenantItem{}, &tenantv1.Tenant{}, "id")
	tenantUserFields = protocopy.Same(&analyticsv1.AnalyticsTenantUser{}, &identityv1.TenantUser{}, "id", "appId", "password")
)

// TenantItem renders route 9's item: the tenant, its addresses that are set, and its users.
func TenantItem(rec app.TenantRecord) *analyticsv1.TenantItem {
	t := rec.Tenant
	out := &analyticsv1.TenantItem{Id: t.TenantID, TenantAddresses: []*tenantv1.Address{}, Users: make([]*analyticsv1.AnalyticsTenantUser, len(rec.Users))}
	tenantItemFields.Copy(out, t.Tenant)
	for _, a := range []*tenantv1.Address{t.Tenant.GetShippingAddress(), t.Tenant.GetBillingAddress()} {
		if a != nil {
			out.TenantAddresses = append(out.TenantAddresses, a)
		}
	}
	for i, u := range rec.Users {
		tu := &analyticsv1.AnalyticsTenantUser{Id: u.UserID, AppId: u.AppID}
		tenantUserFields.Copy(tu, u.User)
		out.Users[i] = tu
	}
	return out
}

// epochSeconds is t in seconds since the epoch, 0 for the zero time.
func epochSeconds(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.Unix())
}

// analyticsTenant renders a tenant snapshot without addresses and users; nil stays nil (JSON null).
func analyticsTenant(snap *app.TenantSnapshot) *analyticsv1.AnalyticsTenant {
	if snap == nil || snap.Tenant == nil {
		return nil
	}
	out := &analyticsv1.AnalyticsTenant{Id: snap.TenantID}
	tenantFields.Copy(out, snap.Tenant)
	return out
}
