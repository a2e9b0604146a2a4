package app_test

import (
	"encoding/json"
	"slices"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/services/outbound/internal/app"
	"github.com/berthhq/berth/services/outbound/internal/domain"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

const appID = "6f1c1a52-1d0e-4c5e-9a57-3f3c8d1f2a10"

func event(t *testing.T, typ eventsv1.Type, payload proto.Message) events.Event {
	t.Helper()
	ev, err := events.New("test", typ, appID, payload)
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

func TestMapDerivesEachPublicTypeFromTheCatalog(t *testing.T) {
	user := &identityv1.UserChanged{AppId: appID, UserId: "u1", User: &identityv1.TenantUser{Id: "u1", GivenName: "Ada"}}
	money := &billingv1.MoneyChanged{AppId: appID, TenantId: "t1", Revision: 7, PaymentId: "pay_1"}
	tenant := &tenantv1.TenantChanged{AppId: appID, TenantId: "t1", Tenant: &tenantv1.Tenant{Id: "t1"}, ChangedFields: []string{"name"}}
	deleted := &tenantv1.TenantChanged{AppId: appID, TenantId: "t1", Tenant: &tenantv1.Tenant{Id: "t1", Deleted: true}, ChangedFields: []string{"deleted"}}
	tests := []struct {
		typ     eventsv1.Type
		payload proto.Message
		want    []string
	}{
		{identityv1.EventUserCreated, user, []string{"user.created"}},
		{identityv1.EventUserUpdated, user, []string{"user.updated"}},
		{identityv1.EventUserFrozen, user, []string{"user.frozen"}},
		{identityv1.EventUserUnfrozen, user, []string{"user.unfrozen"}},
		{identityv1.EventUserDeleted, &identityv1.UserDeleted{AppId: appID, UserId: "u1"}, []string{"user.deleted"}},
		{identityv1.EventUserEmailVerified, &identityv1.EmailVerified{AppId: appID, UserId: "u1"}, []string{"user.email_verified"}},
		{identityv1.EventUserPasswordChanged, &identityv1.UserPasswordChanged{AppId: appID, UserId: "u1"}, []string{"user.password_changed"}},
		{identityv1.EventSessionsRevoked, &identityv1.SessionsRevoked{AppId: appID, UserId: "u1"}, []string{"user.sessions_revoked"}},
		{identityv1.EventUserSignedIn, &identityv1.UserSignedIn{AppId: appID}, nil},
		{identityv1.EventAppChanged, &identityv1.AppChanged{AppId: appID}, nil},
		{tenantv1.EventTenantCreated, tenant, []string{"tenant.created"}},
		{tenantv1.EventTenantUpdated, tenant, []string{"tenant.updated"}},
		{tenantv1.EventTenantUpdated, deleted, []string{"tenant.deleted"}},
		{billingv1.EventTenantFrozen, money, []string{"tenant.frozen"}},
		{billingv1.EventTenantUnfrozen, money, []string{"tenant.unfrozen"}},
		{billingv1.EventSubscriptionStarted, money, []string{"subscription.started", "payment.succeeded"}},
		{billingv1.EventSubscriptionRenewed, money, []string{"subscription.renewed", "payment.succeeded"}},
		{billingv1.EventSubscriptionChanged, money, []string{"subscription.changed"}},
		{billingv1.EventSubscriptionCancelled, money, []string{"subscription.cancelled"}},
		{billingv1.EventSubscriptionEnded, money, []string{"subscription.ended"}},
		{billingv1.EventPaymentOneTime, money, []string{"payment.succeeded"}},
		{billingv1.EventPaymentFailed, money, []string{"payment.failed"}},
		{billingv1.EventPromotionRedeemed, &billingv1.PromotionRedeemed{AppId: appID, Code: "SPRING"}, []string{"promotion.redeemed"}},
		{billingv1.EventPromotionRedeemed, &billingv1.PromotionRedeemed{AppId: appID, ReferredTenantId: "t2"}, []string{"referral.rewarded"}},
		{billingv1.EventTenantChanged, &billingv1.TenantBillingChanged{AppId: appID}, nil},
		{billingv1.EventTenantFirstPaid, &billingv1.TenantFirstPaid{AppId: appID}, nil},
	}
	covered := map[string]bool{}
	for _, tc := range tests {
		t.Run(string(tc.typ)+"/"+string(tc.payload.ProtoReflect().Descriptor().Name()), func(t *testing.T) {
			ev := event(t, tc.typ, tc.payload)
			pubs, err := app.Map(ev, tc.payload)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range pubs {
				got = append(got, p.Type)
				covered[p.Type] = true
				var body struct {
					Type      string         `json:"type"`
					Timestamp string         `json:"timestamp"`
					Data      map[string]any `json:"data"`
				}
				if err := json.Unmarshal(p.Body, &body); err != nil {
					t.Fatalf("body %s: %v", p.Body, err)
				}
				if body.Type != p.Type || body.Timestamp != ev.Time.UTC().Format(time.RFC3339Nano) {
					t.Errorf("body type %q timestamp %q, want %q at the event's time", body.Type, body.Timestamp, p.Type)
				}
				if body.Data["updatedAt"] != body.Timestamp || body.Data["appId"] != appID {
					t.Errorf("data %v lacks the app or updatedAt", body.Data)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("public types %v, want %v", got, tc.want)
			}
		})
	}
	for _, pt := range domain.PublicTypes {
		if !covered[pt] {
			t.Errorf("no internal event maps to the public type %s", pt)
		}
	}
}

func TestMapRendersTheResourceAsTheRoutesDo(t *testing.T) {
	u := &identityv1.UserChanged{AppId: appID, UserId: "u1", User: &identityv1.TenantUser{Id: "u1", GivenName: "Ada"}}
	pubs, err := app.Map(event(t, identityv1.EventUserUpdated, u), u)
	if err != nil || len(pubs) != 1 {
		t.Fatalf("Map: %v, %d events", err, len(pubs))
	}
	var body struct {
		Data struct {
			User          map[string]any `json:"user"`
			ChangedFields []string       `json:"changedFields"`
		} `json:"data"`
	}
	if err := json.Unmarshal(pubs[0].Body, &body); err != nil {
		t.Fatal(err)
	}
	// Route 14 writes proto names (given_name) and every field, zero values included.
	if body.Data.User["given_name"] != "Ada" || body.Data.User["nickname"] != "" || body.Data.ChangedFields == nil {
		t.Errorf("user rendered as %v, changedFields %v", body.Data.User, body.Data.ChangedFields)
	}
}

func TestInternalTypesSplitTheConsumedTypesByContext(t *testing.T) {
	var all []eventsv1.Type
	for _, c := range []string{"identity", "tenant", "billing"} {
		ts := app.InternalTypes(c)
		if len(ts) == 0 {
			t.Errorf("%s has no consumed types", c)
		}
		all = append(all, ts...)
	}
	if len(all) != 20 {
		t.Errorf("consumers read %d internal types, want the 20 the mapping names", len(all))
	}
	if got := app.InternalTypes("analytics"); len(got) != 0 {
		t.Errorf("analytics declares no events, got %v", got)
	}
}
