package grpcapi_test

import (
	"context"
	"strings"
	"testing"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/berthhq/berth/pkg/authn"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// operatorOf adds a member to the app's project and issues it an operator token (admin API).
func (e *env) operatorOf(t *testing.T, a tenantApp, email string) []string {
	t.Helper()
	m, err := e.admin.AddProjectMember(asAdmin(t), &identityv1.AddProjectMemberRequest{ProjectId: a.app.GetProjectId(), Email: email, Name: "Op"})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := e.admin.IssueOperatorToken(asAdmin(t), &identityv1.IssueOperatorTokenRequest{MemberId: m.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	if tok.GetToken() == "" || tok.GetExpiresAt() == "" {
		t.Fatalf("operator token = %v", tok)
	}
	return []string{authn.MDAuthorization, "Bearer " + tok.GetToken()}
}

func TestOperatorUpdatesAPIKeyOverGRPC(t *testing.T) {
	e := newEnv(t)
	a, b := e.provision(t), e.provision(t)
	key, err := e.admin.CreateApiKey(asAdmin(t), &identityv1.CreateApiKeyRequest{AppId: a.app.GetId(), Type: "write", Name: "server"})
	if err != nil {
		t.Fatal(err)
	}
	asOperator := e.operatorOf(t, a, "op@example.test")
	asStranger := e.operatorOf(t, b, "op@example.test")
	appToken := bearer(e.signedIn(t, a, "grace@example.test"))
	req := func(change func(*identityv1.UpdateApiKeyRequest)) *identityv1.UpdateApiKeyRequest {
		r := &identityv1.UpdateApiKeyRequest{ProjectUuid: a.app.GetProjectId(), AppUuid: a.app.GetId(),
			ApiKeyUuid: key.GetKey().GetUuid(), Name: proto.String("renamed"), Description: proto.String("what it is for")}
		change(r)
		return r
	}
	same := func(*identityv1.UpdateApiKeyRequest) {}

	for _, tc := range []struct {
		name string
		md   []string
		req  *identityv1.UpdateApiKeyRequest
		want codes.Code
	}{
		{"no credentials", nil, req(same), codes.Unauthenticated},
		{"a write API key", []string{authn.MDAPIKey, a.write, authn.MDAPIKeyType, "write", authn.MDClientID, a.app.GetId()}, req(same), codes.Unauthenticated},
		{"an app's access token", appToken, req(same), codes.Unauthenticated},
		{"the admin token", []string{authn.MDAdminToken, adminToken}, req(same), codes.Unauthenticated},
		{"a member of another project", asStranger, req(same), codes.Unauthenticated},
		{"a path id that is not a UUID", asOperator, req(func(r *identityv1.UpdateApiKeyRequest) { r.ApiKeyUuid = "nope" }), codes.InvalidArgument},
		{"an unknown key", asOperator, req(func(r *identityv1.UpdateApiKeyRequest) { r.ApiKeyUuid = uuid.NewString() }), codes.NotFound},
		{"an empty body", asOperator, req(func(r *identityv1.UpdateApiKeyRequest) { r.Name, r.Description = nil, nil }), codes.InvalidArgument},
	} {
		_, err := e.operator.UpdateApiKey(ctxWith(t, tc.md...), tc.req)
		wantCode(t, tc.name, err, tc.want)
	}

	list, err := e.operator.UpdateApiKey(ctxWith(t, asOperator...), req(same))
	if err != nil {
		t.Fatal(err)
	}
	if list.GetKind() != "appApiKeys" || list.GetTotalItems() != 1 || list.GetItemsLength() != 1 || len(list.GetItems()) != 1 {
		t.Fatalf("list = %v", list)
	}
	item := list.GetItems()[0]
	if item.GetUuid() != key.GetKey().GetUuid() || item.GetName() != "renamed" || item.GetType() != "write" ||
		item.GetCreatedAt() != key.GetKey().GetCreatedAt() || item.GetUpdatedAt() == "" {
		t.Errorf("item = %v", item)
	}

	if _, err := e.admin.SetAppEnabled(asAdmin(t), &identityv1.SetAppEnabledRequest{AppId: a.app.GetId(), Enabled: false}); err != nil {
		t.Fatal(err)
	}
	_, err = e.operator.UpdateApiKey(ctxWith(t, asOperator...), req(same))
	wantCode(t, "disabled app", err, codes.PermissionDenied)
}

func TestOperatorAdminRoutesNeedTheAdminToken(t *testing.T) {
	e := newEnv(t)
	a := e.provision(t)
	_, err := e.admin.AddProjectMember(ctxWith(t), &identityv1.AddProjectMemberRequest{ProjectId: a.app.GetProjectId(), Email: "op@example.test", Name: "Op"})
	wantCode(t, "AddProjectMember without the admin token", err, codes.Unauthenticated)
	_, err = e.admin.IssueOperatorToken(ctxWith(t), &identityv1.IssueOperatorTokenRequest{MemberId: uuid.NewString()})
	wantCode(t, "IssueOperatorToken without the admin token", err, codes.Unauthenticated)
	_, err = e.admin.IssueOperatorToken(asAdmin(t), &identityv1.IssueOperatorTokenRequest{MemberId: uuid.NewString()})
	wantCode(t, "IssueOperatorToken for an unknown member", err, codes.NotFound)
	_, err = e.admin.IssueOperatorToken(asAdmin(t), &identityv1.IssueOperatorTokenRequest{MemberId: uuid.NewString(), TtlSeconds: 86401})
	wantCode(t, "IssueOperatorToken beyond 24 h", err, codes.InvalidArgument)
}

// A project member's operator token acts on the project's apps through the admin and app routes
// that admit operators, and on nothing of another project: the same policy every service runs.
func TestAMembersOperatorTokenActsOnlyOnItsOwnProjectsApps(t *testing.T) {
	e := newEnv(t)
	a, b := e.provision(t), e.provision(t)
	asMember := e.operatorOf(t, a, "op@example.test")
	asStranger := e.operatorOf(t, b, "op@example.test")

	for _, tc := range []struct {
		name string
		md   []string
		app  *identityv1.App
		want codes.Code
	}{
		{"the member on an app of their project", asMember, a.app, codes.OK},
		{"the member on another project's app", asMember, b.app, codes.PermissionDenied},
		{"another project's member on this app", asStranger, a.app, codes.PermissionDenied},
		{"an app's access token", bearer(e.signedIn(t, a, "grace@example.test")), a.app, codes.Unauthenticated},
	} {
		_, err := e.admin.ListAppOrigins(ctxWith(t, tc.md...), &identityv1.ListAppOriginsRequest{AppId: tc.app.GetId()})
		wantCode(t, tc.name+": ListAppOrigins", err, tc.want)
		_, err = e.identity.SetAccessStatus(ctxWith(t, tc.md...), &identityv1.SetAccessStatusRequest{AppId: tc.app.GetId(), UserId: a.user.GetId(), AccessStatus: "1"})
		wantCode(t, tc.name+": SetAccessStatus", err, tc.want)
	}

	created, err := e.admin.CreateApp(ctxWith(t, asMember...), &identityv1.CreateAppRequest{ProjectId: a.app.GetProjectId(), Name: "second"})
	if err != nil {
		t.Fatalf("the member creating an app in their project: %v", err)
	}
	if created.GetProjectId() != a.app.GetProjectId() {
		t.Fatalf("created app in project %q, want %q", created.GetProjectId(), a.app.GetProjectId())
	}
	_, err = e.admin.CreateApp(ctxWith(t, asMember...), &identityv1.CreateAppRequest{ProjectId: b.app.GetProjectId(), Name: "intruder"})
	wantCode(t, "the member creating an app in another project", err, codes.PermissionDenied)
	_, err = e.admin.CreateProject(ctxWith(t, asMember...), &identityv1.CreateProjectRequest{Name: "mine"})
	wantCode(t, "the member creating a project (platform-wide)", err, codes.Unauthenticated)
}

// Other services verify operator tokens and find an app's project through identity's internal API.
func TestOtherServicesVerifyOperatorTokensThroughIdentity(t *testing.T) {
	e := newEnv(t)
	a := e.provision(t)
	asMember := e.operatorOf(t, a, "op@example.test")
	svc := func() context.Context { return ctxWith(t, authn.MDServiceToken, serviceToken) }
	raw := strings.TrimPrefix(asMember[1], "Bearer ")

	v, err := e.internal.VerifyOperatorToken(svc(), &identityv1.VerifyOperatorTokenRequest{OperatorToken: raw})
	if err != nil {
		t.Fatal(err)
	}
	if v.GetProjectId() != a.app.GetProjectId() || v.GetMemberId() == "" {
		t.Fatalf("verified = %v", v)
	}
	_, err = e.internal.VerifyOperatorToken(svc(), &identityv1.VerifyOperatorTokenRequest{OperatorToken: raw + "x"})
	wantCode(t, "a tampered operator token", err, codes.Unauthenticated)
	_, err = e.internal.VerifyOperatorToken(svc(), &identityv1.VerifyOperatorTokenRequest{OperatorToken: e.signedIn(t, a, "grace@example.test").GetAccessToken()})
	wantCode(t, "an app's access token", err, codes.Unauthenticated)
	_, err = e.internal.VerifyOperatorToken(ctxWith(t, asMember...), &identityv1.VerifyOperatorTokenRequest{OperatorToken: raw})
	wantCode(t, "asked without the service token", err, codes.Unauthenticated)

	if _, err := e.admin.SetAppEnabled(asAdmin(t), &identityv1.SetAppEnabledRequest{AppId: a.app.GetId(), Enabled: false}); err != nil {
		t.Fatal(err)
	}
	ref, err := e.internal.GetAppProject(svc(), &identityv1.GetAppProjectRequest{AppId: strings.ToUpper(a.app.GetId())})
	if err != nil {
		t.Fatalf("a disabled app's project: %v", err)
	}
	if ref.GetProjectId() != a.app.GetProjectId() || ref.GetAppId() != a.app.GetId() {
		t.Fatalf("app project = %v", ref)
	}
	_, err = e.internal.GetAppProject(svc(), &identityv1.GetAppProjectRequest{AppId: uuid.NewString()})
	wantCode(t, "an absent app", err, codes.NotFound)
	_, err = e.internal.GetAppProject(svc(), &identityv1.GetAppProjectRequest{AppId: "nope"})
	wantCode(t, "not an app id", err, codes.InvalidArgument)
}
