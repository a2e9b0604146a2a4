package grpcapi_test

import (
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
