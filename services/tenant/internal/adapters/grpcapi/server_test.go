package grpcapi_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/testkit/grpctest"
	"github.com/berthhq/berth/services/tenant/internal/adapters/grpcapi"
	"github.com/berthhq/berth/services/tenant/internal/adapters/identity"
	"github.com/berthhq/berth/services/tenant/internal/adapters/memory"
	"github.com/berthhq/berth/services/tenant/internal/app"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	tenantv1 "github.com/berthhq/berth/proto/tenant/v1"
)

const (
	serviceToken = "service-token-for-tests"
	adminToken   = "admin-token-for-tests"
)

var (
	appA = uuid.NewString()
	appB = uuid.NewString()
)

// fakeIdentity is the identity service as the tenant service sees it. Like the real one it answers
// only callers that present the service token.
type fakeIdentity struct {
	identityv1.UnimplementedIdentityInternalServiceServer
	keys   map[string]*identityv1.VerifiedApiKey      // by full key
	tokens map[string]*identityv1.VerifiedAccessToken // by raw token
	frozen map[string]bool                            // raw tokens of frozen users
	users  map[string][]*identityv1.TenantUser        // by tenant id

	mu        sync.Mutex
	down      bool // ListTenantUsers answers Unavailable
	userCalls []*identityv1.ListTenantUsersRequest
}

func (f *fakeIdentity) checkToken(ctx context.Context) error {
	md, _ := metadata.FromIncomingContext(ctx)
	if got := md.Get(authn.MDServiceToken); len(got) != 1 || got[0] != serviceToken {
		return status.Error(codes.Unauthenticated, "invalid service token")
	}
	return nil
}

func (f *fakeIdentity) VerifyApiKey(ctx context.Context, req *identityv1.VerifyApiKeyRequest) (*identityv1.VerifiedApiKey, error) {
	if err := f.checkToken(ctx); err != nil {
		return nil, err
	}
	k, ok := f.keys[req.GetApiKey()]
	if !ok || k.GetAppId() != req.GetClientId() {
		return nil, status.Error(codes.Unauthenticated, "invalid API key")
	}
	return k, nil
}

func (f *fakeIdentity) VerifyAccessToken(ctx context.Context, req *identityv1.VerifyAccessTokenRequest) (*identityv1.VerifiedAccessToken, error) {
	if err := f.checkToken(ctx); err != nil {
		return nil, err
	}
	if f.frozen[req.GetAccessToken()] {
		return nil, status.Error(codes.PermissionDenied, "user is frozen")
	}
	tok, ok := f.tokens[req.GetAccessToken()]
	if !ok {
		return nil, status.Error(codes.Unauthenticated, "invalid access token")
	}
	return tok, nil
}

func (f *fakeIdentity) ListTenantUsers(ctx context.Context, req *identityv1.ListTenantUsersRequest) (*identityv1.TenantUserList, error) {
	if err := f.checkToken(ctx); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.down {
		return nil, status.Error(codes.Unavailable, "identity is down")
	}
	f.userCalls = append(f.userCalls, req)
	return &identityv1.TenantUserList{Users: f.users[req.GetTenantId()]}, nil
}

func (f *fakeIdentity) setDown(down bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.down = down
}

type harness struct {
	identity *fakeIdentity
	tenants  tenantv1.TenantServiceClient
	internal tenantv1.TenantInternalServiceClient
	admin    tenantv1.TenantAdminServiceClient
}

// newHarness runs the tenant service's gRPC adapter behind the real server chain and access
// policy, verifying keys and tokens and listing users through a fake identity service.
func newHarness(t *testing.T, identityToken string) *harness {
	t.Helper()
	fake := &fakeIdentity{
		keys: map[string]*identityv1.VerifiedApiKey{
			"key-read-a":  {KeyId: "k1", AppId: appA, Type: "read", AppEnabled: true},
			"key-write-a": {KeyId: "k2", AppId: appA, Type: "write", AppEnabled: true},
			"key-read-b":  {KeyId: "k3", AppId: appB, Type: "read", AppEnabled: true},
			"key-write-b": {KeyId: "k4", AppId: appB, Type: "write", AppEnabled: true},
		},
		tokens: map[string]*identityv1.VerifiedAccessToken{},
		frozen: map[string]bool{},
		users:  map[string][]*identityv1.TenantUser{},
	}
	identitySrv := grpc.NewServer()
	identityv1.RegisterIdentityInternalServiceServer(identitySrv, fake)
	identityConn := grpctest.Serve(t, identitySrv, grpc.WithUnaryInterceptor(grpcx.ServiceTokenInterceptor(identityToken)))
	identityClient := identityv1.NewIdentityInternalServiceClient(identityConn)

	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	svc, err := app.New(app.Config{Store: memory.New(&events.MemoryOutbox{}), Users: identity.NewDirectory(identityClient), NewID: uuid.NewString})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := grpcx.NewServer(grpcx.ServerOptions{Log: log, Policy: authn.Policy{
		Keys:         authn.NewRemoteVerifier(identityClient),
		Tokens:       authn.NewRemoteTokenVerifier(identityClient),
		AdminToken:   adminToken,
		ServiceToken: serviceToken,
	}})
	if err != nil {
		t.Fatal(err)
	}
	grpcapi.Register(srv, svc)
	conn := grpctest.Serve(t, srv)
	return &harness{
		identity: fake,
		tenants:  tenantv1.NewTenantServiceClient(conn),
		internal: tenantv1.NewTenantInternalServiceClient(conn),
		admin:    tenantv1.NewTenantAdminServiceClient(conn),
	}
}

func withKey(key, keyType, clientID string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(),
		authn.MDAPIKey, key, authn.MDAPIKeyType, keyType, authn.MDClientID, clientID)
}

func withToken(raw string) context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), authn.MDAuthorization, "Bearer "+raw)
}

func asService() context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), authn.MDServiceToken, serviceToken)
}

// issue registers a token identity would accept for a user of tenantID ("" = a user without a
// tenant) in appID, and returns it.
func (h *harness) issue(appID, tenantID string) string {
	raw := "token-" + uuid.NewString()
	h.identity.tokens[raw] = &identityv1.VerifiedAccessToken{
		AppId: appID, TenantId: tenantID, UserId: uuid.NewString(), TokenId: uuid.NewString(),
		ExpiresAt: time.Now().Add(time.Hour).Unix(),
	}
	return raw
}

func asAdmin() context.Context {
	return metadata.AppendToOutgoingContext(context.Background(), authn.MDAdminToken, adminToken)
}

func (h *harness) createTenant(t *testing.T, appID string) *tenantv1.Tenant {
	t.Helper()
	tn, err := h.admin.CreateTenant(asAdmin(), &tenantv1.CreateTenantRequest{
		AppId: appID, Name: "Acme", Description: "first",
		ShippingAddress: &tenantv1.AddressPatch{City: proto.String("Hamburg"), Country: proto.String("de")},
	})
	if err != nil {
		t.Fatalf("CreateTenant: %v", err)
	}
	return tn
}

func wantCode(t *testing.T, err error, code codes.Code) *status.Status {
	t.Helper()
	st := status.Convert(err)
	if st.Code() != code {
		t.Fatalf("code = %v (%q), want %v", st.Code(), st.Message(), code)
	}
	return st
}

func TestGetTenantAccess(t *testing.T) {
	h := newHarness(t, serviceToken)
	tn := h.createTenant(t, appA)
	cases := []struct {
		name      string
		ctx       context.Context
		tenantID  string
		want      codes.Code
		wantField string
	}{
		{"no credentials", context.Background(), tn.GetId(), codes.Unauthenticated, ""},
		{"unknown key", withKey("nope", "read", appA), tn.GetId(), codes.Unauthenticated, ""},
		{"key of another client id", withKey("key-read-a", "read", appB), tn.GetId(), codes.Unauthenticated, ""},
		{"claimed type differs from the key's", withKey("key-read-a", "write", appA), tn.GetId(), codes.PermissionDenied, ""},
		{"write key on a read route", withKey("key-write-a", "write", appA), tn.GetId(), codes.PermissionDenied, ""},
		{"another app's tenant", withKey("key-read-b", "read", appB), tn.GetId(), codes.NotFound, ""},
		{"absent tenant", withKey("key-read-a", "read", appA), uuid.NewString(), codes.NotFound, ""},
		{"tenant id not a UUID", withKey("key-read-a", "read", appA), "tenant-1", codes.InvalidArgument, "tenantId"},
		{"own tenant", withKey("key-read-a", "read", appA), tn.GetId(), codes.OK, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.tenants.GetTenant(tc.ctx, &tenantv1.GetTenantRequest{TenantId: tc.tenantID})
			st := wantCode(t, err, tc.want)
			if got := grpcx.FieldOf(st); got != tc.wantField {
				t.Fatalf("field = %q, want %q", got, tc.wantField)
			}
		})
	}
}

func TestGetTenantReturnsAddressesAndUsersFromIdentity(t *testing.T) {
	h := newHarness(t, serviceToken)
	tn := h.createTenant(t, appA)
	user := &identityv1.TenantUser{Id: uuid.NewString(), AppId: appA, Email: "ada@example.com", TenantId: true, LastSignInAt: true}
	h.identity.users[tn.GetId()] = []*identityv1.TenantUser{user}

	got, err := h.tenants.GetTenant(withKey("key-read-a", "read", appA), &tenantv1.GetTenantRequest{TenantId: tn.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetKind() != "tenant" || got.GetId() != tn.GetId() || got.GetName() != "Acme" || got.GetPaidUnits() != "0" {
		t.Fatalf("tenant = %v", got)
	}
	if a := got.GetShippingAddress(); a.GetType() != "shipping" || a.GetCountry() != "DE" || a.GetId() == "" {
		t.Fatalf("shipping address = %v", a)
	}
	if got.GetBillingAddress() != nil {
		t.Fatalf("billing address = %v, want none", got.GetBillingAddress())
	}
	if len(got.GetUsers()) != 1 || !proto.Equal(got.GetUsers()[0], user) {
		t.Fatalf("users = %v", got.GetUsers())
	}
	calls := h.identity.userCalls
	if len(calls) != 1 || calls[0].GetAppId() != appA || calls[0].GetTenantId() != tn.GetId() {
		t.Fatalf("identity was asked %v", calls)
	}
}

func TestGetTenantFailsWhenIdentityIsDown(t *testing.T) {
	h := newHarness(t, serviceToken)
	tn := h.createTenant(t, appA)
	h.identity.setDown(true)
	_, err := h.tenants.GetTenant(withKey("key-read-a", "read", appA), &tenantv1.GetTenantRequest{TenantId: tn.GetId()})
	wantCode(t, err, codes.Unavailable)
}

func TestCallsToIdentityCarryTheServiceToken(t *testing.T) {
	// With the wrong token identity refuses every call, so no key can be verified.
	h := newHarness(t, "wrong-token")
	_, err := h.tenants.GetTenant(withKey("key-read-a", "read", appA), &tenantv1.GetTenantRequest{TenantId: uuid.NewString()})
	wantCode(t, err, codes.Unauthenticated)
}

func TestUpdateTenant(t *testing.T) {
	h := newHarness(t, serviceToken)
	tn := h.createTenant(t, appA)
	cases := []struct {
		name      string
		ctx       context.Context
		patch     *tenantv1.TenantPatch
		want      codes.Code
		wantField string
	}{
		{"no credentials", context.Background(), &tenantv1.TenantPatch{Name: proto.String("X")}, codes.Unauthenticated, ""},
		{"read key", withKey("key-read-a", "read", appA), &tenantv1.TenantPatch{Name: proto.String("X")}, codes.PermissionDenied, ""},
		{"another app's tenant", withKey("key-write-b", "write", appB), &tenantv1.TenantPatch{Name: proto.String("X")}, codes.NotFound, ""},
		{"wrong kind", withKey("key-write-a", "write", appA), &tenantv1.TenantPatch{Kind: proto.String("user")}, codes.InvalidArgument, "kind"},
		{"nested field outside its enum", withKey("key-write-a", "write", appA),
			&tenantv1.TenantPatch{Tenant: &tenantv1.TenantPatch{CompanyTaxExempt: proto.String("maybe")}}, codes.InvalidArgument, "tenant.companyTaxExempt"},
		{"flat country too long", withKey("key-write-a", "write", appA),
			&tenantv1.TenantPatch{BillingAddress: &tenantv1.AddressPatch{Country: proto.String("FRA")}}, codes.InvalidArgument, "billingAddress.country"},
		{"nested patch", withKey("key-write-a", "write", appA), &tenantv1.TenantPatch{
			Kind: proto.String("tenant"), Test: proto.Bool(true),
			Tenant: &tenantv1.TenantPatch{
				Name: proto.String("Acme AG"), CompanyTaxExempt: proto.String("exempt"), IsBusinessCustomer: proto.Bool(true),
				BillingAddress: &tenantv1.AddressPatch{Country: proto.String("fr"), City: proto.String("Paris")},
			},
		}, codes.OK, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.tenants.UpdateTenant(tc.ctx, &tenantv1.UpdateTenantRequest{TenantId: tn.GetId(), Patch: tc.patch})
			st := wantCode(t, err, tc.want)
			if got := grpcx.FieldOf(st); got != tc.wantField {
				t.Fatalf("field = %q, want %q", got, tc.wantField)
			}
		})
	}

	got, err := h.tenants.GetTenant(withKey("key-read-a", "read", appA), &tenantv1.GetTenantRequest{TenantId: tn.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetName() != "Acme AG" || got.GetCompanyTaxExempt() != "exempt" || !got.GetIsBusinessCustomer() {
		t.Fatalf("after update: %v", got)
	}
	if b := got.GetBillingAddress(); b.GetType() != "billing" || b.GetCountry() != "FR" || b.GetCity() != "Paris" {
		t.Fatalf("billing address = %v", b)
	}
	if got.GetShippingAddress().GetCity() != "Hamburg" {
		t.Fatalf("shipping address changed: %v", got.GetShippingAddress())
	}
}

func TestCreateTenantNeedsTheAdminToken(t *testing.T) {
	h := newHarness(t, serviceToken)
	cases := []struct {
		name      string
		ctx       context.Context
		req       *tenantv1.CreateTenantRequest
		want      codes.Code
		wantField string
	}{
		{"no token", context.Background(), &tenantv1.CreateTenantRequest{AppId: appA, Name: "A"}, codes.Unauthenticated, ""},
		{"API key instead of the admin token", withKey("key-write-a", "write", appA), &tenantv1.CreateTenantRequest{AppId: appA, Name: "A"}, codes.Unauthenticated, ""},
		{"app id not a UUID", asAdmin(), &tenantv1.CreateTenantRequest{AppId: "app", Name: "A"}, codes.InvalidArgument, "appId"},
		{"no name", asAdmin(), &tenantv1.CreateTenantRequest{AppId: appA}, codes.InvalidArgument, "name"},
		{"valid", asAdmin(), &tenantv1.CreateTenantRequest{AppId: appA, Name: "A"}, codes.OK, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.admin.CreateTenant(tc.ctx, tc.req)
			st := wantCode(t, err, tc.want)
			if got := grpcx.FieldOf(st); got != tc.wantField {
				t.Fatalf("field = %q, want %q", got, tc.wantField)
			}
		})
	}
}

func TestUpdateTenantWithAccessToken(t *testing.T) {
	h := newHarness(t, serviceToken)
	own := h.createTenant(t, appA)
	other := h.createTenant(t, appA)
	ofAppB := h.createTenant(t, appB)
	token := h.issue(appA, own.GetId())
	frozen := h.issue(appA, own.GetId())
	h.identity.frozen[frozen] = true
	cases := []struct {
		name     string
		ctx      context.Context
		tenantID string
		want     codes.Code
	}{
		{"own tenant", withToken(token), own.GetId(), codes.OK},
		{"own tenant id in upper case", withToken(token), strings.ToUpper(own.GetId()), codes.OK},
		{"another tenant of the same app", withToken(token), other.GetId(), codes.PermissionDenied},
		{"a tenant of another app", withToken(h.issue(appB, ofAppB.GetId())), own.GetId(), codes.PermissionDenied},
		{"a token without a tenant", withToken(h.issue(appA, "")), own.GetId(), codes.PermissionDenied},
		{"unknown token", withToken("forged"), own.GetId(), codes.Unauthenticated},
		{"not a bearer token", metadata.AppendToOutgoingContext(context.Background(), authn.MDAuthorization, "Basic "+token),
			own.GetId(), codes.Unauthenticated},
		{"token of a frozen user", withToken(frozen), own.GetId(), codes.PermissionDenied},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := h.tenants.UpdateTenant(tc.ctx, &tenantv1.UpdateTenantRequest{
				TenantId: tc.tenantID, Patch: &tenantv1.TenantPatch{Description: proto.String(tc.name)},
			})
			wantCode(t, err, tc.want)
		})
	}

	got, err := h.tenants.GetTenant(withKey("key-read-a", "read", appA), &tenantv1.GetTenantRequest{TenantId: own.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetDescription() != "own tenant id in upper case" {
		t.Fatalf("description = %q, want the last accepted patch", got.GetDescription())
	}
	for _, untouched := range []struct{ id, key, app string }{
		{other.GetId(), "key-read-a", appA},
		{ofAppB.GetId(), "key-read-b", appB},
	} {
		tn, err := h.tenants.GetTenant(withKey(untouched.key, "read", untouched.app), &tenantv1.GetTenantRequest{TenantId: untouched.id})
		if err != nil {
			t.Fatal(err)
		}
		if tn.GetDescription() != "first" {
			t.Fatalf("tenant %s was patched by a foreign token: %q", untouched.id, tn.GetDescription())
		}
	}
}

func TestGetTenantRefusesAccessTokens(t *testing.T) {
	// Route 5 is an API-key route: a token is refused even for its own tenant.
	h := newHarness(t, serviceToken)
	tn := h.createTenant(t, appA)
	_, err := h.tenants.GetTenant(withToken(h.issue(appA, tn.GetId())), &tenantv1.GetTenantRequest{TenantId: tn.GetId()})
	wantCode(t, err, codes.Unauthenticated)
}

func TestGetMyTenant(t *testing.T) {
	h := newHarness(t, serviceToken)
	tn := h.createTenant(t, appA)
	user := &identityv1.TenantUser{Id: uuid.NewString(), AppId: appA, Email: "ada@example.com", TenantId: true}
	h.identity.users[tn.GetId()] = []*identityv1.TenantUser{user}
	cases := []struct {
		name string
		ctx  context.Context
		want codes.Code
	}{
		{"token of the tenant's user", withToken(h.issue(appA, tn.GetId())), codes.OK},
		{"token of a user without a tenant", withToken(h.issue(appA, "")), codes.NotFound},
		{"token naming a tenant that does not exist", withToken(h.issue(appA, uuid.NewString())), codes.NotFound},
		{"token of another app naming the tenant", withToken(h.issue(appB, tn.GetId())), codes.NotFound},
		{"unknown token", withToken("forged"), codes.Unauthenticated},
		{"API key: me names nobody", withKey("key-read-a", "read", appA), codes.InvalidArgument},
		{"no credentials", context.Background(), codes.Unauthenticated},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := h.tenants.GetMyTenant(tc.ctx, &tenantv1.GetMyTenantRequest{})
			wantCode(t, err, tc.want)
			if tc.want != codes.OK {
				return
			}
			if got.GetId() != tn.GetId() || got.GetName() != "Acme" || got.GetShippingAddress().GetCity() != "Hamburg" {
				t.Fatalf("tenant = %v", got)
			}
			if len(got.GetUsers()) != 1 || !proto.Equal(got.GetUsers()[0], user) {
				t.Fatalf("users = %v", got.GetUsers())
			}
		})
	}
}

func TestCreateTenantForSignUp(t *testing.T) {
	h := newHarness(t, serviceToken)
	cases := []struct {
		name      string
		ctx       context.Context
		req       *tenantv1.CreateTenantForSignUpRequest
		want      codes.Code
		wantField string
	}{
		{"no token", context.Background(), &tenantv1.CreateTenantForSignUpRequest{AppId: appA, Name: "ada@example.com"}, codes.Unauthenticated, ""},
		{"admin token instead of the service token", asAdmin(), &tenantv1.CreateTenantForSignUpRequest{AppId: appA, Name: "ada@example.com"}, codes.Unauthenticated, ""},
		{"access token", withToken(h.issue(appA, "")), &tenantv1.CreateTenantForSignUpRequest{AppId: appA, Name: "ada@example.com"}, codes.Unauthenticated, ""},
		{"app id not a UUID", asService(), &tenantv1.CreateTenantForSignUpRequest{AppId: "app", Name: "ada@example.com"}, codes.InvalidArgument, "appId"},
		{"blank name", asService(), &tenantv1.CreateTenantForSignUpRequest{AppId: appA, Name: "  "}, codes.InvalidArgument, "name"},
		{"valid", asService(), &tenantv1.CreateTenantForSignUpRequest{AppId: appA, Name: "ada@example.com"}, codes.OK, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := h.internal.CreateTenantForSignUp(tc.ctx, tc.req)
			st := wantCode(t, err, tc.want)
			if f := grpcx.FieldOf(st); f != tc.wantField {
				t.Fatalf("field = %q, want %q", f, tc.wantField)
			}
			if tc.want != codes.OK {
				return
			}
			if got.GetId() == "" || got.GetName() != "ada@example.com" || got.GetPaidUnits() != "0" || got.GetFreeUnits() != "0" || got.GetDeleted() {
				t.Fatalf("tenant = %v", got)
			}
			// The new tenant is the app's: its API key reads it.
			read, err := h.tenants.GetTenant(withKey("key-read-a", "read", appA), &tenantv1.GetTenantRequest{TenantId: got.GetId()})
			if err != nil || read.GetName() != "ada@example.com" {
				t.Fatalf("read back %v, %v", read, err)
			}
		})
	}
}

// The adapter tells route 17 which credential called: the token of the tenant's own user may not
// set the server-only fields, the write key may.
func TestServerOnlyTenantFieldsWithTokenAndWriteKey(t *testing.T) {
	h := newHarness(t, serviceToken)
	own := h.createTenant(t, appA)
	token := h.issue(appA, own.GetId())
	patch := &tenantv1.TenantPatch{Name: proto.String("Mine"), IsInvoicePending: proto.Bool(true)}
	_, err := h.tenants.UpdateTenant(withToken(token), &tenantv1.UpdateTenantRequest{TenantId: own.GetId(), Patch: patch})
	wantCode(t, err, codes.PermissionDenied)
	_, err = h.tenants.UpdateTenant(withKey("key-write-a", "write", appA), &tenantv1.UpdateTenantRequest{TenantId: own.GetId(), Patch: patch})
	wantCode(t, err, codes.OK)
	got, err := h.tenants.GetTenant(withKey("key-read-a", "read", appA), &tenantv1.GetTenantRequest{TenantId: own.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	if got.GetName() != "Mine" || !got.GetIsInvoicePending() {
		t.Fatalf("after the write key's patch: %v", got)
	}
}
