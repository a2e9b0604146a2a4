package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/testkit/sandboxproc"
	eventsv1 "github.com/berthhq/berth/proto/events/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/adapters/oidc"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain"
)

// The provider sign-ins here run against the sandbox's OpenID Connect provider in a process of its
// own (services/sandbox/idp), driven through its authorize page's form as a browser would post it.
func TestMain(m *testing.M) { sandboxproc.Main(m) }

// idpRig is one test's provider in the sandbox, configured in slot idpA of the fixture's app.
type idpRig struct {
	f      *fixture
	issuer string
	http   *http.Client
}

const rigSecret = "a-client-secret-of-the-rig"

func newIdpRig(t *testing.T, f *fixture, configure func(*domain.ProviderSettings)) *idpRig {
	t.Helper()
	sb := sandboxproc.Parallel(t)
	f.now = sb.Now()
	r := &idpRig{f: f, issuer: sb.IdpURL + "/idpA-" + randomSuffix(),
		http: &http.Client{Timeout: 10 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	r.post(t, "/clients", map[string]any{"clientId": "berth", "clientSecret": rigSecret, "redirectUris": []string{"https://berth.test" + app.ProviderCallbackPath}})
	settings := domain.ProviderSettings{DisplayName: "Provider A", DiscoveryURL: r.issuer + "/.well-known/openid-configuration", ClientID: "berth"}
	if configure != nil {
		configure(&settings)
	}
	if _, err := f.svc.SetAppIdentityProvider(context.Background(), f.app.ID, app.ProviderInput{Slot: "idpA", Settings: settings, ClientSecret: rigSecret}); err != nil {
		t.Fatal(err)
	}
	return r
}

// withProviders gives the service the real provider client (adapters/oidc).
func withProviders(c *app.Config) { c.Providers = oidc.New(0) }

var suffixChars = regexp.MustCompile(`[^A-Za-z0-9_-]`)

func randomSuffix() string {
	s, _ := domain.NewState()
	return suffixChars.ReplaceAllString(s[:16], "x")
}

func (r *idpRig) post(t *testing.T, path string, body any) {
	t.Helper()
	raw, _ := json.Marshal(body)
	res, err := r.http.Post(r.issuer+path, "application/json", bytes.NewReader(raw))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	if res.StatusCode >= 300 {
		out, _ := io.ReadAll(res.Body)
		t.Fatalf("POST %s = %d: %s", path, res.StatusCode, out)
	}
}

// person is what the tester types on the provider's authorize page; deny presses Deny instead.
type person struct {
	email, name string
	verified    bool
	deny        bool
}

var requestField = regexp.MustCompile(`name="request" value="([^"]+)"`)

// consent starts a sign-in for the fixture's app, answers the provider's page as p and returns the
// callback the browser would bring back.
func (r *idpRig) consent(t *testing.T, p person) app.ProviderCallback {
	t.Helper()
	start, err := r.f.svc.StartProviderSignIn(context.Background(), loginParams(r.f), "idpA")
	if err != nil {
		t.Fatalf("StartProviderSignIn: %v", err)
	}
	return r.answer(t, start, p)
}

// answer answers the provider's page of a started flow as p and returns the callback.
func (r *idpRig) answer(t *testing.T, start app.ProviderStart, p person) app.ProviderCallback {
	t.Helper()
	res, err := r.http.Get(start.URL)
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(res.Body)
	_ = res.Body.Close()
	m := requestField.FindSubmatch(page)
	if m == nil {
		t.Fatalf("the provider's page (%d) has no request field:\n%s", res.StatusCode, page)
	}
	form := url.Values{"request": {string(m[1])}, "action": {"allow"}, "email": {p.email}, "name": {p.name}}
	if p.verified {
		form.Set("email_verified", "true")
	}
	if p.deny {
		form = url.Values{"request": {string(m[1])}, "action": {"deny"}}
	}
	res, err = r.http.PostForm(start.URL, form)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	back, err := url.Parse(res.Header.Get("Location"))
	if err != nil || res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(back.String(), "https://berth.test"+app.ProviderCallbackPath) {
		t.Fatalf("the provider answered %d to %q, want a 303 to the callback", res.StatusCode, res.Header.Get("Location"))
	}
	q := back.Query()
	return app.ProviderCallback{Flow: start.Flow, State: q.Get("state"), Code: q.Get("code"), Error: q.Get("error"),
		ErrorDescription: q.Get("error_description"), ClientIP: "192.0.2.7", UserAgent: "test"}
}

func loginParams(f *fixture) app.LoginParams {
	return app.LoginParams{ClientID: f.app.ID, RedirectURI: "https://app.test/cb", State: "app-state", Nonce: "app-nonce"}
}

// wantProviderRefusal fails unless err is the provider refusal of reason.
func wantProviderRefusal(t *testing.T, what string, err error, reason string) {
	t.Helper()
	if f, ok := fault.As(err); !ok || f.Kind() != fault.KindInvalid || f.Field() != "provider" || f.Reason() != reason {
		t.Errorf("%s: error = %v, want the provider refusal %q", what, err, reason)
	}
}

// landed checks that the outcome continues the app's authorization request with service=idpA and
// returns its code.
func landed(t *testing.T, o app.ProviderOutcome, err error) string {
	t.Helper()
	if err != nil {
		t.Fatalf("provider sign-in: %v", err)
	}
	u, perr := url.Parse(o.URL)
	if perr != nil || !strings.HasPrefix(o.URL, "https://app.test/cb?") {
		t.Fatalf("outcome = %+v, want the app's redirect URI", o)
	}
	q := u.Query()
	if q.Get("service") != "idpA" || q.Get("state") != "app-state" || q.Get("code") == "" {
		t.Fatalf("redirect query = %v, want code, the app's state and service=idpA", q)
	}
	return q.Get("code")
}

// signedIn finishes the sign-in of cb and checks that it landed on the app (landed).
func signedIn(t *testing.T, f *fixture, cb app.ProviderCallback) string {
	t.Helper()
	out, err := f.svc.FinishProviderSignIn(context.Background(), cb)
	return landed(t, out, err)
}

func TestAFirstProviderSignInCreatesTheUserAndTenantLinkedAndTheNextFindsItBySubject(t *testing.T) {
	f := newFixture(t, withProviders)
	rig := newIdpRig(t, f, nil)
	f.drain(t)
	ctx := context.Background()

	code := signedIn(t, f, rig.consent(t, person{email: "grace@example.test", name: "Grace H", verified: true}))
	u, err := f.store.GetUserByEmail(ctx, f.app.ID, "grace@example.test")
	if err != nil {
		t.Fatal(err)
	}
	if !u.IdpAEmailVerified || u.IdpBEmailVerified || u.EmailVerified || u.Name != "Grace H" || u.TenantID == "" || u.PasswordHash != "" {
		t.Errorf("created user = %+v, want idpA_email_verified, the claimed name, a tenant and no password", u)
	}
	evs := types(f.drain(t))
	for _, want := range []eventsv1.Type{identityv1.EventUserCreated, identityv1.EventUserProviderLinked, identityv1.EventUserSignedIn} {
		if !slices.Contains(evs, want) {
			t.Errorf("events = %v, want %s among them", evs, want)
		}
	}
	// The code is the app's, for route 1 with service=idpA.
	if _, err := f.svc.ExchangeToken(ctx, app.TokenRequest{ClientID: f.app.ID, GrantType: app.GrantAuthorizationCode, Code: code,
		RedirectURI: "https://app.test/cb", Service: "idpA"}); err != nil {
		t.Errorf("route 1 with service=idpA: %v", err)
	}

	signedIn(t, f, rig.consent(t, person{email: "grace@example.test", name: "Grace H", verified: true}))
	links, err := f.store.ListProviderLinks(ctx, f.app.ID, u.ID)
	if err != nil || len(links) != 1 {
		t.Errorf("links = %v, %v; want the one link", links, err)
	}
	if evs := types(f.drain(t)); slices.Contains(evs, identityv1.EventUserCreated) {
		t.Errorf("a returning sign-in wrote %v", evs)
	}
}

// The linking rules (docs/accounts.md): an address that has an account links only when the
// provider asserts it verified and the person gives the account's password; an unverified one
// never links and never creates a second account.
func TestTheLinkingRulesGuardExistingAccounts(t *testing.T) {
	const pw = "the account's own password"
	for _, tc := range []struct {
		name     string
		policy   string
		existing bool
		verified bool
		domains  []string
		want     string // "url", "link" or the refusal's reason
	}{
		{name: "new address, verified", policy: "required", verified: true, want: "url"},
		{name: "new address, unverified, app requires verified", policy: "required", want: app.ProviderReasonUnverified},
		{name: "new address, unverified, app lets verify later", policy: "optional", want: "url"},
		{name: "existing address, verified: confirm with the password", policy: "optional", existing: true, verified: true, want: "link"},
		{name: "existing address, unverified: never linked", policy: "optional", existing: true, want: app.ProviderReasonTaken},
		{name: "existing address, unverified, required policy", policy: "required", existing: true, want: app.ProviderReasonTaken},
		{name: "domain not allowed", policy: "optional", verified: true, domains: []string{"other.test"}, want: app.ProviderReasonDomain},
		{name: "domain allowed", policy: "optional", verified: true, domains: []string{"example.test"}, want: "url"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, withProviders)
			ctx := context.Background()
			rig := newIdpRig(t, f, func(s *domain.ProviderSettings) { s.AllowedDomains = tc.domains })
			email := "lin@example.test"
			if tc.existing {
				if _, err := f.svc.SignUp(ctx, app.SignUpInput{Params: loginParams(f), Email: email, Password: pw, ClientIP: "192.0.2.1"}); err != nil {
					t.Fatal(err)
				}
			}
			if _, err := f.svc.SetAppEmailVerification(ctx, f.app.ID, tc.policy); err != nil {
				t.Fatal(err)
			}
			before, _ := f.store.GetUserByEmail(ctx, f.app.ID, email)
			out, err := f.svc.FinishProviderSignIn(ctx, rig.consent(t, person{email: email, verified: tc.verified}))
			after, _ := f.store.GetUserByEmail(ctx, f.app.ID, email)
			switch tc.want {
			case "url":
				landed(t, out, err)
				return
			case "link":
				if err != nil || out.Link == "" || out.URL != "" || out.Email != email || out.ProviderName != "Provider A" {
					t.Fatalf("outcome = %+v, %v; want a link to confirm", out, err)
				}
			default:
				wantProviderRefusal(t, "sign-in", err, tc.want)
				if after.ID != before.ID {
					t.Errorf("a refused sign-in left user %q, want %q", after.ID, before.ID)
				}
				if before.ID != "" {
					if links, _ := f.store.ListProviderLinks(ctx, f.app.ID, before.ID); len(links) != 0 {
						t.Errorf("a refused sign-in linked %v", links)
					}
				}
				return
			}
			// Only the account's password confirms the link, and it is held to the sign-in limits.
			_, err = f.svc.ConfirmProviderLink(ctx, app.ConfirmLinkInput{Link: out.Link, Password: "not it", ClientIP: "192.0.2.7"})
			wantInvalid(t, err, "")
			_, err = f.svc.ConfirmProviderLink(ctx, app.ConfirmLinkInput{Link: out.Link + "x", Password: pw, ClientIP: "192.0.2.7"})
			wantProviderRefusal(t, "a tampered link", err, app.ProviderReasonLink)
			target, err := f.svc.ConfirmProviderLink(ctx, app.ConfirmLinkInput{Link: out.Link, Password: pw, ClientIP: "192.0.2.7"})
			landed(t, app.ProviderOutcome{URL: target.URL}, err)
			if links, _ := f.store.ListProviderLinks(ctx, f.app.ID, before.ID); len(links) != 1 || links[0].Slot != "idpA" {
				t.Errorf("links after the confirmation = %v", links)
			}
			if u, _ := f.store.GetUser(ctx, f.app.ID, before.ID); !u.IdpAEmailVerified {
				t.Error("idpA_email_verified stays false after a verified link")
			}
			_, err = f.svc.ConfirmProviderLink(ctx, app.ConfirmLinkInput{Link: out.Link, Password: pw, ClientIP: "192.0.2.7"})
			wantProviderRefusal(t, "the confirmation again", err, app.ProviderReasonLinked)
			// From now on the provider alone signs the account in.
			signedIn(t, f, rig.consent(t, person{email: email, verified: true}))
		})
	}
}

// Every way a provider sign-in can go wrong ends in a refusal that names its reason, never an
// internal error.
func TestProviderFailuresAreRefusalsWithTheirReason(t *testing.T) {
	ctx := context.Background()
	ada := person{email: "err@example.test", verified: true}
	for _, tc := range []struct {
		name   string
		faults map[string]any
		mangle func(f *fixture, cb *app.ProviderCallback)
		want   string
	}{
		{name: "denied consent", want: app.ProviderReasonDenied},
		{name: "a state that is not the flow's", mangle: func(_ *fixture, cb *app.ProviderCallback) { cb.State += "x" }, want: app.ProviderReasonState},
		{name: "no flow", mangle: func(_ *fixture, cb *app.ProviderCallback) { cb.Flow = "" }, want: app.ProviderReasonState},
		{name: "a forged flow", mangle: func(_ *fixture, cb *app.ProviderCallback) { cb.Flow = cb.Flow[:len(cb.Flow)-2] + "AA" }, want: app.ProviderReasonState},
		{name: "an expired flow", mangle: func(f *fixture, _ *app.ProviderCallback) { f.now = f.now.Add(11 * time.Minute) }, want: app.ProviderReasonState},
		{name: "a code that is not the provider's", mangle: func(_ *fixture, cb *app.ProviderCallback) { cb.Code = "forged" }, want: app.ProviderReasonCode},
		{name: "a bad signature", faults: map[string]any{"badSignature": true}, want: app.ProviderReasonToken},
		{name: "the wrong issuer", faults: map[string]any{"wrongIssuer": true}, want: app.ProviderReasonToken},
		{name: "a provider error at the token endpoint", faults: map[string]any{"tokenError": "invalid_grant"}, want: app.ProviderReasonCode},
		{name: "a provider failing at the token endpoint", faults: map[string]any{"tokenError": "server_error"}, want: app.ProviderReasonUnreachable},
		{name: "a provider slower than the timeout", faults: map[string]any{"delayMs": 3000}, want: app.ProviderReasonUnreachable},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Calls to the provider time out after half a second here (10 seconds in production).
			f := newFixture(t, func(c *app.Config) { c.Providers = oidc.New(500 * time.Millisecond) })
			rig := newIdpRig(t, f, nil)
			if tc.faults != nil {
				rig.post(t, "/faults", tc.faults)
			}
			p := ada
			p.deny = tc.name == "denied consent"
			cb := rig.consent(t, p)
			if tc.mangle != nil {
				tc.mangle(f, &cb)
			}
			_, err := f.svc.FinishProviderSignIn(ctx, cb)
			wantProviderRefusal(t, "callback", err, tc.want)
		})
	}

	t.Run("a reused code", func(t *testing.T) {
		f := newFixture(t, withProviders)
		rig := newIdpRig(t, f, nil)
		cb := rig.consent(t, ada)
		signedIn(t, f, cb)
		_, err := f.svc.FinishProviderSignIn(ctx, cb)
		wantProviderRefusal(t, "the same callback again", err, app.ProviderReasonCode)
	})

	t.Run("an unreachable provider", func(t *testing.T) {
		f := newFixture(t, withProviders)
		newIdpRig(t, f, func(s *domain.ProviderSettings) {
			s.DiscoveryURL = "http://127.0.0.1:1/.well-known/openid-configuration"
		})
		_, err := f.svc.StartProviderSignIn(ctx, loginParams(f), "idpA")
		wantProviderRefusal(t, "start", err, app.ProviderReasonUnreachable)
	})

	t.Run("an empty slot", func(t *testing.T) {
		f := newFixture(t, withProviders)
		_, err := f.svc.StartProviderSignIn(ctx, loginParams(f), "idpB")
		wantProviderRefusal(t, "start", err, app.ProviderReasonSlot)
	})
}

// The provider's keys are cached with its discovery, and a token signed with a key it rotated in
// since makes them fetched again: a rotation at the provider needs nothing from Berth.
func TestAProviderKeyRotationIsPickedUpWithoutReconfiguring(t *testing.T) {
	f := newFixture(t, withProviders)
	rig := newIdpRig(t, f, nil)
	ada := person{email: "rot@example.test", verified: true}
	signedIn(t, f, rig.consent(t, ada))
	rig.post(t, "/keys/rotate", map[string]any{"retireAfterSeconds": 0})
	signedIn(t, f, rig.consent(t, ada))
}

// A first sign-in through a provider creates a user and a tenant, so it counts under the client
// address's sign-up limit like a sign-up; a returning one does not.
func TestFirstProviderSignInsCountUnderTheSignUpLimitOfTheClientAddress(t *testing.T) {
	f := newFixture(t, withProviders, func(c *app.Config) { c.Limits.SignUps = 1 })
	rig := newIdpRig(t, f, nil)
	signedIn(t, f, rig.consent(t, person{email: "first@example.test", verified: true}))
	_, err := f.svc.FinishProviderSignIn(context.Background(), rig.consent(t, person{email: "second@example.test", verified: true}))
	if fe, ok := fault.As(err); !ok || fe.Kind() != fault.KindExhausted {
		t.Fatalf("a second new user from the address: %v, want the sign-up limit", err)
	}
	signedIn(t, f, rig.consent(t, person{email: "first@example.test", verified: true}))
}

// A provider is the sign-in's first factor: it never skips a second factor the user enrolled,
// neither at the link confirmation nor at a later sign-in through the provider, and the redirect
// after the second step still names the provider's slot.
func TestAProviderSignInOfAUserWithASecondFactorAsksForItBeforeTheApp(t *testing.T) {
	f := newFixture(t, withProviders)
	rig := newIdpRig(t, f, nil)
	ctx := context.Background()
	secret, _ := f.enrolTOTP(t, "grace@example.test")

	viaProvider := func(t *testing.T, want []any, second func() (app.LoginOutcome, error)) {
		t.Helper()
		out, err := second()
		if err != nil {
			t.Fatal(err)
		}
		if out.URL != "" || out.SecondFactor == "" {
			t.Fatalf("outcome = %+v, want the second step before the app", out)
		}
		f.now = f.now.Add(time.Minute) // a fresh TOTP step
		done, err := f.verify(out.SecondFactor, totpCode(t, secret, f.now))
		code := landed(t, app.ProviderOutcome{URL: done.URL}, err)
		tok, err := f.svc.ExchangeToken(ctx, app.TokenRequest{ClientID: f.app.ID, GrantType: app.GrantAuthorizationCode, Code: code,
			RedirectURI: "https://app.test/cb", Service: "idpA"})
		if err != nil {
			t.Fatal(err)
		}
		if got := claimsOf(t, tok.AccessToken, 1)["amr"]; !slices.Equal(got.([]any), want) {
			t.Errorf("amr = %v, want %v", got, want)
		}
	}

	cb := rig.consent(t, person{email: "grace@example.test", verified: true})
	pending, err := f.svc.FinishProviderSignIn(ctx, cb)
	if err != nil || pending.Link == "" {
		t.Fatalf("the provider's first sign-in of an existing account = %+v, %v; want the link confirmation", pending, err)
	}
	viaProvider(t, []any{"pwd", "fed", "otp", "mfa"}, func() (app.LoginOutcome, error) {
		return f.svc.ConfirmProviderLink(ctx, app.ConfirmLinkInput{Link: pending.Link, Password: goodPassword, ClientIP: "192.0.2.7"})
	})
	viaProvider(t, []any{"fed", "otp", "mfa"}, func() (app.LoginOutcome, error) {
		o, err := f.svc.FinishProviderSignIn(ctx, rig.consent(t, person{email: "grace@example.test", verified: true}))
		if o.SecondFactor != "" && o.Params.ClientID != f.app.ID {
			t.Errorf("the second step's params = %+v, want the authorization request's", o.Params)
		}
		return app.LoginOutcome{URL: o.URL, SecondFactor: o.SecondFactor, Enrol: o.Enrol}, err
	})
}
