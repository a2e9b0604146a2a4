package grpcapi_test

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/berthhq/berth/pkg/authn"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

func TestRoute18WithATokenChangesTheEmailOnlyWhenTheLinkIsConfirmedWhileAWriteKeyChangesItAtOnce(t *testing.T) {
	e := newEnv(t)
	a := e.provision(t)
	tok := e.signedIn(t, a, "grace@example.test")
	asGrace := func() []string { return bearer(tok) }
	me := func() *identityv1.User {
		u, err := e.identity.GetMe(ctxWith(t, asGrace()...), &identityv1.GetMeRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return u
	}
	change := func(ctx context.Context, userID, email string) error {
		_, err := e.identity.UpdateUser(ctx, &identityv1.UpdateUserRequest{UserId: userID,
			Body: &identityv1.UserUpdateBody{User: &identityv1.UserPatch{Email: &email}}})
		return err
	}
	id := me().GetId()
	if err := change(ctxWith(t, asGrace()...), id, "grace.new@example.test"); err != nil {
		t.Fatal(err)
	}
	if got := me().GetEmail(); got != "grace@example.test" {
		t.Fatalf("the token's change applied before confirmation: %q", got)
	}
	link := e.mailbox.lastLink(t).Get("token")

	asService := []string{authn.MDServiceToken, serviceToken}
	if _, err := e.login.ConfirmEmailChange(ctxWith(t), &identityv1.EmailChangeLink{Token: link}); status.Code(err) != codes.Unauthenticated {
		t.Errorf("confirmation without the service token = %v", err)
	}
	described, err := e.login.DescribeEmailChange(ctxWith(t, asService...), &identityv1.EmailChangeLink{Token: link})
	if err != nil || described.GetEmail() != "grace.new@example.test" || described.GetAppName() != "app" {
		t.Fatalf("DescribeEmailChange = %v, %v", described, err)
	}
	if _, err := e.login.ConfirmEmailChange(ctxWith(t, asService...), &identityv1.EmailChangeLink{Token: link}); err != nil {
		t.Fatal(err)
	}
	if u := me(); u.GetEmail() != "grace.new@example.test" || !u.GetEmailVerified() {
		t.Errorf("after confirmation: %q verified %v", u.GetEmail(), u.GetEmailVerified())
	}
	_, err = e.login.ConfirmEmailChange(ctxWith(t, asService...), &identityv1.EmailChangeLink{Token: link})
	wantCode(t, "a used link", err, codes.InvalidArgument)

	if err := change(a.ctx(t, "write"), id, "grace.server@example.test"); err != nil {
		t.Fatal(err)
	}
	if u := me(); u.GetEmail() != "grace.server@example.test" || u.GetEmailVerified() {
		t.Errorf("a write key's change: %q verified %v, want applied at once and unverified", u.GetEmail(), u.GetEmailVerified())
	}
}
