package authn

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/pkg/fault"
	"github.com/berthhq/berth/pkg/testkit/grpctest"
	analyticsv1 "github.com/berthhq/berth/proto/analytics/v1"
	edgev1 "github.com/berthhq/berth/proto/edge/v1"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// Apps and projects of the operator tests: app-1 belongs to project-1, app-2 to project-2.
const (
	app1     = "0b6a1c7e-0000-4000-8000-000000000001"
	app2     = "0b6a1c7e-0000-4000-8000-000000000002"
	project1 = "5f0d2b1a-0000-4000-8000-000000000001"
	project2 = "5f0d2b1a-0000-4000-8000-000000000002"
)

// Routes of the operator tests.
const (
	setAppEnabled  = "/berth.identity.v1.IdentityAdminService/SetAppEnabled"   // admin, operator_app_field appId
	createApp      = "/berth.identity.v1.IdentityAdminService/CreateApp"       // admin, operator_project_field projectId
	createProject  = "/berth.identity.v1.IdentityAdminService/CreateProject"   // admin only: platform-wide
	listUserRoles  = "/berth.identity.v1.IdentityService/ListUserRoles"        // API key, tenant token and operator, appId
	getUserPath    = "/berth.identity.v1.IdentityService/GetUser"              // API key and operator, appId
	sendInvitePath = "/berth.identity.v1.IdentityService/SendReferralInvite"   // API key and tenant token only
	updateAPIKey   = "/berth.identity.v1.OperatorService/UpdateApiKey"         // operator_token: the handler scopes
	verifyKeyPath  = "/berth.identity.v1.IdentityInternalService/VerifyApiKey" // service only
)

// unsignedJWT is a token whose claims say aud; its signature is a placeholder, since the fakes
// below stand for the verifiers and know their tokens by their whole text.
func unsignedJWT(t testing.TB, aud, sub string) string {
	t.Helper()
	raw, err := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.RegisteredClaims{
		Audience: jwt.ClaimStrings{aud}, Subject: sub, ExpiresAt: jwt.NewNumericDate(time.Now().Add(time.Hour)),
	}).SignedString([]byte("placeholder"))
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

// countingOperators accepts the operator tokens it was given and counts every call, so a test
// can see that a token of another kind never reached it.
type countingOperators struct {
	tokens map[string]Principal
	calls  atomic.Int32
}

func (c *countingOperators) VerifyOperatorToken(_ context.Context, raw string) (Principal, error) {
	c.calls.Add(1)
	p, ok := c.tokens[raw]
	if !ok {
		return Principal{}, fault.Unauthenticated("Unauthorized Token")
	}
	return p, nil
}

// countingTenantTokens accepts the tenant tokens it was given and counts every call.
type countingTenantTokens struct {
	tokens map[string]Principal
	calls  atomic.Int32
}

func (c *countingTenantTokens) VerifyAccessToken(_ context.Context, raw string) (Principal, error) {
	c.calls.Add(1)
	p, ok := c.tokens[raw]
	if !ok {
		return Principal{}, fault.Unauthenticated("invalid access token")
	}
	return p, nil
}

type fakeAppProjects map[string]string

func (f fakeAppProjects) AppProject(_ context.Context, appID string) (string, error) {
	if appID == "unreachable" {
		return "", status.Error(codes.Unavailable, "identity is down")
	}
	return f[appID], nil
}

func TestPolicyAdmitsAnOperatorOnlyWithinTheMembersProject(t *testing.T) {
	member1 := unsignedJWT(t, OperatorAudience, "member-1")
	member2 := unsignedJWT(t, OperatorAudience, "member-2")
	forged := unsignedJWT(t, OperatorAudience, "member-1") + "x" // not a token the verifier issued
	noProject := unsignedJWT(t, OperatorAudience, "member-0")
	tenant := unsignedJWT(t, app1, "user-1")
	// A tenant token the operator verifier would accept if it ever saw it: only its audience
	// keeps it away.
	tenantAsOperator := unsignedJWT(t, app1, "member-1")
	ops := &countingOperators{tokens: map[string]Principal{
		member1:          {UserID: "member-1", ProjectID: project1},
		member2:          {UserID: "member-2", ProjectID: project2},
		noProject:        {UserID: "member-0"},
		tenantAsOperator: {UserID: "member-1", ProjectID: project1},
	}}
	toks := &countingTenantTokens{tokens: map[string]Principal{
		tenant: {AppID: app1, TenantID: "tenant-1", UserID: "user-1"},
	}}
	p := Policy{
		Keys:       fakeKeys{"read-key": {KeyID: "k1", AppID: app1, Type: "read", AppEnabled: true}},
		Tokens:     toks,
		Operators:  ops,
		Apps:       fakeAppProjects{app1: project1, app2: project2},
		AdminToken: "admin-secret",
	}
	readKey := metadata.Pairs(MDAPIKey, "read-key", MDAPIKeyType, "read", MDClientID, app1)
	bearer := func(raw string) metadata.MD { return metadata.Pairs(MDAuthorization, "Bearer "+raw) }
	enable := func(app string) any { return &identityv1.SetAppEnabledRequest{AppId: app} }
	roles := func(app string) any { return &identityv1.ListUserRolesRequest{AppId: app} }
	inProject := func(project string) any { return &identityv1.CreateAppRequest{ProjectId: project, Name: "x"} }
	cases := []struct {
		name     string
		method   string
		md       metadata.MD
		req      any
		want     fault.Kind
		kind     Kind   // the admitted Principal's kind
		app      string // the admitted Principal's app
		opCalls  int32  // calls the operator verifier must have seen
		tokCalls int32  // calls the tenant-token verifier must have seen
	}{
		{"member on an app of their project", setAppEnabled, bearer(member1), enable(app1), admitted, KindOperator, app1, 1, 0},
		{"member naming the app in upper case", setAppEnabled, bearer(member1), enable("0B6A1C7E-0000-4000-8000-000000000001"), admitted, KindOperator, app1, 1, 0},
		{"member on an app of another project", setAppEnabled, bearer(member1), enable(app2), fault.KindForbidden, 0, "", 1, 0},
		{"other project's member on this app", setAppEnabled, bearer(member2), enable(app1), fault.KindForbidden, 0, "", 1, 0},
		{"member on an app that does not exist", setAppEnabled, bearer(member1), enable("0b6a1c7e-0000-4000-8000-00000000dead"), fault.KindForbidden, 0, "", 1, 0},
		{"member naming no app", setAppEnabled, bearer(member1), enable(""), fault.KindForbidden, 0, "", 1, 0},
		{"member whose token names no project", setAppEnabled, bearer(noProject), enable(app1), fault.KindForbidden, 0, "", 1, 0},
		{"member on their own project", createApp, bearer(member1), inProject(project1), admitted, KindOperator, "", 1, 0},
		{"member naming their project in upper case", createApp, bearer(member1), inProject("5F0D2B1A-0000-4000-8000-000000000001"), admitted, KindOperator, "", 1, 0},
		{"member on another project", createApp, bearer(member1), inProject(project2), fault.KindForbidden, 0, "", 1, 0},
		{"member naming no project", createApp, bearer(member1), inProject(""), fault.KindForbidden, 0, "", 1, 0},
		{"forged operator token", setAppEnabled, bearer(forged), enable(app1), fault.KindUnauthenticated, 0, "", 1, 0},
		{"operator token without the Bearer scheme", setAppEnabled, metadata.Pairs(MDAuthorization, member1), enable(app1), fault.KindUnauthenticated, 0, "", 0, 0},
		{"tenant token on an admin route that admits operators", setAppEnabled, bearer(tenant), enable(app1), fault.KindUnauthenticated, 0, "", 0, 0},
		{"tenant token the operator verifier would accept", setAppEnabled, bearer(tenantAsOperator), enable(app1), fault.KindUnauthenticated, 0, "", 0, 0},
		{"admin token still admitted beside operators", setAppEnabled, metadata.Pairs(MDAdminToken, "admin-secret"), enable(app2), admitted, KindAdmin, "", 0, 0},
		{"admin token beside an operator token is judged as the admin token", setAppEnabled, metadata.Pairs(MDAdminToken, "wrong", MDAuthorization, "Bearer "+member1), enable(app1), fault.KindUnauthenticated, 0, "", 0, 0},
		{"an admin token where the route takes none does not hide the operator token", getUserPath, metadata.Pairs(MDAdminToken, "admin-secret", MDAuthorization, "Bearer "+member1), &identityv1.GetUserRequest{UserId: "u", AppId: app1}, admitted, KindOperator, app1, 1, 0},
		{"operator token on a platform-wide route", createProject, bearer(member1), &identityv1.CreateProjectRequest{Name: "x"}, fault.KindUnauthenticated, 0, "", 0, 0},
		{"operator on a shared route", listUserRoles, bearer(member1), roles(app1), admitted, KindOperator, app1, 1, 0},
		{"operator on a shared route naming another project's app", listUserRoles, bearer(member1), roles(app2), fault.KindForbidden, 0, "", 1, 0},
		{"tenant token on a shared route", listUserRoles, bearer(tenant), roles(app1), admitted, KindTenantToken, app1, 0, 1},
		{"tenant token on a shared route for another app", listUserRoles, bearer(tenant), roles(app2), fault.KindForbidden, 0, "", 0, 1},
		{"tenant token the operator verifier would accept, on a shared route", listUserRoles, bearer(tenantAsOperator), roles(app1), fault.KindUnauthenticated, 0, "", 0, 1},
		{"API key beside an operator token is judged as the key", listUserRoles, metadata.Join(readKey, bearer(member2)), roles(app1), admitted, KindAPIKey, app1, 0, 0},
		{"API key naming its own app where operators name theirs", getUserPath, readKey, &identityv1.GetUserRequest{UserId: "u", AppId: app1}, admitted, KindAPIKey, app1, 0, 0},
		{"API key naming no app where operators name theirs", getUserPath, readKey, &identityv1.GetUserRequest{UserId: "u"}, admitted, KindAPIKey, app1, 0, 0},
		{"API key naming another app where operators name theirs", getUserPath, readKey, &identityv1.GetUserRequest{UserId: "u", AppId: app2}, fault.KindNotFound, 0, "", 0, 0},
		{"operator token on a tenant-token route without operators", sendInvitePath, bearer(member1), &identityv1.SendReferralInviteRequest{UserId: "user-1"}, fault.KindUnauthenticated, 0, "", 0, 0},
		{"operator token on the member's own route", updateAPIKey, bearer(member2), &identityv1.UpdateApiKeyRequest{ProjectUuid: project1}, admitted, KindOperator, "", 1, 0},
		{"operator token on a service route", verifyKeyPath, bearer(member1), &identityv1.VerifyApiKeyRequest{}, fault.KindUnauthenticated, 0, "", 0, 0},
	}
	icpt := p.UnaryInterceptor()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ops.calls.Store(0)
			toks.calls.Store(0)
			ctx := metadata.NewIncomingContext(context.Background(), tc.md)
			var seen Principal
			_, err := icpt(ctx, tc.req, &grpc.UnaryServerInfo{FullMethod: tc.method}, func(ctx context.Context, _ any) (any, error) {
				seen, _ = FromContext(ctx)
				return nil, nil
			})
			if got := outcome(err); got != tc.want {
				t.Fatalf("code = %v (%v), want %v", got, err, tc.want)
			}
			if tc.want == admitted && (seen.Kind != tc.kind || seen.AppID != tc.app) {
				t.Fatalf("handler saw %+v, want kind %v and app %q", seen, tc.kind, tc.app)
			}
			if n := ops.calls.Load(); n != tc.opCalls {
				t.Fatalf("operator verifier called %d times, want %d", n, tc.opCalls)
			}
			if n := toks.calls.Load(); n != tc.tokCalls {
				t.Fatalf("tenant-token verifier called %d times, want %d", n, tc.tokCalls)
			}
		})
	}
}

func TestAnOperatorRouteNamingNeitherFieldAdmitsNoOperator(t *testing.T) {
	p := Policy{Apps: fakeAppProjects{app1: project1}}
	member := Principal{Kind: KindOperator, UserID: "member-1", ProjectID: project1}
	req := &identityv1.SetAppEnabledRequest{AppId: app1}
	if _, err := p.operatorScope(context.Background(), &edgev1.Route{Operator: true}, req, member); outcome(err) != fault.KindForbidden {
		t.Fatalf("a route without an operator field admitted a member: %v", err)
	}
	if _, err := p.operatorScope(context.Background(), &edgev1.Route{Operator: true, OperatorAppField: "appId"}, req, member); err != nil {
		t.Fatalf("the same request on a route naming its app field: %v", err)
	}
}

func TestAnOperatorIsRefusedWhenTheAppsProjectCannotBeFoundOut(t *testing.T) {
	member := unsignedJWT(t, OperatorAudience, "member-1")
	p := Policy{
		Operators: &countingOperators{tokens: map[string]Principal{member: {UserID: "member-1", ProjectID: project1}}},
		Apps:      fakeAppProjects{},
	}
	ctx := metadata.NewIncomingContext(context.Background(), metadata.Pairs(MDAuthorization, "Bearer "+member))
	_, err := p.UnaryInterceptor()(ctx, &identityv1.SetAppEnabledRequest{AppId: "unreachable"}, &grpc.UnaryServerInfo{FullMethod: setAppEnabled},
		func(context.Context, any) (any, error) {
			t.Fatal("handler ran without the app's project")
			return nil, nil
		})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("err = %v, want identity's Unavailable passed on", err)
	}
}

// operatorRoles serves ListUserRoles, a route that takes API keys, tenant tokens and operators.
type operatorRoles struct {
	identityv1.UnimplementedIdentityServiceServer
}

func (operatorRoles) ListUserRoles(context.Context, *identityv1.ListUserRolesRequest) (*identityv1.UserRoleList, error) {
	return &identityv1.UserRoleList{}, nil
}

func TestAnOperatorNeverGetsABrowserOrigin(t *testing.T) {
	member := unsignedJWT(t, OperatorAudience, "member-1")
	tenant := unsignedJWT(t, app1, "user-1")
	p := Policy{
		Tokens: &countingTenantTokens{tokens: map[string]Principal{
			tenant: {AppID: app1, TenantID: "t", UserID: "user-1", WebOrigins: []string{"https://shop.example"}},
		}},
		Operators: &countingOperators{tokens: map[string]Principal{
			member: {UserID: "member-1", ProjectID: project1, WebOrigins: []string{"https://shop.example"}},
		}},
		Apps:    fakeAppProjects{app1: project1},
		Origins: fakeOrigins{app1: {"https://shop.example"}},
	}
	srv := grpc.NewServer(grpc.UnaryInterceptor(p.UnaryInterceptor()))
	identityv1.RegisterIdentityServiceServer(srv, operatorRoles{})
	client := identityv1.NewIdentityServiceClient(grpctest.Serve(t, srv))
	for _, tc := range []struct {
		name, raw, origin string
	}{
		{"operator", member, ""},
		{"tenant token, for contrast", tenant, "https://shop.example"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var h metadata.MD
			ctx := metadata.NewOutgoingContext(context.Background(), metadata.Pairs(MDOrigin, "https://shop.example", MDAuthorization, "Bearer "+tc.raw))
			if _, err := client.ListUserRoles(ctx, &identityv1.ListUserRolesRequest{AppId: app1}, grpc.Header(&h)); err != nil {
				t.Fatal(err)
			}
			got := h.Get(MDAllowOrigin)
			if (tc.origin == "" && len(got) != 0) || (tc.origin != "" && (len(got) != 1 || got[0] != tc.origin)) {
				t.Fatalf("allowed origin %q, want %q", got, tc.origin)
			}
		})
	}
}

func TestOperatorCacheNeverOutlivesTheTokenNorCachesRefusals(t *testing.T) {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	inner := &countingOperators{tokens: map[string]Principal{"good": {UserID: "m", ProjectID: project1, expiresAt: now.Add(10 * time.Second)}}}
	c := NewOperatorCache(inner, RemoteTTL)
	c.cache.now = func() time.Time { return now }
	ctx := context.Background()
	for range 2 {
		if _, err := c.VerifyOperatorToken(ctx, "good"); err != nil {
			t.Fatal(err)
		}
	}
	if n := inner.calls.Load(); n != 1 {
		t.Fatalf("%d verifications, want 1 (cached)", n)
	}
	now = now.Add(11 * time.Second) // past the token's exp, within the TTL
	if _, err := c.VerifyOperatorToken(ctx, "good"); err != nil {
		t.Fatal(err)
	}
	if n := inner.calls.Load(); n != 2 {
		t.Fatalf("a cached operator token outlived its expiry: %d verifications", n)
	}
	for range 2 {
		if _, err := c.VerifyOperatorToken(ctx, "bad"); outcome(err) != fault.KindUnauthenticated {
			t.Fatalf("bad token: %v", err)
		}
	}
	if n := inner.calls.Load(); n != 4 {
		t.Fatalf("refusals were cached: %d verifications", n)
	}
}

// appProjectsIdentity answers GetAppProject as identity does: NotFound for an absent app.
type appProjectsIdentity struct {
	identityv1.UnimplementedIdentityInternalServiceServer
	calls atomic.Int32
}

func (s *appProjectsIdentity) GetAppProject(_ context.Context, req *identityv1.GetAppProjectRequest) (*identityv1.AppProject, error) {
	s.calls.Add(1)
	switch req.GetAppId() {
	case app1:
		return &identityv1.AppProject{AppId: app1, ProjectId: project1}, nil
	case "broken":
		return nil, status.Error(codes.Internal, "internal error")
	}
	return nil, status.Error(codes.NotFound, "app not found")
}

func TestAppProjectsAreAskedOnceButUnknownAppsAreAskedAgain(t *testing.T) {
	identity := &appProjectsIdentity{}
	srv := grpc.NewServer()
	identityv1.RegisterIdentityInternalServiceServer(srv, identity)
	c := NewAppProjectCache(NewRemoteAppProjects(identityv1.NewIdentityInternalServiceClient(grpctest.Serve(t, srv))), AppProjectTTL)
	ctx := context.Background()
	for range 2 {
		if project, err := c.AppProject(ctx, app1); err != nil || project != project1 {
			t.Fatalf("AppProject = %q, %v", project, err)
		}
	}
	if n := identity.calls.Load(); n != 1 {
		t.Fatalf("%d lookups of a known app, want 1", n)
	}
	for range 2 {
		if project, err := c.AppProject(ctx, app2); err != nil || project != "" {
			t.Fatalf("an absent app: %q, %v", project, err)
		}
	}
	if n := identity.calls.Load(); n != 3 {
		t.Fatalf("an absent app was cached: %d lookups", n)
	}
	if _, err := c.AppProject(ctx, "broken"); err == nil || errors.Is(err, errUnknownApp) {
		t.Fatalf("identity's failure became an answer: %v", err)
	}
}

// streamedApps answers ListSubscriptions with the app its handler acts for, as the head's kind.
type streamedApps struct {
	analyticsv1.UnimplementedAnalyticsServiceServer
}

func (streamedApps) ListSubscriptions(_ *analyticsv1.ListRangeRequest, stream grpc.ServerStreamingServer[analyticsv1.SubscriptionChunk]) error {
	app, err := CallerApp(stream.Context())
	if err != nil {
		return err
	}
	return stream.Send(&analyticsv1.SubscriptionChunk{Head: &analyticsv1.ListHead{Kind: app}})
}

// A server stream's request arrives after the stream opens; the handler still acts for the app the
// request named once the member's project is checked, and for nothing of another project.
func TestAnOperatorsStreamActsForTheAppItsRequestNames(t *testing.T) {
	member := unsignedJWT(t, OperatorAudience, "member-1")
	p := Policy{
		Operators: &countingOperators{tokens: map[string]Principal{member: {UserID: "member-1", ProjectID: project1}}},
		Apps:      fakeAppProjects{app1: project1, app2: project2},
	}
	srv := grpc.NewServer(grpc.StreamInterceptor(p.StreamInterceptor()))
	analyticsv1.RegisterAnalyticsServiceServer(srv, streamedApps{})
	client := analyticsv1.NewAnalyticsServiceClient(grpctest.Serve(t, srv))
	ctx := metadata.NewOutgoingContext(context.Background(), metadata.Pairs(MDAuthorization, "Bearer "+member))
	// This bare server does not turn faults into status codes (pkg/grpcx does); the refusal is
	// recognised by its message.
	refusal := errOperatorOutsideProject().Error()
	for _, tc := range []struct {
		name    string
		app     string
		refused bool
	}{
		{"an app of the member's project", app1, false},
		{"another project's app", app2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stream, err := client.ListSubscriptions(ctx, &analyticsv1.ListRangeRequest{AppId: tc.app})
			if err != nil {
				t.Fatal(err)
			}
			chunk, err := stream.Recv()
			if tc.refused {
				if err == nil || status.Convert(err).Message() != refusal {
					t.Fatalf("err = %v, want the refusal %q", err, refusal)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if chunk.GetHead().GetKind() != tc.app {
				t.Fatalf("handler acted for %q, want %q", chunk.GetHead().GetKind(), tc.app)
			}
		})
	}
}
