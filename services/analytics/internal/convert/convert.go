package convert

import (
	"strconv"
	"time"

	"github.com/berthhq/berth/pkg/protocopy"
	"github.com/berthhq/berth/services/analytics/internal/app"
	"github.com/berthhq/berth/services/analytics/internal/domain"

	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

// SignInList renders route 8's data.
func SignInList(items []app.SignInItem) *analyticsv1.SignInList {
	out := &analyticsv1.SignInList{Kind: "analyticsSignIn", ItemsLength: int32(len(items)), Items: make([]*analyticsv1.SignIn, len(items))}
	for i, it := range items {
		u := user(it.SignIn, it.User, it.Tenant)
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

// user renders the current snapshot of the sign-in's user. Without one (no event about the user
// carried its data yet) the item still names the user, with what the sign-in itself knows.
func user(in domain.SignIn, snap *app.UserSnapshot, tenant *app.TenantSnapshot) *analyticsv1.AnalyticsUser {
	if snap == nil {
		return &analyticsv1.AnalyticsUser{Id: in.UserID, AppId: in.AppID, TenantId: in.TenantRef != ""}
	}
	out := &analyticsv1.AnalyticsUser{
		Id:       snap.UserID,
		AppId:    snap.AppID,
		Deleted:  snap.Deleted || snap.User.GetDeleted(),
		TenantId: snap.TenantRef != "",
		Tenant:   analyticsTenant(tenant),
	}
	userFields.Copy(out, snap.User) // a user known only from its deletion has no data: nothing to copy
	return out
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
