package authn

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/testkit"
	"github.com/berthhq/berth/pkg/testkit/natstest"
	billingv1 "github.com/berthhq/berth/proto/billing/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
	"google.golang.org/protobuf/proto"
)

type fakeTokens struct {
	calls atomic.Int32
}

func (f *fakeTokens) VerifyAccessToken(_ context.Context, raw string) (Principal, error) {
	f.calls.Add(1)
	switch raw {
	case "token-u1":
		return Principal{AppID: "app-1", TenantID: "tenant-1", UserID: "user-1"}, nil
	case "token-u2":
		return Principal{AppID: "app-1", TenantID: "tenant-1", UserID: "user-2"}, nil
	case "token-frozen":
		return Principal{}, fault.Forbidden("user is frozen")
	}
	return Principal{}, fault.Unauthenticated("invalid access token")
}

func TestPolicyLimitsTenantTokensToTheirOwnAppTenantAndUser(t *testing.T) {
	p := Policy{Keys: fakeKeys{}, Tokens: &fakeTokens{}}
	const (
		updateUser = "/berth.identity.v1.IdentityService/UpdateUser"    // token_user_field userId
		roles      = "/berth.identity.v1.IdentityService/ListUserRoles" // token_app_field appId
		me         = "/berth.identity.v1.IdentityService/GetMe"         // token only, no field
	)
	cases := []struct {
		name   string
		method string
		auth   string
		req    any
		want   fault.Kind
	}{
		{"own user", updateUser, "Bearer token-u1", &identityv1.UpdateUserRequest{UserId: "user-1"}, admitted},
		{"own user, upper-case id", updateUser, "bearer token-u1", &identityv1.UpdateUserRequest{UserId: "USER-1"}, admitted},
		{"another user", updateUser, "Bearer token-u2", &identityv1.UpdateUserRequest{UserId: "user-1"}, fault.KindForbidden},
		{"own app", roles, "Bearer token-u1", &identityv1.ListUserRolesRequest{AppId: "app-1"}, admitted},
		{"another app", roles, "Bearer token-u1", &identityv1.ListUserRolesRequest{AppId: "app-2"}, fault.KindForbidden},
		{"route without scope field", me, "Bearer token-u1", &identityv1.GetMeRequest{}, admitted},
		{"frozen user", me, "Bearer token-frozen", &identityv1.GetMeRequest{}, fault.KindForbidden},
		{"invalid token", me, "Bearer nope", &identityv1.GetMeRequest{}, fault.KindUnauthenticated},
		{"not a bearer scheme", me, "Basic token-u1", &identityv1.GetMeRequest{}, fault.KindUnauthenticated},
		{"empty bearer", me, "Bearer ", &identityv1.GetMeRequest{}, fault.KindUnauthenticated},
		{"token on API-key-only route", readRoute, "Bearer token-u1", &identityv1.GetUserRequest{UserId: "user-1"}, fault.KindUnauthenticated},
	}
	icpt := p.UnaryInterceptor()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(MDAuthorization, tc.auth))
			var seen Principal
			_, err := icpt(ctx, tc.req, &grpc.UnaryServerInfo{FullMethod: tc.method}, func(ctx context.Context, _ any) (any, error) {
				seen, _ = FromContext(ctx)
				return nil, nil
			})
			if got := outcome(err); got != tc.want {
				t.Fatalf("code = %v (%v), want %v", got, err, tc.want)
			}
			if tc.want == admitted && (seen.Kind != KindTenantToken || seen.UserID == "") {
				t.Fatalf("handler saw %+v", seen)
			}
		})
	}
}

func TestTokenCacheNeverOutlivesTheTokenAndForgetsFrozenUsers(t *testing.T) {
	inner := &fakeTokens{}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	c := NewTokenCache(expiring{inner, now.Add(10 * time.Second)}, time.Minute)
	c.cache.now = func() time.Time { return now }
	ctx := context.Background()
	verify := func() {
		t.Helper()
		if _, err := c.VerifyAccessToken(ctx, "token-u1"); err != nil {
			t.Fatal(err)
		}
	}
	verify()
	verify()
	if n := inner.calls.Load(); n != 1 {
		t.Fatalf("%d verifications, want 1 (cached)", n)
	}
	now = now.Add(11 * time.Second) // past the token's exp, within the TTL
	verify()
	if n := inner.calls.Load(); n != 2 {
		t.Fatalf("a cached token outlived its expiry: %d verifications", n)
	}
	c.Forget("app-1", "user-1")
	verify()
	if n := inner.calls.Load(); n != 3 {
		t.Fatalf("forgotten user still cached: %d verifications", n)
	}
	for i := 0; i < 2; i++ {
		if _, err := c.VerifyAccessToken(ctx, "token-frozen"); outcome(err) != fault.KindForbidden {
			t.Fatalf("frozen: %v", err)
		}
	}
	if n := inner.calls.Load(); n != 5 {
		t.Fatalf("failures were cached: %d verifications", n)
	}
}

// expiring stamps the principal with a token expiry, as the remote verifier does.
type expiring struct {
	inner TokenVerifier
	exp   time.Time
}

func (e expiring) VerifyAccessToken(ctx context.Context, raw string) (Principal, error) {
	p, err := e.inner.VerifyAccessToken(ctx, raw)
	p.expiresAt = e.exp
	return p, err
}

func TestTokenCacheForgetsAUserWhenIdentityFreezesThem(t *testing.T) {
	bus, _ := natstest.New(t)
	c := NewTokenCache(&fakeTokens{}, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stop, err := c.Watch(ctx, bus)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	for _, tok := range []string{"token-u1", "token-u2"} {
		if _, err := c.VerifyAccessToken(ctx, tok); err != nil {
			t.Fatal(err)
		}
	}
	ev, err := events.New("identity", EventUserFrozen, "app-1", &identityv1.UserChanged{AppId: "app-1", UserId: "user-1"})
	if err != nil {
		t.Fatal(err)
	}
	if err := bus.Publish(ctx, ev); err != nil {
		t.Fatal(err)
	}
	testkit.Eventually(t, "the cache holds only user-2's token after user-1 was frozen", func() bool { return c.cache.len() == 1 })
}

// `me` in a route's token tenant or user field is the token's own tenant or user, resolved by the
// policy before the scope check and the handler; an API key has neither, so `me` is bad input.
func TestPolicyResolvesMeToTheTokensOwnTenantAndUser(t *testing.T) {
	p := Policy{Keys: fakeKeys{
		"write-key": {KeyID: "k2", AppID: "app-1", Type: "write", AppEnabled: true},
		"read-key":  {KeyID: "k1", AppID: "app-1", Type: "read", AppEnabled: true},
	}, Tokens: &fakeTokens{}}
	const (
		updateUser   = "/berth.identity.v1.IdentityService/UpdateUser"    // token_user_field userId
		updateTenant = "/berth.tenant.v1.TenantService/UpdateTenant"      // token_tenant_field tenantId
		roles        = "/berth.identity.v1.IdentityService/ListUserRoles" // token_app_field only
		invoices     = "/berth.billing.v1.BillingService/ListInvoices"    // token_tenant_field tenantId, me_user_field userId
	)
	token := metadata.Pairs(MDAuthorization, "Bearer token-u1")
	writeKey := metadata.Pairs(MDAPIKey, "write-key", MDAPIKeyType, "write", MDClientID, "app-1")
	readKey := metadata.Pairs(MDAPIKey, "read-key", MDAPIKeyType, "read", MDClientID, "app-1")
	cases := []struct {
		name   string
		method string
		md     metadata.MD
		req    proto.Message
		want   fault.Kind
		seen   string // the id the handler must see
	}{
		{"token, me as user", updateUser, token, &identityv1.UpdateUserRequest{UserId: "me"}, admitted, "user-1"},
		{"token, ME in upper case", updateUser, token, &identityv1.UpdateUserRequest{UserId: "ME"}, admitted, "user-1"},
		{"token, me as tenant", updateTenant, token, &tenantv1.UpdateTenantRequest{TenantId: "me"}, admitted, "tenant-1"},
		{"token, own id unchanged", updateUser, token, &identityv1.UpdateUserRequest{UserId: "user-1"}, admitted, "user-1"},
		{"token, a name that only starts with me", updateUser, token, &identityv1.UpdateUserRequest{UserId: "meg"}, fault.KindForbidden, ""},
		{"token, me as app is not resolved", roles, token, &identityv1.ListUserRolesRequest{AppId: "me"}, fault.KindForbidden, ""},
		{"API key, me as user", updateUser, writeKey, &identityv1.UpdateUserRequest{UserId: "me"}, fault.KindInvalid, ""},
		{"API key, me as tenant", updateTenant, writeKey, &tenantv1.UpdateTenantRequest{TenantId: "me"}, fault.KindInvalid, ""},
		{"API key, an id is passed on", updateUser, writeKey, &identityv1.UpdateUserRequest{UserId: "user-9"}, admitted, "user-9"},
		{"token, me as a user of the tenant", invoices, token, &billingv1.ListInvoicesRequest{TenantId: "me", UserId: "me"}, admitted, "tenant-1/user-1"},
		{"token, another user of the tenant is no business of the policy", invoices, token, &billingv1.ListInvoicesRequest{TenantId: "tenant-1", UserId: "user-2"}, admitted, "tenant-1/user-2"},
		{"API key, me as a user of the tenant", invoices, readKey, &billingv1.ListInvoicesRequest{TenantId: "t-9", UserId: "me"}, fault.KindInvalid, ""},
	}
	icpt := p.UnaryInterceptor()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := metadata.NewIncomingContext(context.Background(), tc.md)
			var seen string
			_, err := icpt(ctx, tc.req, &grpc.UnaryServerInfo{FullMethod: tc.method}, func(_ context.Context, req any) (any, error) {
				switch r := req.(type) {
				case *identityv1.UpdateUserRequest:
					seen = r.GetUserId()
				case *tenantv1.UpdateTenantRequest:
					seen = r.GetTenantId()
				case *billingv1.ListInvoicesRequest:
					seen = r.GetTenantId() + "/" + r.GetUserId()
				}
				return nil, nil
			})
			if got := outcome(err); got != tc.want {
				t.Fatalf("outcome %v (%v), want %v", got, err, tc.want)
			}
			if seen != tc.seen {
				t.Fatalf("handler saw id %q, want %q", seen, tc.seen)
			}
			if f, ok := fault.As(err); ok && tc.want == fault.KindInvalid && f.Field() == "" {
				t.Fatalf("the refusal names no field: %v", err)
			}
		})
	}
}
