package grpcapi_test

import (
	"strings"
	"testing"

	"github.com/google/uuid"
	"google.golang.org/grpc/codes"

	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

func TestUserAdminSearchesPagesAndDescribesUsersForTheAdminOnly(t *testing.T) {
	e := newEnv(t)
	a, b := e.provision(t), e.provision(t)
	ctx := asAdmin(t)
	for _, email := range []string{"Adam@example.test", "adele@example.test", "bob@example.test"} {
		if _, err := e.admin.CreateUser(ctx, &identityv1.CreateUserRequest{AppId: a.app.GetId(), Email: email}); err != nil {
			t.Fatal(err)
		}
	}
	appID := a.app.GetId()

	first, err := e.users.SearchUsers(ctx, &identityv1.SearchUsersRequest{AppId: appID, Query: "AD", PageSize: 2})
	if err != nil {
		t.Fatal(err)
	}
	next, err := e.users.SearchUsers(ctx, &identityv1.SearchUsersRequest{AppId: appID, Query: "AD", PageSize: 2, After: first.GetNext()})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, u := range append(first.GetUsers(), next.GetUsers()...) {
		got = append(got, u.GetEmail())
	}
	if strings.Join(got, " ") != "ada@example.test Adam@example.test adele@example.test" || first.GetNext() == "" || next.GetNext() != "" {
		t.Errorf("pages = %v (next %q, then %q), want ada, Adam | adele and no third page", got, first.GetNext(), next.GetNext())
	}
	if u := first.GetUsers()[0]; u.GetId() != a.user.GetId() || u.GetTenantId() != a.tenantID || u.GetCreatedAt() == "" {
		t.Errorf("first user = %v, want ada with her tenant and creation time", u)
	}

	other, err := e.users.SearchUsers(ctx, &identityv1.SearchUsersRequest{AppId: b.app.GetId(), Query: "ad"})
	if err != nil || len(other.GetUsers()) != 1 || other.GetUsers()[0].GetId() != b.user.GetId() {
		t.Errorf("the other app's search = %v, %v; want only its own ada", other, err)
	}

	d, err := e.users.GetUserDetail(ctx, &identityv1.UserRefRequest{AppId: appID, UserId: a.user.GetId()})
	if err != nil {
		t.Fatal(err)
	}
	if d.GetProfile().GetEmail() != "ada@example.test" || d.GetTenantId() != a.tenantID || d.GetProfile().GetFreezed() {
		t.Errorf("detail = %v, want ada's profile, tenant and access", d)
	}

	cases := []struct {
		name string
		call func() error
		want codes.Code
	}{
		{"a cursor not made by a search", func() error {
			_, err := e.users.SearchUsers(ctx, &identityv1.SearchUsersRequest{AppId: appID, After: "garbage"})
			return err
		}, codes.InvalidArgument},
		{"page size above 100", func() error {
			_, err := e.users.SearchUsers(ctx, &identityv1.SearchUsersRequest{AppId: appID, PageSize: 101})
			return err
		}, codes.InvalidArgument},
		{"query with a control character", func() error {
			_, err := e.users.SearchUsers(ctx, &identityv1.SearchUsersRequest{AppId: appID, Query: "a\x1b"})
			return err
		}, codes.InvalidArgument},
		{"another app's user", func() error {
			_, err := e.users.GetUserDetail(ctx, &identityv1.UserRefRequest{AppId: b.app.GetId(), UserId: a.user.GetId()})
			return err
		}, codes.NotFound},
		{"a reset for an unknown user", func() error {
			_, err := e.users.SendPasswordReset(ctx, &identityv1.UserRefRequest{AppId: appID, UserId: uuid.NewString()})
			return err
		}, codes.NotFound},
		{"search with the app's write key", func() error {
			_, err := e.users.SearchUsers(a.ctx(t, "write"), &identityv1.SearchUsersRequest{AppId: appID})
			return err
		}, codes.Unauthenticated},
		{"detail without credentials", func() error {
			_, err := e.users.GetUserDetail(ctxWith(t), &identityv1.UserRefRequest{AppId: appID, UserId: a.user.GetId()})
			return err
		}, codes.Unauthenticated},
		{"resend with the app's read key", func() error {
			_, err := e.users.ResendVerification(a.ctx(t, "read"), &identityv1.UserRefRequest{AppId: appID, UserId: a.user.GetId()})
			return err
		}, codes.Unauthenticated},
	}
	for _, c := range cases {
		wantCode(t, c.name, c.call(), c.want)
	}
	if e.mailbox.count() != 0 {
		t.Errorf("%d mails sent by refused calls, want none", e.mailbox.count())
	}
}

func TestUserAdminResendsTheVerificationOfAnUnverifiedUser(t *testing.T) {
	e := newEnv(t)
	a := e.provision(t)
	ctx := asAdmin(t)
	if _, err := e.users.ResendVerification(ctx, &identityv1.UserRefRequest{AppId: a.app.GetId(), UserId: a.user.GetId()}); err != nil {
		t.Fatal(err)
	}
	if e.mailbox.count() != 1 {
		t.Fatalf("%d mails sent, want the verification", e.mailbox.count())
	}
}
