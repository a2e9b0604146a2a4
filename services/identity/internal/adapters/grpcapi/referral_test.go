package grpcapi_test

import (
	"context"
	"net/url"
	"regexp"
	"sync"
	"testing"

	"google.golang.org/grpc/codes"

	"github.com/berthhq/berth/pkg/authn"
	"github.com/berthhq/berth/pkg/mail"
	identityv1 "github.com/berthhq/berth/proto/identity/v1"
)

// mailbox captures the messages the service sends.
type mailbox struct {
	mu   sync.Mutex
	sent []mail.Message
}

func (m *mailbox) Send(_ context.Context, msg mail.Message) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.sent = append(m.sent, msg)
	return nil
}

func (m *mailbox) count() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.sent)
}

// lastLink is the invite link of the last message.
func (m *mailbox) lastLink(t *testing.T) url.Values {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.sent) == 0 {
		t.Fatal("no message sent")
	}
	u, err := url.Parse(regexp.MustCompile(`https://\S+`).FindString(m.sent[len(m.sent)-1].Text))
	if err != nil {
		t.Fatal(err)
	}
	return u.Query()
}

func TestReferralInviteOverGRPC(t *testing.T) {
	e := newEnv(t)
	a := e.provision(t)
	grace := e.signedIn(t, a, "grace@example.test")
	linus := e.signedIn(t, a, "linus@example.test")
	graceUser, err := e.identity.GetMe(ctxWith(t, bearer(grace)...), &identityv1.GetMeRequest{})
	if err != nil {
		t.Fatal(err)
	}
	invite := func(userID string) *identityv1.SendReferralInviteRequest {
		return &identityv1.SendReferralInviteRequest{UserId: userID, Email: "friend@example.test", Language: "DE"}
	}
	for _, tc := range []struct {
		name string
		md   []string
		req  *identityv1.SendReferralInviteRequest
		want codes.Code
	}{
		{"the user's own token", bearer(grace), invite(graceUser.GetId()), codes.OK},
		{"another user's token", bearer(linus), invite(graceUser.GetId()), codes.PermissionDenied},
		{"a read key", []string{authn.MDAPIKey, a.read, authn.MDAPIKeyType, "read", authn.MDClientID, a.app.GetId()}, invite(graceUser.GetId()), codes.PermissionDenied},
		{"a write key", []string{authn.MDAPIKey, a.write, authn.MDAPIKeyType, "write", authn.MDClientID, a.app.GetId()}, invite(a.user.GetId()), codes.OK},
		{"no credentials", nil, invite(graceUser.GetId()), codes.Unauthenticated},
		{"an unsupported language", bearer(grace), &identityv1.SendReferralInviteRequest{UserId: graceUser.GetId(), Email: "friend@example.test", Language: "xx"}, codes.InvalidArgument},
	} {
		before := e.mailbox.count()
		_, err := e.identity.SendReferralInvite(ctxWith(t, tc.md...), tc.req)
		wantCode(t, tc.name, err, tc.want)
		if sent := e.mailbox.count() - before; (tc.want == codes.OK) != (sent == 1) {
			t.Errorf("%s: %d messages sent", tc.name, sent)
		}
	}

	// The link's referral code, carried through the login API, records the referrer on sign-up.
	if _, err := e.identity.SendReferralInvite(ctxWith(t, bearer(grace)...), invite(graceUser.GetId())); err != nil {
		t.Fatal(err)
	}
	q := e.mailbox.lastLink(t)
	params := &identityv1.LoginParams{ClientId: q.Get("client_id"), RedirectUri: q.Get("redirect_uri"), State: q.Get("state"), Referral: q.Get("referral")}
	if _, err := e.login.SignUp(ctxWith(t, authn.MDServiceToken, serviceToken),
		&identityv1.SignUpRequest{Params: params, Email: "friend@example.test", Password: signUpPassword}); err != nil {
		t.Fatal(err)
	}
	friend, err := e.store.GetUserByEmail(context.Background(), a.app.GetId(), "friend@example.test")
	if err != nil {
		t.Fatal(err)
	}
	if friend.ReferredBy != graceUser.GetId() {
		t.Errorf("referredBy = %q, want %q", friend.ReferredBy, graceUser.GetId())
	}
}
