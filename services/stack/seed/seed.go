// Package seed provisions the demo data of the all-in-one run through the same admin gRPC APIs an
// operator uses (berthctl), so the demo exercises the real provisioning path.
package seed

import (
	"context"
	"fmt"
	"net/url"
	"time"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
	"google.golang.org/protobuf/proto"
)

// Demo is what the seed created; it is written to .berth/demo.json.
type Demo struct {
	BaseURL     string   `json:"baseUrl"`
	RedirectURI string   `json:"redirectUri"`
	ProjectID   string   `json:"projectId"`
	AppID       string   `json:"appId"`
	ReadKey     string   `json:"readKey"`
	WriteKey    string   `json:"writeKey"`
	TenantID    string   `json:"tenantId"`
	UserIDs     []string `json:"userIds"`
	// PromotionCode is an active promotion of the app (route 24 redeems it).
	PromotionCode string `json:"promotionCode"`
}

// Admin holds the provisioning clients (their connections must send the admin token).
type Admin struct {
	Identity identityv1.IdentityAdminServiceClient
	Tenant   tenantv1.TenantAdminServiceClient
	Billing  billingv1.BillingAdminServiceClient
}

// Run creates a project with one app (redirect URI redirectURI), a read and a write API key, two
// user roles, a tenant with shipping and billing addresses, two users of that tenant and an active
// promotion code.
func Run(ctx context.Context, a Admin, baseURL, redirectURI string) (Demo, error) {
	d := Demo{BaseURL: baseURL, RedirectURI: redirectURI}
	project, err := a.Identity.CreateProject(ctx, &identityv1.CreateProjectRequest{Name: "Demo project"})
	if err != nil {
		return d, fmt.Errorf("project: %w", err)
	}
	d.ProjectID = project.GetId()
	app, err := a.Identity.CreateApp(ctx, &identityv1.CreateAppRequest{ProjectId: d.ProjectID, Name: "Demo app", RedirectUris: []string{redirectURI}})
	if err != nil {
		return d, fmt.Errorf("app: %w", err)
	}
	d.AppID = app.GetId()
	for _, k := range []struct {
		typ  string
		dest *string
	}{{"read", &d.ReadKey}, {"write", &d.WriteKey}} {
		key, err := a.Identity.CreateApiKey(ctx, &identityv1.CreateApiKeyRequest{AppId: d.AppID, Type: k.typ, Name: "Demo " + k.typ + " key", Description: "Created by the demo seed"})
		if err != nil {
			return d, fmt.Errorf("%s key: %w", k.typ, err)
		}
		*k.dest = key.GetSecret()
	}
	for _, role := range []string{"admin", "member"} {
		if _, err := a.Identity.CreateUserRole(ctx, &identityv1.CreateUserRoleRequest{AppId: d.AppID, Name: role}); err != nil {
			return d, fmt.Errorf("role %s: %w", role, err)
		}
	}
	address := func(name string) *tenantv1.AddressPatch {
		return &tenantv1.AddressPatch{Name: proto.String(name), Line1: proto.String("1 Harbour Street"), City: proto.String("Hamburg"), PostalCode: proto.String("20457"), Country: proto.String("DE")}
	}
	t, err := a.Tenant.CreateTenant(ctx, &tenantv1.CreateTenantRequest{AppId: d.AppID, Name: "Demo tenant", Description: "Seeded demo tenant", ShippingAddress: address("Demo Shipping"), BillingAddress: address("Demo Billing")})
	if err != nil {
		return d, fmt.Errorf("tenant: %w", err)
	}
	d.TenantID = t.GetId()
	for _, u := range []struct{ email, given, family string }{{"ada@example.com", "Ada", "Lovelace"}, {"grace@example.com", "Grace", "Hopper"}} {
		user, err := a.Identity.CreateUser(ctx, &identityv1.CreateUserRequest{AppId: d.AppID, TenantId: d.TenantID, Email: u.email, Name: u.given + " " + u.family, GivenName: u.given, FamilyName: u.family, Language: "en", EmailVerified: true})
		if err != nil {
			return d, fmt.Errorf("user %s: %w", u.email, err)
		}
		d.UserIDs = append(d.UserIDs, user.GetId())
	}
	promo, err := a.Billing.CreatePromotion(ctx, &billingv1.CreatePromotionRequest{AppId: d.AppID, Code: "WELCOME30",
		Name: "Welcome", Description: "30 free days and 5 free units", FreeUnits: 5, FreeDays: 30, MaxRedemptions: 1000})
	if err != nil {
		return d, fmt.Errorf("promotion: %w", err)
	}
	d.PromotionCode = promo.GetCode()
	return d, nil
}

// LoginURL is the hosted sign-up page for the demo app.
func (d Demo) LoginURL() string {
	q := url.Values{"client_id": {d.AppID}, "state": {"demo-state"}, "type": {"signUp"}, "redirect_uri": {d.RedirectURI}, "nonce": {"demo-nonce"}}
	return d.BaseURL + "/login?" + q.Encode()
}

// TokenCurls are the commands of the sign-in walk-through: exchange the code the login page
// produced, then call the API as the signed-in user.
func (d Demo) TokenCurls() []string {
	read := fmt.Sprintf("-H 'X-API-KEY: %s' -H 'X-API-KEY-TYPE: read' -H 'X-CLIENT-ID: %s'", d.ReadKey, d.AppID)
	today := time.Now().UTC().Format(time.DateOnly)
	return []string{
		fmt.Sprintf(`curl -s -X POST -H 'Content-Type: application/json' -d '{"client_id":"%s","grant_type":"authorization_code","code":"<CODE>","redirect_uri":"%s","nonce":"demo-nonce"}' %s/api/v1/tokens`, d.AppID, d.RedirectURI, d.BaseURL),
		fmt.Sprintf("curl -s -H 'Authorization: Bearer <ACCESS_TOKEN>' %s/v1/users/me", d.BaseURL),
		fmt.Sprintf("curl -s -H 'Authorization: Bearer <ACCESS_TOKEN>' %s/v1/tenants/me", d.BaseURL),
		fmt.Sprintf("curl -s %s '%s/api/v1/analytics/sign-ins?from=%s&to=%s'", read, d.BaseURL, today, today),
	}
}

// Curls returns ready-to-paste commands that call the demo app's routes.
func (d Demo) Curls() []string {
	read := fmt.Sprintf("-H 'X-API-KEY: %s' -H 'X-API-KEY-TYPE: read' -H 'X-CLIENT-ID: %s'", d.ReadKey, d.AppID)
	write := fmt.Sprintf("-H 'X-API-KEY: %s' -H 'X-API-KEY-TYPE: write' -H 'X-CLIENT-ID: %s'", d.WriteKey, d.AppID)
	return []string{
		fmt.Sprintf("curl -s %s %s/v1/tenants/%s", read, d.BaseURL, d.TenantID),
		fmt.Sprintf("curl -s %s %s/v1/users/%s", read, d.BaseURL, d.UserIDs[0]),
		fmt.Sprintf("curl -s %s %s/v1/users/ada@example.com", read, d.BaseURL),
		fmt.Sprintf("curl -s %s %s/v1/apps/%s/user-roles", read, d.BaseURL, d.AppID),
		fmt.Sprintf("curl -s %s %s/v1/apps/%s/public-keys", read, d.BaseURL, d.AppID),
		fmt.Sprintf("curl -s -X PUT %s %s/v1/apps/%s/users/%s/access-status/0", write, d.BaseURL, d.AppID, d.UserIDs[1]),
		fmt.Sprintf("curl -s -X PUT %s -H 'Content-Type: application/json' -d '{\"user\":{\"nickname\":\"ada\"}}' %s/v1/users/%s", write, d.BaseURL, d.UserIDs[0]),
		fmt.Sprintf("curl -s -X PUT %s -H 'Content-Type: application/json' -d '{\"kind\":\"tenant\",\"companyName\":\"Demo GmbH\"}' %s/v1/tenants/%s", write, d.BaseURL, d.TenantID),
		fmt.Sprintf("curl -s %s %s/v1/apps/%s/promotions", read, d.BaseURL, d.AppID),
		fmt.Sprintf("curl -s -X PUT %s %s/v1/users/%s/promotion-codes/%s", write, d.BaseURL, d.UserIDs[0], d.PromotionCode),
	}
}
