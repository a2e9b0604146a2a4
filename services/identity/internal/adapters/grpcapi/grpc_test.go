package grpcapi_test

import (
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/events"
	"github.com/berthhq/berth/pkg/grpcx"
	"github.com/berthhq/berth/pkg/sealbox"
	"github.com/berthhq/berth/pkg/testkit/grpctest"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
	"github.com/berthhq/berth/services/identity/internal/adapters/grpcapi"
	"github.com/berthhq/berth/services/identity/internal/adapters/memory"
	"github.com/berthhq/berth/services/identity/internal/app"
	"github.com/berthhq/berth/services/identity/internal/domain/password"
)

const (
	adminToken   = "admin-token-for-tests"
	serviceToken = "service-token-for-tests"
)

// env is one identity server behind the real access policy, reached over bufconn.
type env struct {
	identity identityv1.IdentityServiceClient
	operator identityv1.OperatorServiceClient
	internal identityv1.IdentityInternalServiceClient
	admin    identityv1.IdentityAdminServiceClient
	token    identityv1.TokenServiceClient
	login    identityv1.LoginServiceClient
	member   identityv1.MemberServiceClient
	users    identityv1.UserAdminServiceClient
	store    *memory.Store
	mailbox  *mailbox
}

// tenants stands in for the tenant service.
type tenants struct{}

func (tenants) CreateTenant(context.Context, string, string) (string, error) {
	return uuid.NewString(), nil
}

func newEnv(t *testing.T) *env {
	t.Helper()
	box, err := sealbox.New(make([]byte, sealbox.KeySize))
	if err != nil {
		t.Fatal(err)
	}
	store, mb := memory.New(&events.MemoryOutbox{}), &mailbox{}
	svc, err := app.New(app.Config{Store: store, Pepper: []byte("pepper"), Box: box,
		Tenants: tenants{}, Issuer: "test-issuer", PublicURL: "https://berth.test",
		Passwords: password.Params{MemoryKiB: 64, Time: 1, Threads: 1}, Mailer: mb})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := grpcx.NewServer(grpcx.ServerOptions{
		Log:    slog.New(slog.NewTextHandler(io.Discard, nil)),
		Policy: authn.Policy{Keys: svc, Tokens: svc, Operators: svc, Apps: svc, AdminToken: adminToken, ServiceToken: serviceToken},
	})
	if err != nil {
		t.Fatal(err)
	}
	grpcapi.Register(srv, svc)
	conn := grpctest.Serve(t, srv)
	return &env{
		identity: identityv1.NewIdentityServiceClient(conn),
		operator: identityv1.NewOperatorServiceClient(conn),
		internal: identityv1.NewIdentityInternalServiceClient(conn),
		admin:    identityv1.NewIdentityAdminServiceClient(conn),
		token:    identityv1.NewTokenServiceClient(conn),
		login:    identityv1.NewLoginServiceClient(conn),
		member:   identityv1.NewMemberServiceClient(conn),
		users:    identityv1.NewUserAdminServiceClient(conn),
		store:    store,
		mailbox:  mb,
	}
}

func ctxWith(t *testing.T, kv ...string) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return metadata.AppendToOutgoingContext(ctx, kv...)
}

func asAdmin(t *testing.T) context.Context { return ctxWith(t, authn.MDAdminToken, adminToken) }

// tenantApp is an app provisioned through the admin API, with a read and a write key and one user.
type tenantApp struct {
	app         *identityv1.App
	read, write string
	user        *identityv1.User
	tenantID    string
}

func (e *env) provision(t *testing.T) tenantApp {
	t.Helper()
	ctx := asAdmin(t)
	p, err := e.admin.CreateProject(ctx, &identityv1.CreateProjectRequest{Name: "project"})
	if err != nil {
		t.Fatal(err)
	}
	// Optional verification: the sign-ins of these tests are about tokens, not mails.
	a, err := e.admin.CreateApp(ctx, &identityv1.CreateAppRequest{ProjectId: p.GetId(), Name: "app", RedirectUris: []string{"https://app.test/cb"},
		EmailVerification: "optional"})
	if err != nil {
		t.Fatal(err)
	}
	key := func(typ string) string {
		k, err := e.admin.CreateApiKey(ctx, &identityv1.CreateApiKeyRequest{AppId: a.GetId(), Type: typ, Name: typ})
		if err != nil {
			t.Fatal(err)
		}
		return k.GetSecret()
	}
	tenant := uuid.NewString()
	u, err := e.admin.CreateUser(ctx, &identityv1.CreateUserRequest{AppId: a.GetId(), TenantId: tenant, Email: "ada@example.test", Name: "Ada"})
	if err != nil {
		t.Fatal(err)
	}
	return tenantApp{app: a, read: key("read"), write: key("write"), user: u, tenantID: tenant}
}

func (a tenantApp) ctx(t *testing.T, typ string) context.Context {
	key := a.read
	if typ == "write" {
		key = a.write
	}
	return ctxWith(t, authn.MDAPIKey, key, authn.MDAPIKeyType, typ, authn.MDClientID, a.app.GetId())
}

func wantCode(t *testing.T, name string, err error, want codes.Code) {
	t.Helper()
	if got := status.Code(err); got != want {
		t.Errorf("%s: code = %v (%v), want %v", name, got, err, want)
	}
}

func TestAccessPolicyGuardsEveryService(t *testing.T) {
	e := newEnv(t)
	a := e.provision(t)
	get := &identityv1.GetUserRequest{UserId: a.user.GetId()}
	freeze := &identityv1.SetAccessStatusRequest{AppId: a.app.GetId(), UserId: a.user.GetId(), AccessStatus: "0"}
	cases := []struct {
		name string
		call func() error
		want codes.Code
	}{
		{"no credentials", func() error { _, err := e.identity.GetUser(ctxWith(t), get); return err }, codes.Unauthenticated},
		{"read key on a write route", func() error { _, err := e.identity.SetAccessStatus(a.ctx(t, "read"), freeze); return err }, codes.PermissionDenied},
		{"write key on a read route", func() error { _, err := e.identity.GetUser(a.ctx(t, "write"), get); return err }, codes.PermissionDenied},
		{"claimed type differs from the key's", func() error {
			_, err := e.identity.GetUser(ctxWith(t, authn.MDAPIKey, a.write, authn.MDAPIKeyType, "read", authn.MDClientID, a.app.GetId()), get)
			return err
		}, codes.PermissionDenied},
		{"wrong client id", func() error {
			_, err := e.identity.GetUser(ctxWith(t, authn.MDAPIKey, a.read, authn.MDAPIKeyType, "read", authn.MDClientID, uuid.NewString()), get)
			return err
		}, codes.Unauthenticated},
		{"admin API without the admin token", func() error {
			_, err := e.admin.CreateProject(a.ctx(t, "write"), &identityv1.CreateProjectRequest{Name: "x"})
			return err
		}, codes.Unauthenticated},
		{"internal API without the service token", func() error {
			_, err := e.internal.VerifyApiKey(asAdmin(t), &identityv1.VerifyApiKeyRequest{ApiKey: a.read, ClientId: a.app.GetId()})
			return err
		}, codes.Unauthenticated},
		{"read key on user roles", func() error {
			_, err := e.identity.ListUserRoles(a.ctx(t, "read"), &identityv1.ListUserRolesRequest{AppId: a.app.GetId()})
			return err
		}, codes.OK},
		{"write key on user roles", func() error {
			_, err := e.identity.ListUserRoles(a.ctx(t, "write"), &identityv1.ListUserRolesRequest{AppId: a.app.GetId()})
			return err
		}, codes.OK},
	}
	for _, c := range cases {
		wantCode(t, c.name, c.call(), c.want)
	}

	if _, err := e.admin.SetAppEnabled(asAdmin(t), &identityv1.SetAppEnabledRequest{AppId: a.app.GetId(), Enabled: false}); err != nil {
		t.Fatal(err)
	}
	_, err := e.identity.GetUser(a.ctx(t, "read"), get)
	wantCode(t, "disabled app", err, codes.PermissionDenied)
}

func TestAnotherAppsResourcesAreNotFound(t *testing.T) {
	e := newEnv(t)
	a, b := e.provision(t), e.provision(t)
	cases := []struct {
		name string
		call func() error
	}{
		{"user by id", func() error {
			_, err := e.identity.GetUser(b.ctx(t, "read"), &identityv1.GetUserRequest{UserId: a.user.GetId()})
			return err
		}},
		{"roles", func() error {
			_, err := e.identity.ListUserRoles(b.ctx(t, "read"), &identityv1.ListUserRolesRequest{AppId: a.app.GetId()})
			return err
		}},
		{"public key", func() error {
			_, err := e.identity.GetPublicKey(b.ctx(t, "read"), &identityv1.GetPublicKeyRequest{AppId: a.app.GetId()})
			return err
		}},
		{"freeze", func() error {
			_, err := e.identity.SetAccessStatus(b.ctx(t, "write"), &identityv1.SetAccessStatusRequest{AppId: a.app.GetId(), UserId: a.user.GetId(), AccessStatus: "0"})
			return err
		}},
		{"update", func() error {
			_, err := e.identity.UpdateUser(b.ctx(t, "write"), &identityv1.UpdateUserRequest{UserId: a.user.GetId()})
			return err
		}},
	}
	for _, c := range cases {
		wantCode(t, c.name, c.call(), codes.NotFound)
	}
	// Both apps have a user ada@example.test: an email lookup finds the caller's own, never the other's.
	u, err := e.identity.GetUser(b.ctx(t, "read"), &identityv1.GetUserRequest{UserId: "ada@example.test"})
	if err != nil || u.GetId() != b.user.GetId() {
		t.Errorf("user by email: got %v, %v; want b's own user", u.GetId(), err)
	}
}

func TestUserRoutesOverGRPC(t *testing.T) {
	e := newEnv(t)
	a := e.provision(t)

	u, err := e.identity.GetUser(a.ctx(t, "read"), &identityv1.GetUserRequest{UserId: "ADA@example.test"})
	if err != nil {
		t.Fatal(err)
	}
	if u.GetKind() != "user" || u.GetId() != a.user.GetId() || !u.GetTenantId() || u.GetAppId() != a.app.GetId() {
		t.Errorf("GetUser = %v", u)
	}
	_, err = e.identity.GetUser(a.ctx(t, "read"), &identityv1.GetUserRequest{UserId: "nobody"})
	wantCode(t, "malformed user id", err, codes.InvalidArgument)

	body := func(p *identityv1.UserPatch) *identityv1.UpdateUserRequest {
		return &identityv1.UpdateUserRequest{UserId: a.user.GetId(), Body: &identityv1.UserUpdateBody{User: p}}
	}
	bad := "not an email"
	_, err = e.identity.UpdateUser(a.ctx(t, "write"), body(&identityv1.UserPatch{Email: &bad}))
	if st, _ := status.FromError(err); st.Code() != codes.InvalidArgument || grpcx.FieldOf(st) != "user.email" {
		t.Errorf("invalid email: %v (field %q), want InvalidArgument on user.email", err, grpcx.FieldOf(st))
	}
	lang, birth := "DE", "1990-05-01T00:00:00.000Z"
	if _, err := e.identity.UpdateUser(a.ctx(t, "write"), body(&identityv1.UserPatch{Language: &lang, Birthdate: &birth})); err != nil {
		t.Fatal(err)
	}
	freeze := &identityv1.SetAccessStatusRequest{AppId: a.app.GetId(), UserId: a.user.GetId(), AccessStatus: "0"}
	for range 2 { // idempotent
		if _, err := e.identity.SetAccessStatus(a.ctx(t, "write"), freeze); err != nil {
			t.Fatal(err)
		}
	}
	u, err = e.identity.GetUser(a.ctx(t, "read"), &identityv1.GetUserRequest{UserId: a.user.GetId()})
	if err != nil || u.GetLanguage() != "de" || u.GetBirthdate() != "1990-05-01" || !u.GetFreezed() {
		t.Errorf("user after update and freeze = %v, %v", u, err)
	}
	freeze.AccessStatus = "frozen"
	_, err = e.identity.SetAccessStatus(a.ctx(t, "write"), freeze)
	if st, _ := status.FromError(err); st.Code() != codes.InvalidArgument || grpcx.FieldOf(st) != "accessStatus" {
		t.Errorf("bad access status: %v, want InvalidArgument on accessStatus", err)
	}
}

func TestRolesAndPublicKeyOverGRPC(t *testing.T) {
	e := newEnv(t)
	a := e.provision(t)
	for _, name := range []string{"viewer", "admin"} {
		if _, err := e.admin.CreateUserRole(asAdmin(t), &identityv1.CreateUserRoleRequest{AppId: a.app.GetId(), Name: name}); err != nil {
			t.Fatal(err)
		}
	}
	roles, err := e.identity.ListUserRoles(a.ctx(t, "read"), &identityv1.ListUserRolesRequest{AppId: a.app.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	if roles.GetKind() != "userRole" || roles.GetItemsLength() != 2 || roles.GetItems()[0].GetName() != "admin" {
		t.Errorf("ListUserRoles = %v", roles)
	}
	pk, err := e.identity.GetPublicKey(a.ctx(t, "read"), &identityv1.GetPublicKeyRequest{AppId: a.app.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	if pk.GetKind() != "publicKey" || !strings.HasPrefix(pk.GetPublicKey(), "-----BEGIN PUBLIC KEY-----") {
		t.Errorf("GetPublicKey = %v", pk)
	}
	rotated, err := e.admin.RotateAppKey(asAdmin(t), &identityv1.RotateAppKeyRequest{AppId: a.app.GetId()})
	if err != nil || rotated.GetPublicKey() == pk.GetPublicKey() {
		t.Errorf("RotateAppKey = %v, %v; want a new public key", rotated.GetPublicKey(), err)
	}
}

func TestInternalAPIForOtherServices(t *testing.T) {
	e := newEnv(t)
	a := e.provision(t)
	ctx := ctxWith(t, authn.MDServiceToken, serviceToken)
	vk, err := e.internal.VerifyApiKey(ctx, &identityv1.VerifyApiKeyRequest{ApiKey: a.write, ApiKeyType: "read", ClientId: a.app.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	if vk.GetAppId() != a.app.GetId() || vk.GetType() != "write" || !vk.GetAppEnabled() || vk.GetProjectId() != a.app.GetProjectId() {
		t.Errorf("VerifyApiKey = %v (type must be the stored one)", vk)
	}
	_, err = e.internal.VerifyApiKey(ctx, &identityv1.VerifyApiKeyRequest{ApiKey: a.write + "0", ClientId: a.app.GetId()})
	wantCode(t, "bad key", err, codes.Unauthenticated)

	list, err := e.internal.ListTenantUsers(ctx, &identityv1.ListTenantUsersRequest{AppId: a.app.GetId(), TenantId: a.tenantID})
	if err != nil {
		t.Fatal(err)
	}
	if len(list.GetUsers()) != 1 || list.GetUsers()[0].GetId() != a.user.GetId() || !list.GetUsers()[0].GetTenantId() || list.GetUsers()[0].GetLastSignInAt() {
		t.Errorf("ListTenantUsers = %v", list)
	}
}

func TestAdminAPIValidatesInput(t *testing.T) {
	e := newEnv(t)
	a := e.provision(t)
	ctx := asAdmin(t)
	_, err := e.admin.CreateApp(ctx, &identityv1.CreateAppRequest{ProjectId: a.app.GetProjectId(), Name: "x", RedirectUris: []string{"javascript:alert(1)"}})
	wantCode(t, "bad redirect URI", err, codes.InvalidArgument)
	_, err = e.admin.CreateApiKey(ctx, &identityv1.CreateApiKeyRequest{AppId: a.app.GetId(), Type: "owner", Name: "x"})
	wantCode(t, "bad key type", err, codes.InvalidArgument)
	_, err = e.admin.CreateUser(ctx, &identityv1.CreateUserRequest{AppId: a.app.GetId(), Email: "ADA@example.test"})
	wantCode(t, "duplicate email", err, codes.InvalidArgument)
	_, err = e.admin.CreateApp(ctx, &identityv1.CreateAppRequest{ProjectId: uuid.NewString(), Name: "x"})
	wantCode(t, "unknown project", err, codes.NotFound)
}
