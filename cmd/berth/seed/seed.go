// Package seed provisions the demo data of the all-in-one run through the same admin gRPC APIs an
// operator uses (berthctl), so the demo exercises the real provisioning path.
package seed

import (
	"context"
	"fmt"
	"net/url"

	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
	"google.golang.org/protobuf/proto"
)

// Demo is what the seed created; it is written to .berth/demo.json.
type Demo struct {
	BaseURL     string `json:"baseUrl"`
	RedirectURI string `json:"redirectUri"`
	// State is the demo's `state` (DemoState): the sign-up link and the checkouts send it.
	State string `json:"state"`
	// ExampleURI is the first app's second redirect URI, the example app's page ("" for none).
	ExampleURI string   `json:"exampleUri,omitempty"`
	ProjectID  string   `json:"projectId"`
	AppID      string   `json:"appId"`
	ReadKey    string   `json:"readKey"`
	WriteKey   string   `json:"writeKey"`
	TenantID   string   `json:"tenantId"`
	UserIDs    []string `json:"userIds"`
	// PromotionCode is an active promotion of the app (route 24 redeems it).
	PromotionCode string `json:"promotionCode"`
	// Sandbox names the provider sandboxes' API base URLs.
	Sandbox Sandbox `json:"sandbox"`
	// Pspx is the first app's pspx connection (test mode) and the sandbox objects it sells.
	Pspx PspxDemo `json:"pspx"`
	// PspyApp is the second demo app, connected to pspy.
	PspyApp PspyDemo `json:"pspyApp"`
	// Idp are the first app's identity-provider slots (idpA, idpB), each configured against the
	// sandbox's OpenID Connect provider of the same name; empty without an identity-provider sandbox.
	Idp map[string]IdpDemo `json:"idp,omitempty"`
	// Console is the demo project's member who signs in to the web console (zero when the run
	// had no mailbox to invite them through, Options.Invitation).
	Console ConsoleDemo `json:"console"`
}

// Sandbox is where the provider sandboxes answer.
type Sandbox struct {
	Pspx string `json:"pspx"`
	Pspy string `json:"pspy"`
	// Idp is the OpenID Connect providers' base URL (provider P's issuer is Idp + "/" + P); ""
	// configures no identity provider.
	Idp string `json:"idp,omitempty"`
}

// IdpDemo is one identity-provider slot of the demo app: the sandbox provider's issuer and the
// client the app is registered as there (its secret is sealed in identity and nowhere else).
type IdpDemo struct {
	DisplayName string `json:"displayName"`
	Issuer      string `json:"issuer"`
	ClientID    string `json:"clientId"`
}

// DemoIdpSlots are the slots the demo app has configured, with their buttons' names.
var DemoIdpSlots = []struct{ Slot, DisplayName string }{{"idpA", "Sandbox A"}, {"idpB", "Sandbox B"}}

// Prices are the ids of a one-time, a monthly and a yearly price.
type Prices struct {
	OneTime string `json:"oneTime"`
	Monthly string `json:"monthly"`
	Yearly  string `json:"yearly"`
}

// PspxDemo is the first app's pspx connection.
type PspxDemo struct {
	ConnectionID  string `json:"connectionId"`
	WebhookSecret string `json:"webhookSecret"`
	Prices        Prices `json:"prices"`
	TaxRate       string `json:"taxRate"`
}

// PspyDemo is the second demo app, on pspy.
type PspyDemo struct {
	AppID        string   `json:"appId"`
	ReadKey      string   `json:"readKey"`
	WriteKey     string   `json:"writeKey"`
	TenantID     string   `json:"tenantId"`
	UserIDs      []string `json:"userIds"`
	ProviderUUID string   `json:"providerUuid"`
	Prices       Prices   `json:"prices"`
	TaxRate      string   `json:"taxRate"`
}

// Admin holds the provisioning clients (their connections must send the admin token, but
// Members', which must send the service token: it accepts the console member's invitation as the
// console does).
type Admin struct {
	Identity identityv1.IdentityAdminServiceClient
	Tenant   tenantv1.TenantAdminServiceClient
	Billing  billingv1.BillingAdminServiceClient
	Members  identityv1.MemberServiceClient
}

// Options say where the demo lives.
type Options struct {
	BaseURL     string // the REST edge
	RedirectURI string // the demo apps' redirect URI (and their payment return URL unless PaidURL)
	// PaidURL, when set, is where the payer lands after a checkout of either app, with the app's
	// client_id in the query: a page that knows which app's tenant to show.
	PaidURL string
	// ExampleURI, when set, is a second redirect URI of the first app: the example app's page.
	ExampleURI string
	Sandbox    Sandbox
	// EmailVerification is both apps' email-verification policy; "" is the default of new apps
	// (required), which make run's demo app shows.
	EmailVerification string
	// Invitation answers the token of the console invitation last mailed to an address (the
	// run's mailbox holds it); nil seeds no console member.
	Invitation func(email string) (string, error)
}

// Run creates a project with a console member (Console) and two apps. The first, on pspx, has a read and a write API key, two
// user roles, a tenant with shipping and billing addresses, two users of that tenant, an active
// promotion code, and sandbox prices (one-time, monthly, yearly) and a tax rate. The second has
// the same keys, tenant and users, is connected to pspy and has the same prices in its catalog.
func Run(ctx context.Context, a Admin, o Options) (Demo, error) {
	d := Demo{BaseURL: o.BaseURL, RedirectURI: o.RedirectURI, State: DemoState, ExampleURI: o.ExampleURI, Sandbox: o.Sandbox}
	project, err := a.Identity.CreateProject(ctx, &identityv1.CreateProjectRequest{Name: "Demo project"})
	if err != nil {
		return d, fmt.Errorf("project: %w", err)
	}
	d.ProjectID = project.GetId()
	if d.Console, err = seedConsole(ctx, a, d.ProjectID, o); err != nil {
		return d, err
	}
	firstURIs := []string{o.RedirectURI}
	if o.ExampleURI != "" {
		firstURIs = append(firstURIs, o.ExampleURI)
	}
	first, err := seedApp(ctx, a, d.ProjectID, "Demo app", firstURIs, "example.com", o.EmailVerification)
	if err != nil {
		return d, err
	}
	d.AppID, d.ReadKey, d.WriteKey, d.TenantID, d.UserIDs = first.AppID, first.ReadKey, first.WriteKey, first.TenantID, first.UserIDs
	for _, role := range []string{"admin", "member"} {
		if _, err := a.Identity.CreateUserRole(ctx, &identityv1.CreateUserRoleRequest{AppId: d.AppID, Name: role}); err != nil {
			return d, fmt.Errorf("role %s: %w", role, err)
		}
	}
	promo, err := a.Billing.CreatePromotion(ctx, &billingv1.CreatePromotionRequest{AppId: d.AppID, Code: "WELCOME30",
		Name: "Welcome", Description: "30 free days and 5 free units", FreeUnits: 5, FreeDays: 30, MaxRedemptions: 1000})
	if err != nil {
		return d, fmt.Errorf("promotion: %w", err)
	}
	d.PromotionCode = promo.GetCode()
	if d.Pspx, err = seedPspx(ctx, a, d.AppID, o); err != nil {
		return d, err
	}
	if d.Idp, err = seedIdp(ctx, a, d.AppID, o); err != nil {
		return d, err
	}

	if d.PspyApp, err = seedApp(ctx, a, d.ProjectID, "Demo app on pspy", []string{o.RedirectURI}, "example.org", o.EmailVerification); err != nil {
		return d, err
	}
	if err := seedPspy(ctx, a, &d.PspyApp, o); err != nil {
		return d, err
	}
	return d, nil
}

// seedApp creates an app with a read and a write key, a tenant with addresses and two users.
func seedApp(ctx context.Context, a Admin, projectID, name string, redirectURIs []string, emailDomain, verification string) (PspyDemo, error) {
	var d PspyDemo
	app, err := a.Identity.CreateApp(ctx, &identityv1.CreateAppRequest{ProjectId: projectID, Name: name, RedirectUris: redirectURIs,
		EmailVerification: verification})
	if err != nil {
		return d, fmt.Errorf("app %s: %w", name, err)
	}
	d.AppID = app.GetId()
	if d.ReadKey, d.WriteKey, err = createKeys(ctx, a, d.AppID); err != nil {
		return d, err
	}
	address := func(name string) *tenantv1.AddressPatch {
		return &tenantv1.AddressPatch{Name: proto.String(name), Line1: proto.String("1 Harbour Street"), City: proto.String("Hamburg"), PostalCode: proto.String("20457"), Country: proto.String("DE")}
	}
	t, err := a.Tenant.CreateTenant(ctx, &tenantv1.CreateTenantRequest{AppId: d.AppID, Name: "Demo tenant", Description: "Seeded demo tenant", ShippingAddress: address("Demo Shipping"), BillingAddress: address("Demo Billing")})
	if err != nil {
		return d, fmt.Errorf("tenant: %w", err)
	}
	d.TenantID = t.GetId()
	for _, u := range []struct{ local, given, family string }{{"ada", "Ada", "Lovelace"}, {"grace", "Grace", "Hopper"}} {
		user, err := a.Identity.CreateUser(ctx, &identityv1.CreateUserRequest{AppId: d.AppID, TenantId: d.TenantID, Email: u.local + "@" + emailDomain,
			Name: u.given + " " + u.family, GivenName: u.given, FamilyName: u.family, Language: "en", EmailVerified: true})
		if err != nil {
			return d, fmt.Errorf("user %s: %w", u.local, err)
		}
		d.UserIDs = append(d.UserIDs, user.GetId())
	}
	return d, nil
}

// createKeys creates the demo app's read and write API keys: their secrets show only here.
func createKeys(ctx context.Context, a Admin, appID string) (read, write string, err error) {
	for _, k := range []struct {
		typ  string
		dest *string
	}{{"read", &read}, {"write", &write}} {
		key, err := a.Identity.CreateApiKey(ctx, &identityv1.CreateApiKeyRequest{AppId: appID, Type: k.typ, Name: "Demo " + k.typ + " key", Description: "Created by the demo seed"})
		if err != nil {
			return "", "", fmt.Errorf("%s key: %w", k.typ, err)
		}
		*k.dest = key.GetSecret()
	}
	return read, write, nil
}

// PspxWebhookEvents are the pspx event types Berth acts on: the ones an operator enables on the
// provider's webhook endpoint for route 3 (any other type is accepted and changes nothing, and
// objects without a customer are refused, so enabling more only costs deliveries).
var PspxWebhookEvents = []string{
	"checkout.session.completed", "checkout.session.async_payment_succeeded", "checkout.session.async_payment_failed",
	"checkout.session.expired", "invoice.created", "invoice.paid", "invoice.voided", "invoice.marked_uncollectible",
	"customer.subscription.deleted",
}

// seedPspx makes sandbox keys, registers Berth's route 3 as the test account's webhook endpoint,
// connects the app with the keys and the endpoint's signing secret, making it the connection the
// app's checkouts use, and creates its prices and tax rate in the sandbox, as an operator would in
// the provider's dashboard.
func seedPspx(ctx context.Context, a Admin, appID string, o Options) (PspxDemo, error) {
	var d PspxDemo
	testKey, liveKey := "sk_test_"+randomAlnum(24), "sk_live_"+randomAlnum(24)
	dash := dashboard{base: o.Sandbox.Pspx, key: testKey}
	// The provider shows an endpoint's signing secret once, in the answer that creates it.
	var endpoint struct {
		Secret string `json:"secret"`
	}
	if err := dash.post(ctx, "/v1/webhook_endpoints", url.Values{"url": {o.BaseURL + "/api/v1/webhooks/pspx"},
		"enabled_events[]": PspxWebhookEvents, "description": {"Berth"}}, &endpoint); err != nil {
		return d, err
	}
	d.WebhookSecret = endpoint.Secret
	conn, err := a.Billing.CreateConnection(ctx, &billingv1.CreateConnectionRequest{AppId: appID, Provider: billingv1.Provider_PROVIDER_PSPX,
		TestSecretKey: testKey, LiveSecretKey: liveKey, TestWebhookSecret: d.WebhookSecret})
	if err != nil {
		return d, fmt.Errorf("pspx connection: %w", err)
	}
	d.ConnectionID = conn.GetId()
	if _, err := a.Billing.UpdateAppSettings(ctx, &billingv1.UpdateAppSettingsRequest{AppId: appID, ConnectionId: proto.String(d.ConnectionID),
		PaymentReturnUrl:       o.paidURL(appID),
		RenewalLineDescription: proto.String("Demo plan × {quantity}, {start} to {end}")}); err != nil {
		return d, fmt.Errorf("pspx app settings: %w", err)
	}
	product, err := dash.create(ctx, "/v1/products", url.Values{"name": {"Demo plan"}})
	if err != nil {
		return d, err
	}
	for _, p := range []struct {
		dest     *string
		amount   string
		interval string
	}{{&d.Prices.OneTime, "500", ""}, {&d.Prices.Monthly, "990", "month"}, {&d.Prices.Yearly, "9900", "year"}} {
		form := url.Values{"product": {product}, "unit_amount": {p.amount}, "currency": {"eur"}}
		if p.interval != "" {
			form.Set("recurring[interval]", p.interval)
		}
		if *p.dest, err = dash.create(ctx, "/v1/prices", form); err != nil {
			return d, err
		}
	}
	d.TaxRate, err = dash.create(ctx, "/v1/tax_rates", url.Values{"display_name": {"VAT"}, "percentage": {"19"}, "inclusive": {"false"}, "country": {"DE"}})
	return d, err
}

// seedPspy connects the second app to pspy and fills its catalog.
func seedPspy(ctx context.Context, a Admin, d *PspyDemo, o Options) error {
	if err := connectPspy(ctx, a, d, o); err != nil {
		return err
	}
	for _, p := range []struct {
		dest     *string
		amount   int64
		interval string
	}{{&d.Prices.OneTime, 500, ""}, {&d.Prices.Monthly, 990, "1 month"}, {&d.Prices.Yearly, 9900, "12 months"}} {
		price, err := a.Billing.CreateCatalogPrice(ctx, &billingv1.CreateCatalogPriceRequest{AppId: d.AppID, ProductName: "Demo plan",
			Amount: p.amount, Currency: "EUR", Interval: p.interval})
		if err != nil {
			return fmt.Errorf("pspy price: %w", err)
		}
		*p.dest = price.GetId()
	}
	rate, err := a.Billing.CreateCatalogTaxRate(ctx, &billingv1.CreateCatalogTaxRateRequest{AppId: d.AppID, DisplayName: "VAT", BasisPoints: 1900})
	if err != nil {
		return fmt.Errorf("pspy tax rate: %w", err)
	}
	d.TaxRate = rate.GetId()
	return nil
}

// connectPspy connects the second app to a pspy account with new sandbox keys, making it the
// connection the app's checkouts use, payments returning to o's PaidURL when it has one.
func connectPspy(ctx context.Context, a Admin, d *PspyDemo, o Options) error {
	conn, err := a.Billing.CreateConnection(ctx, &billingv1.CreateConnectionRequest{AppId: d.AppID, Provider: billingv1.Provider_PROVIDER_PSPY,
		TestSecretKey: "test_" + randomAlnum(30), LiveSecretKey: "live_" + randomAlnum(30)})
	if err != nil {
		return fmt.Errorf("pspy connection: %w", err)
	}
	d.ProviderUUID = conn.GetId()
	if _, err := a.Billing.UpdateAppSettings(ctx, &billingv1.UpdateAppSettingsRequest{AppId: d.AppID, ConnectionId: proto.String(d.ProviderUUID),
		PaymentReturnUrl: o.paidURL(d.AppID)}); err != nil {
		return fmt.Errorf("pspy app settings: %w", err)
	}
	return nil
}

// paidURL is appID's payment return URL setting: PaidURL naming the app, or nil (unchanged, so the
// app's first redirect URI) without one.
func (o Options) paidURL(appID string) *string {
	if o.PaidURL == "" {
		return nil
	}
	return proto.String(o.PaidURL + "?" + url.Values{"client_id": {appID}}.Encode())
}

// LoginURL is the hosted sign-up page for the demo app.
func (d Demo) LoginURL() string {
	q := url.Values{"client_id": {d.AppID}, "state": {d.State}, "type": {"signUp"}, "redirect_uri": {d.RedirectURI}, "nonce": {"demo-nonce"}}
	return d.BaseURL + "/login?" + q.Encode()
}

// DemoState is the demo's `state`, 64 random letters and digits per process: the value an app
// sends with a sign-in or checkout and checks when the browser comes back, so a redirect it did
// not start (cross-site request forgery) is refused. The sign-up link and the checkout curls
// send it; the payment page link needs it appended.
var DemoState = randomAlnum(64)
